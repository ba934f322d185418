"""End to end under `haru up`, with the real kubectl: six pods of one app (made by hand, as a
Deployment would make them) with a hard topology spread constraint over the nodes' rack label end
up three per rack, and a pod whose required anti-affinity every node violates stays Pending with
upstream's FailedScheduling message and PodScheduled condition."""

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


def test_spread_then_an_anti_affine_pod_that_cannot_fit(haru: Cluster) -> None:
    nodes = until(lambda: [n for n in get_json(haru, "nodes")["items"]
                           if any(c["type"] == "Ready" and c["status"] == "True"
                                  for c in (n.get("status") or {}).get("conditions") or [])])
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
        out = haru.kubectl("get", "events", "--field-selector",
                           "reason=FailedScheduling,involvedObject.name=loner", "-o", "json").stdout
        return " ".join(e.get("message") or e.get("note") or "" for e in json.loads(out)["items"])

    message = until(failed_scheduling)
    assert message.startswith(f"0/{len(nodes)} nodes are available: {len(nodes)} node(s) didn't match pod "
                              f"anti-affinity rules."), message
    loner = get_json(haru, "pod", "loner")
    assert loner["status"]["phase"] == "Pending" and not loner["spec"].get("nodeName")
    scheduled = [c for c in loner["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
    assert scheduled and scheduled[0]["status"] == "False" and scheduled[0]["reason"] == "Unschedulable", scheduled
    assert scheduled[0]["message"].startswith(f"0/{len(nodes)} nodes are available"), scheduled
