"""Stopping a node's kubelet (`haru fault node NODE down`) taints it and then evicts its pods.

An embedded cluster (`haru_cluster`) with Leases of 2 s and the node lifecycle controller's grace
period cut to 2 s (its `grace` setting): once the kubelet stops renewing, the Node gets Ready
Unknown and the unreachable NoExecute taint, and the taint-eviction controller deletes the pod that
tolerates it for 1 s only, while the pod that tolerates it for an hour stays.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client

ROOT = Path(__file__).resolve().parents[2]
UNREACHABLE = "node.kubernetes.io/unreachable"
pytestmark = pytest.mark.haru_cluster(nodes=2, lease_duration=2,
                                      controller_settings={"node-lifecycle": {"grace": 2.0, "monitor_period": 0.2}})


def _wait(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _pod(name: str, node: str, seconds: int) -> dict:
    tolerations = [{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
                   for key in (UNREACHABLE, "node.kubernetes.io/not-ready")]
    return {"metadata": {"name": name}, "spec": {"nodeName": node, "tolerations": tolerations,
                                                  "containers": [{"name": "c", "image": "busybox"}]}}


def test_stopping_a_nodes_kubelet_taints_it_and_then_evicts_its_pods(haru_cluster):
    core = client.CoreV1Api(haru_cluster.api_client)
    node = haru_cluster.node_names[0]
    core.create_namespaced_pod("default", _pod("short", node, 1))
    core.create_namespaced_pod("default", _pod("patient", node, 3600))
    for name in ("short", "patient"):
        _wait(lambda: core.read_namespaced_pod(name, "default").status.phase == "Running", f"{name} to run")

    result = subprocess.run([sys.executable, "-m", "cluster.cli", "fault", "--kubeconfig", haru_cluster.kubeconfig,
                             "node", node, "down"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

    def tainted():
        taints = core.read_node(node).spec.taints or []
        return [t for t in taints if t.key == UNREACHABLE and t.effect == "NoExecute"]

    _wait(tainted, "the unreachable NoExecute taint")
    ready = next(c for c in core.read_node(node).status.conditions if c.type == "Ready")
    assert ready.status == "Unknown" and ready.reason == "NodeStatusUnknown"
    _wait(lambda: core.read_namespaced_pod("short", "default").metadata.deletion_timestamp, "the eviction of short")
    evicted = core.read_namespaced_pod("short", "default")
    target = [c for c in evicted.status.conditions or [] if c.type == "DisruptionTarget"]
    assert target and target[0].reason == "DeletionByTaintManager"
    assert core.read_namespaced_pod("patient", "default").metadata.deletion_timestamp is None
    assert haru_cluster.node_names[1] not in [n.metadata.name for n in core.list_node().items if any(
        t.key == UNREACHABLE for t in n.spec.taints or [])]
