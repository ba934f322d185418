"""Services, disruption budgets and drains under `haru up`, driven by kubectl v1.36.3.

A Deployment exposed by a Service gets EndpointSlices and an Endpoints object holding its pods'
IPs (the hollow nodes give them); `kubectl describe svc` lists them; `kubectl create pdb` shows
ALLOWED DISRUPTIONS; `kubectl drain NODE --ignore-daemonsets --delete-emptydir-data` cordons the
node and evicts its pods through the eviction subresource, never below the budget (a DaemonSet's
pod is left where it is); a
ReplicationController scales with `kubectl scale rc`. The scheduler binds and the hollow nodes run
the pods: nothing here stands in for them.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest
from kubernetes import client, config

from tests.conftest import Cluster

pytestmark = pytest.mark.slow


def _json(haru: Cluster, *args: str) -> Any:
    return json.loads(haru.kubectl(*args, "-o", "json").stdout)


def _until(check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def _running_pods(haru: Cluster) -> list[dict[str, Any]]:
    pods = _json(haru, "get", "pods", "-l", "app=web")["items"]
    return [p for p in pods if not p["metadata"].get("deletionTimestamp") and p["status"].get("podIP")]


def test_a_service_lists_the_deployments_pod_ips(haru: Cluster) -> None:
    haru.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=3", "--port=80")
    haru.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=90)
    haru.kubectl("expose", "deployment", "web", "--port=8080", "--target-port=80")
    ips = sorted(p["status"]["podIP"] for p in _running_pods(haru))
    assert len(ips) == 3

    def sliced() -> list[str] | None:
        slices = _json(haru, "get", "endpointslices", "-l", "kubernetes.io/service-name=web")["items"]
        found = sorted(a for s in slices for e in s.get("endpoints") or [] for a in e["addresses"])
        return found if found == ips else None

    assert _until(sliced) == ips
    lines = haru.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=web").stdout.splitlines()
    assert lines[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    name, kind, ports, listed = lines[1].split()[:4]
    assert name.startswith("web-") and (kind, ports) == ("IPv4", "80") and sorted(listed.split(",")) == ips

    endpoints = haru.kubectl("get", "endpoints", "web").stdout.splitlines()
    assert endpoints[0].split() == ["NAME", "ENDPOINTS", "AGE"]
    assert sorted(endpoints[1].split()[1].split(",")) == sorted(f"{ip}:80" for ip in ips)
    described = haru.kubectl("describe", "svc", "web").stdout
    assert "Endpoints:" in described and all(f"{ip}:80" in described for ip in ips)


def test_a_budget_shows_its_allowed_disruptions(haru: Cluster) -> None:
    haru.kubectl("create", "pdb", "web", "--selector=app=web", "--min-available=2")

    def listed() -> list[str] | None:
        lines = haru.kubectl("get", "pdb", "web").stdout.splitlines()
        return lines if lines[1].split()[1:4] == ["2", "N/A", "1"] else None

    lines = _until(listed)
    assert lines, haru.kubectl("get", "pdb", "web", "-o", "yaml").stdout
    assert lines[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    status = _json(haru, "get", "pdb", "web")["status"]
    assert (status["currentHealthy"], status["desiredHealthy"], status["expectedPods"]) == (3, 2, 3)
    # The `kubernetes` 36.0.3 client reads the status and the slices as typed objects.
    api = config.new_client_from_config(haru.kubeconfig)
    typed = client.PolicyV1Api(api).read_namespaced_pod_disruption_budget_status("web", "default").status
    assert (typed.disruptions_allowed, typed.observed_generation) == (1, 1)
    assert [(c.type, c.status, c.reason) for c in typed.conditions] == [("DisruptionAllowed", "True", "SufficientPods")]
    slices = client.DiscoveryV1Api(api).list_namespaced_endpoint_slice(
        "default", label_selector="kubernetes.io/service-name=web").items
    assert sum(len(s.endpoints) for s in slices) == 3 and all(e.conditions.ready for s in slices for e in s.endpoints)


def _nodes(haru: Cluster) -> list[str]:
    return [n["metadata"]["name"] for n in _json(haru, "get", "nodes")["items"]]


def test_drain_evicts_a_nodes_pods_within_the_budget(haru: Cluster) -> None:
    haru.kubectl("delete", "pdb", "web")
    haru.kubectl("scale", "deployment", "web", "--replicas=8")
    haru.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=90)
    haru.kubectl("create", "pdb", "one-at-a-time", "--selector=app=web", "--max-unavailable=1")
    _until(lambda: _json(haru, "get", "pdb", "one-at-a-time").get("status", {}).get("disruptionsAllowed") == 1)
    node, count = Counter(p["spec"]["nodeName"] for p in _running_pods(haru)).most_common(1)[0]
    haru.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {
            "metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}))
    agent = _until(lambda: [p["metadata"]["name"] for p in _json(haru, "get", "pods", "-l", "app=agent")["items"]
                            if p["spec"].get("nodeName") == node])
    assert agent, "the DaemonSet put no pod on the node"
    assert count >= 2  # 8 pods on 4 nodes
    others = [n for n in _nodes(haru) if n != node]
    # With every other node cordoned the replacements cannot run, so the budget stays spent.
    for other in others:
        haru.kubectl("cordon", other)

    stuck = haru.kubectl("drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=12s",
                         check=False, timeout=60)
    out = stuck.stdout + stuck.stderr
    assert stuck.returncode != 0 and f"node/{node} cordoned" in out
    assert "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget." in out
    assert out.count(" evicted") == 1
    status = _json(haru, "get", "pdb", "one-at-a-time")["status"]
    assert (status["disruptionsAllowed"], status["expectedPods"], status["desiredHealthy"]) == (0, 8, 7)

    for other in others:
        haru.kubectl("uncordon", other)
    drained = haru.kubectl("drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=120s",
                           timeout=150)
    out = drained.stdout + drained.stderr
    assert f"node/{node} drained" in out and out.count(" evicted") == count - 1
    assert f"Warning: ignoring DaemonSet-managed Pods: default/{agent[0]}" in out
    assert haru.kubectl("get", "pod", agent[0], check=False).returncode == 0  # left running
    assert _json(haru, "get", "node", node)["spec"]["unschedulable"] is True

    def settled() -> list[dict[str, Any]] | None:
        pods = [p for p in _running_pods(haru) if any(c["type"] == "Ready" and c["status"] == "True"
                                                      for c in p["status"].get("conditions") or [])]
        return pods if len(pods) == 8 else None

    pods = _until(settled, 90)
    assert pods and all(p["spec"]["nodeName"] != node for p in pods)
    haru.kubectl("uncordon", node)


def test_scale_rc(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "old"},
        "spec": {"replicas": 1, "selector": {"app": "old"}, "template": {
            "metadata": {"labels": {"app": "old"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
    assert haru.kubectl("scale", "rc", "old", "--replicas=3").stdout.strip() == "replicationcontroller/old scaled"

    def ready() -> list[str] | None:
        row = haru.kubectl("get", "rc", "old").stdout.splitlines()[1].split()
        return row if row[1:4] == ["3", "3", "3"] else None

    assert _until(ready, 90)
