"""StatefulSets and DaemonSets under `haru up`, driven by kubectl v1.36.3.

A StatefulSet of 3 with a claim template on a WaitForFirstConsumer `haru.dev/hostpath` class: the
scheduler sets `volume.kubernetes.io/selected-node`, the volume binder provisions a hostPath volume
pinned there, `rollout status` returns; `set image` rolls it, `rollout history` lists both
revisions, `rollout undo` brings the first back as revision 3. A DaemonSet lands one pod on each
of the 4 hollow nodes (bound by the scheduler) and rolls out again after `set image`. The
kubernetes 36.0.3 client reads both as typed objects. Nothing stands in for scheduler or nodes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client, config

from tests.conftest import Cluster

pytestmark = pytest.mark.slow

STORAGE_CLASS = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
provisioner: haru.dev/hostpath
volumeBindingMode: WaitForFirstConsumer
"""

STATEFUL_SET = """
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        volumeMounts: [{name: www, mountPath: /usr/share/nginx/html}]
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: local
      resources:
        requests: {storage: 1Gi}
"""

DAEMON_SET = """
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: busybox:1.36
"""


def _json(haru: Cluster, *args: str) -> Any:
    return json.loads(haru.kubectl(*args, "-o", "json").stdout)


def test_a_statefulset_with_claims_rolls_out_and_keeps_its_history(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=STORAGE_CLASS)
    haru.kubectl("apply", "-f", "-", input=STATEFUL_SET)
    out = haru.kubectl("rollout", "status", "statefulset/web", "--timeout=120s", timeout=150).stdout
    # The API server defaults rollingUpdate.partition to 0, so kubectl takes its partitioned branch (as on a real cluster).
    assert out.strip().splitlines()[-1] == "partitioned roll out complete: 3 new pods have been updated..."

    lines = haru.kubectl("get", "statefulset", "web").stdout.splitlines()
    assert lines[0].split() == ["NAME", "READY", "AGE"] and lines[1].split()[:2] == ["web", "3/3"]
    pods = {p["metadata"]["name"]: p for p in _json(haru, "get", "pods", "-l", "app=web")["items"]}
    assert sorted(pods) == ["web-0", "web-1", "web-2"]
    claims = {c["metadata"]["name"]: c for c in _json(haru, "get", "pvc")["items"]}
    assert sorted(claims) == ["www-web-0", "www-web-1", "www-web-2"]
    for ordinal in range(3):
        claim, pod = claims[f"www-web-{ordinal}"], pods[f"web-{ordinal}"]
        assert claim["status"]["phase"] == "Bound"
        node = claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
        assert node == pod["spec"]["nodeName"]
        pv = _json(haru, "get", "pv", claim["spec"]["volumeName"])
        terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        assert terms[0]["matchExpressions"][0]["values"] == [node]
    events = haru.kubectl("get", "events", "--field-selector", "involvedObject.name=web", "-o",
                          "jsonpath={range .items[*]}{.reason}: {.message}{'\\n'}{end}").stdout
    assert "SuccessfulCreate: create Pod web-0 in StatefulSet web successful" in events
    assert "SuccessfulCreate: create Claim www-web-0 Pod web-0 in StatefulSet web success" in events

    haru.kubectl("set", "image", "statefulset/web", "nginx=nginx:1.28")
    out = haru.kubectl("rollout", "status", "statefulset/web", "--timeout=120s", timeout=150).stdout
    assert out.strip().splitlines()[-1] == "partitioned roll out complete: 3 new pods have been updated..."
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in _json(haru, "get", "pods", "-l", "app=web")["items"]}
    assert images == {"web-0": "nginx:1.28", "web-1": "nginx:1.28", "web-2": "nginx:1.28"}
    history = haru.kubectl("rollout", "history", "statefulset/web").stdout.splitlines()
    assert history[0] == "statefulset.apps/web " and history[1].split() == ["REVISION", "CHANGE-CAUSE"]
    assert [line.split()[0] for line in history[2:] if line.strip()] == ["1", "2"]
    status = _json(haru, "get", "statefulset", "web")["status"]
    assert status["currentRevision"] == status["updateRevision"] and status["updatedReplicas"] == 3

    # The kubernetes 36.0.3 client reads the status and the history as typed objects.
    apps = client.AppsV1Api(config.new_client_from_config(haru.kubeconfig))
    typed = apps.read_namespaced_stateful_set_status("web", "default").status
    assert (typed.ready_replicas, typed.updated_replicas, typed.current_revision) == (3, 3, status["updateRevision"])
    revisions = apps.list_namespaced_controller_revision("default", label_selector="app=web").items
    assert sorted(r.revision for r in revisions) == [1, 2]
    assert all(r.metadata.owner_references[0].kind == "StatefulSet" for r in revisions)

    # undo applies revision 1's data as a patch; the controller reuses that revision as number 3.
    haru.kubectl("rollout", "undo", "statefulset/web")
    haru.kubectl("rollout", "status", "statefulset/web", "--timeout=120s", timeout=150)
    images = {p["spec"]["containers"][0]["image"] for p in _json(haru, "get", "pods", "-l", "app=web")["items"]}
    assert images == {"nginx:1.27"}
    history = haru.kubectl("rollout", "history", "statefulset/web").stdout.splitlines()
    assert [line.split()[0] for line in history[2:] if line.strip()] == ["2", "3"]


def test_a_daemonset_runs_one_pod_on_each_hollow_node(haru: Cluster) -> None:
    nodes = sorted(n["metadata"]["name"] for n in _json(haru, "get", "nodes")["items"])
    assert len(nodes) == 4
    haru.kubectl("apply", "-f", "-", input=DAEMON_SET)
    out = haru.kubectl("rollout", "status", "daemonset/agent", "--timeout=120s", timeout=150).stdout
    assert out.strip().splitlines()[-1] == 'daemon set "agent" successfully rolled out'
    pods = _json(haru, "get", "pods", "-l", "app=agent")["items"]
    assert sorted(p["spec"]["nodeName"] for p in pods) == nodes
    for pod in pods:
        [term] = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert term["matchFields"] == [{"key": "metadata.name", "operator": "In", "values": [pod["spec"]["nodeName"]]}]
    typed = client.AppsV1Api(config.new_client_from_config(haru.kubeconfig)).read_namespaced_daemon_set("agent", "default")
    assert (typed.status.desired_number_scheduled, typed.status.number_available, typed.status.number_misscheduled) == (4, 4, 0)
    lines = haru.kubectl("get", "daemonset", "agent").stdout.splitlines()
    assert lines[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR", "AGE"]
    assert lines[1].split()[:6] == ["agent", "4", "4", "4", "4", "4"]

    haru.kubectl("set", "image", "daemonset/agent", "agent=busybox:1.37")
    out = haru.kubectl("rollout", "status", "daemonset/agent", "--timeout=120s", timeout=150).stdout
    assert out.strip().splitlines()[-1] == 'daemon set "agent" successfully rolled out'
    pods = _json(haru, "get", "pods", "-l", "app=agent")["items"]
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert sorted(p["spec"]["nodeName"] for p in live) == nodes
    assert {p["spec"]["containers"][0]["image"] for p in live} == {"busybox:1.37"}
    history = haru.kubectl("rollout", "history", "daemonset/agent").stdout.splitlines()
    assert [line.split()[0] for line in history[2:] if line.strip()] == ["1", "2"]
