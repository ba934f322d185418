"""End to end under `haru up`, with the real kubectl: six pods of one app (made by hand, as a
Deployment would make them) with a hard topology spread constraint over the nodes' rack label end
up three per rack; a pod whose required anti-affinity every node violates stays Pending with
upstream's FailedScheduling message and PodScheduled condition; a WaitForFirstConsumer claim binds
to the local PV of the node its pod lands on, and a pod with a missing claim gets the real message."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Cluster

pytestmark = pytest.mark.slow

RACK = "topology.kubernetes.io/rack"
DEFAULT_NODES = 4
Obj = dict[str, Any]
REPLICAS = 6

SPREAD_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: web-{i}
  labels: {{app: web}}
spec:
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: {rack}
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchLabels: {{app: web}}
  containers:
  - name: app
    image: busybox
    command: ["sleep", "3600"]
"""

LONER = """
apiVersion: v1
kind: Pod
metadata:
  name: loner
  labels: {app: loner}
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: topology.kubernetes.io/rack
        labelSelector:
          matchLabels: {app: web}
  containers:
  - name: app
    image: busybox
    command: ["sleep", "3600"]
"""


def until(check: Callable[[], Any], bound: float = 90.0) -> Any:
    """Ask `check` again until it answers something truthy or the bound passes; return the last answer."""
    deadline = time.monotonic() + bound
    while True:
        got = check()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.25)


def get_json(haru: Cluster, *args: str) -> Any:
    return json.loads(haru.kubectl("get", *args, "-o", "json").stdout)


def ready_nodes(haru: Cluster) -> list[Obj]:
    """The nodes once all of haru up's default shape (4 nodes in 2 racks) are Ready."""
    def ready() -> list[Obj]:
        nodes = [n for n in get_json(haru, "nodes")["items"]
                 if any(c["type"] == "Ready" and c["status"] == "True" for c in (n.get("status") or {}).get("conditions") or [])]
        return nodes if len(nodes) == DEFAULT_NODES else []
    return until(ready)


def test_spread_then_an_anti_affine_pod_that_cannot_fit(haru: Cluster) -> None:
    nodes = ready_nodes(haru)
    assert nodes, get_json(haru, "nodes")
    racks = {n["metadata"]["name"]: n["metadata"]["labels"][RACK] for n in nodes}
    assert len(set(racks.values())) == 2, racks

    manifest = "---".join(SPREAD_POD.format(i=i, rack=RACK) for i in range(REPLICAS))
    haru.kubectl("apply", "-f", "-", input=manifest)

    def placed() -> dict[str, str]:
        pods = get_json(haru, "pods", "-l", "app=web")["items"]
        where = {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods}
        return where if len(where) == REPLICAS and all(where.values()) else {}

    where = until(placed)
    assert where, get_json(haru, "pods", "-l", "app=web")
    per_rack = Counter(racks[n] for n in where.values())
    assert sorted(per_rack.values()) == [REPLICAS // 2, REPLICAS // 2], per_rack
    # Both racks hold web pods, so the loner's rack-wide anti-affinity rules every node out.

    haru.kubectl("apply", "-f", "-", input=LONER)

    def failed_scheduling() -> str:
        # The scheduler records events.k8s.io/v1 Events, as kube-scheduler does.
        out = haru.kubectl("get", "events.events.k8s.io", "--field-selector",
                           "reason=FailedScheduling,regarding.name=loner", "-o", "json").stdout
        return " ".join(e.get("note") or "" for e in json.loads(out)["items"])

    message = until(failed_scheduling)
    assert message.startswith(f"0/{len(nodes)} nodes are available: {len(nodes)} node(s) didn't match pod "
                              f"anti-affinity rules."), message
    loner = get_json(haru, "pod", "loner")
    assert loner["status"]["phase"] == "Pending" and not loner["spec"].get("nodeName")
    scheduled = [c for c in loner["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
    assert scheduled and scheduled[0]["status"] == "False" and scheduled[0]["reason"] == "Unschedulable", scheduled
    assert scheduled[0]["message"].startswith(f"0/{len(nodes)} nodes are available"), scheduled


LOCAL_VOLUME = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: local}}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: local-{node}}}
spec:
  capacity: {{storage: 10Gi}}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {{path: /mnt/disk}}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {{key: kubernetes.io/hostname, operator: In, values: [{node}]}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  resources: {{requests: {{storage: 5Gi}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: db}}
spec:
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: data}}}}]
  containers: [{{name: app, image: busybox, command: ["sleep", "3600"]}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: orphan}}
spec:
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: missing}}}}]
  containers: [{{name: app, image: busybox, command: ["sleep", "3600"]}}]
"""


def test_a_wait_for_first_consumer_claim_binds_to_the_local_pv_of_the_chosen_node(haru: Cluster) -> None:
    nodes = ready_nodes(haru)
    assert nodes, get_json(haru, "nodes")
    target = nodes[-1]["metadata"]["name"]
    haru.kubectl("apply", "-f", "-", input=LOCAL_VOLUME.format(node=target))

    def running() -> str:
        got = get_json(haru, "pod", "db")
        return got["spec"].get("nodeName", "") if got["status"].get("phase") == "Running" else ""

    assert until(running) == target
    claim = get_json(haru, "pvc", "data")
    assert claim["spec"]["volumeName"] == f"local-{target}"
    assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert claim["status"]["phase"] == "Bound"
    volume = get_json(haru, "pv", f"local-{target}")
    assert (volume["spec"]["claimRef"]["name"], volume["spec"]["claimRef"]["uid"]) == ("data", claim["metadata"]["uid"])
    assert volume["status"]["phase"] == "Bound"

    def failed_scheduling() -> str:
        out = haru.kubectl("get", "events.events.k8s.io", "--field-selector",
                           "reason=FailedScheduling,regarding.name=orphan", "-o", "json").stdout
        return " ".join(e.get("note") or "" for e in json.loads(out)["items"])

    message = until(failed_scheduling)
    assert message.startswith(f'0/{len(nodes)} nodes are available: persistentvolumeclaim "missing" not found.'), message
