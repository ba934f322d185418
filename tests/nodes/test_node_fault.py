"""`haru fault node NODE down|up` against an embedded cluster (the `haru_cluster` fixture).

Down: the kubelet's Lease renewals stop (another node's Lease renews twice meanwhile), its
endpoint refuses connections and a pod bound to it gets no status; up: the Lease renews again
and the pod runs. Bad input: an unknown node is refused with exit 1 and nothing changes.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.haru_cluster(nodes=2, lease_duration=2)  # renewed every 0.5 s


def _haru(kubeconfig: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cluster.cli", "fault", "--kubeconfig", kubeconfig, *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def _renew_time(coord: client.CoordinationV1Api, node: str):
    return coord.read_namespaced_lease(node, "kube-node-lease").spec.renew_time


def _wait(predicate, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _renewals_of(coord, node: str, count: int) -> None:
    seen = {_renew_time(coord, node)}
    _wait(lambda: seen.add(_renew_time(coord, node)) or len(seen) > count, f"{node}'s lease to renew {count}x")


def _refused(address: str, port: int) -> bool:
    try:
        socket.create_connection((address, port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def _pod(name: str, node: str) -> dict:
    return {"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}}


def test_down_stops_the_kubelet_and_up_brings_it_back(haru_cluster):
    down, other = haru_cluster.node_names
    core = client.CoreV1Api(haru_cluster.api_client)
    coord = client.CoordinationV1Api(haru_cluster.api_client)
    node = core.read_node(down)
    address = next(a.address for a in node.status.addresses if a.type == "InternalIP")
    port = node.status.daemon_endpoints.kubelet_endpoint.port
    assert not _refused(address, port)

    result = _haru(haru_cluster.kubeconfig, "node", down, "down")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"node/{down} kubelet stopped (no more Lease renewals or status updates)"
    _wait(lambda: _refused(address, port), "the kubelet endpoint to close")
    frozen = _renew_time(coord, down)
    core.create_namespaced_pod("default", _pod("on-the-dead-node", down))
    core.create_namespaced_pod("default", _pod("on-the-live-node", other))
    _wait(lambda: core.read_namespaced_pod("on-the-live-node", "default").status.phase == "Running",
          "the live node's pod to run")
    _renewals_of(coord, other, 2)
    assert _renew_time(coord, down) == frozen
    dead_pod = core.read_namespaced_pod("on-the-dead-node", "default")
    assert dead_pod.status.phase == "Pending" and not dead_pod.status.container_statuses

    result = _haru(haru_cluster.kubeconfig, "node", down, "up")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"node/{down} kubelet started"
    _wait(lambda: _renew_time(coord, down) != frozen, "the Lease to renew again")
    _wait(lambda: core.read_namespaced_pod("on-the-dead-node", "default").status.phase == "Running",
          "the pod to run once the kubelet is back")
    assert not _refused(address, port)
    assert "haru.dev/kubelet-fault" not in (core.read_node(down).metadata.labels or {})


def test_an_unknown_node_is_refused(haru_cluster):
    result = _haru(haru_cluster.kubeconfig, "node", "no-such-node", "down")
    assert result.returncode == 1
    assert result.stderr.strip() == 'error: node "no-such-node" not found'
    labelled = client.CoreV1Api(haru_cluster.api_client).list_node(label_selector="haru.dev/kubelet-fault").items
    assert labelled == []
    bad = _haru(haru_cluster.kubeconfig, "node", haru_cluster.node_names[0], "sideways")
    assert bad.returncode == 2 and "invalid choice: 'sideways'" in bad.stderr
