"""metrics.k8s.io/v1beta1 from an in-process API server scraping a hollow kubelet endpoint (an
in-test runtime), judged by kubectl v1.36.3 `top` and the Python client 36.0.3's metrics helpers;
plus the API's own answers: discovery, GET, 404s, selectors, tables and refused verbs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, AsyncIterator

import kubernetes.client as pyclient
import pytest_asyncio
from kubernetes import utils as pyutils

from tests.apiserver.test_kubelet_proxy_kubectl import Kubectl
from tests.nodes import endpoint_fixture
from tests.nodes.endpoint_fixture import Kubelet

NS = "/api/v1/namespaces/default"
METRICS = "/apis/metrics.k8s.io/v1beta1"


async def ready_node(api: Any, name: str, port: int) -> None:
    status, body, _ = await api.request("POST", "/api/v1/nodes", json={"metadata": {
        "name": name, "labels": {"kubernetes.io/hostname": name, "pool": "cpu"}}})
    assert status == 201, body
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    patch = {"status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname",
                                                                                       "address": name}],
                        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
                        "capacity": resources, "allocatable": resources,
                        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                        "message": "kubelet is posting ready status"}]}}
    status, body, _ = await api.request("PATCH", f"/api/v1/nodes/{name}/status", data=json.dumps(patch),
                                        headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200, body


async def running_pod(api: Any, kubelet: Kubelet, name: str, containers: dict[str, str],
                      labels: dict[str, str] | None = None) -> None:
    """A pod bound to node-a and Running there, each container's usage set by its annotation."""
    annotations = {f"usage.haru.dev/{c}": value for c, value in containers.items()}
    kubelet.node.add(name, list(containers)).annotations = annotations
    spec = {"nodeName": "node-a", "containers": [{"name": c, "image": "busybox"} for c in containers]}
    status, body, _ = await api.request("POST", f"{NS}/pods", json={
        "metadata": {"name": name, "labels": labels or {}, "annotations": annotations}, "spec": spec})
    assert status == 201, body
    await api.request("PATCH", f"{NS}/pods/{name}/status", data=json.dumps({"status": {"phase": "Running"}}),
                      headers={"Content-Type": "application/merge-patch+json"})


@pytest_asyncio.fixture
async def cluster(api: Any, tmp_path: Path) -> AsyncIterator[tuple[Any, Kubelet, Kubectl]]:
    async with endpoint_fixture.running(api.url) as kubelet:
        await ready_node(api, "node-a", kubelet.port)
        await running_pod(api, kubelet, "web", {"app": "cpu=250m,memory=64Mi", "sidecar": "cpu=50m,memory=16Mi"},
                          labels={"app": "web"})
        await running_pod(api, kubelet, "db", {"pg": "cpu=1,memory=1Gi"}, labels={"app": "db"})
        yield api, kubelet, Kubectl(api.url, tmp_path)


async def _until(kubectl: Kubectl, *args: str) -> str:
    """kubectl's output once metrics are there (the first answer may precede the second scrape)."""
    for _ in range(60):
        code, out, err = await kubectl.run(*args)
        if code == 0:
            return out
        assert "metrics not available yet" in err or "Metrics not available" in err, err
        await asyncio.sleep(0.5)
    raise AssertionError(f"kubectl {' '.join(args)} never showed metrics")


async def test_kubectl_top_nodes_shows_the_nodes_usage_against_its_allocatable(cluster: Any) -> None:
    _, _, kubectl = cluster

    out = await _until(kubectl, "top", "nodes")

    header, row = out.splitlines()
    assert header.split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    name, cpu, cpu_pct, memory, memory_pct = row.split()
    # 1300m of annotated pods plus the system's ~100m; 1104Mi plus ~400Mi.
    assert name == "node-a"
    assert 1390 <= int(cpu.rstrip("m")) <= 1410 and cpu_pct == "17%"
    assert 1480 <= int(memory.rstrip("Mi")) <= 1530 and memory_pct == "4%"


async def test_kubectl_top_pods_shows_each_pods_annotated_usage(cluster: Any) -> None:
    _, _, kubectl = cluster

    out = await _until(kubectl, "top", "pods", "-n", "default")

    assert [line.split() for line in out.splitlines()] == [
        ["NAME", "CPU(cores)", "MEMORY(bytes)"], ["db", "1000m", "1024Mi"], ["web", "300m", "80Mi"]]


async def test_kubectl_top_pods_containers_and_a_label_selector(cluster: Any) -> None:
    _, _, kubectl = cluster

    out = await _until(kubectl, "top", "pods", "-n", "default", "--containers", "-l", "app=web")

    assert [line.split() for line in out.splitlines()] == [
        ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"], ["web", "app", "250m", "64Mi"], ["web", "sidecar", "50m", "16Mi"]]


async def test_an_annotation_changed_later_shows_after_the_next_scrape(cluster: Any) -> None:
    _, kubelet, kubectl = cluster
    await _until(kubectl, "top", "pods", "db")
    kubelet.node.by_key[("default", "db")].annotations["usage.haru.dev/pg"] = "cpu=2,memory=2Gi"

    for _ in range(60):
        out = await _until(kubectl, "top", "pods", "db", "--no-headers")
        cpu, memory = out.split()[1:]
        if memory == "2048Mi":
            break
        await asyncio.sleep(0.5)
    # The window straddles the change: the rate is between the old and the new value.
    assert memory == "2048Mi" and 1000 <= int(cpu.rstrip("m")) <= 2000


async def test_the_python_clients_metrics_helpers_return_the_usage(cluster: Any) -> None:
    api, _, kubectl = cluster
    await _until(kubectl, "top", "nodes")
    client = pyclient.ApiClient(pyclient.Configuration(host=api.url))

    nodes = await asyncio.to_thread(pyutils.get_nodes_metrics, client)
    pods = await asyncio.to_thread(pyutils.get_pods_metrics, client, "default", "app=db")
    by_namespace = await asyncio.to_thread(pyutils.get_pods_metrics_in_all_namespaces, client,
                                           ["default", "kube-system"])
    everywhere = await asyncio.to_thread(pyclient.CustomObjectsApi(client).list_cluster_custom_object,
                                         "metrics.k8s.io", "v1beta1", "pods")

    assert (nodes["kind"], nodes["apiVersion"]) == ("NodeMetricsList", "metrics.k8s.io/v1beta1")
    [node] = nodes["items"]
    assert node["metadata"]["name"] == "node-a" and node["metadata"]["labels"]["pool"] == "cpu"
    assert set(node["usage"]) == {"cpu", "memory"} and node["window"].endswith("s")
    assert [(p["metadata"]["name"], p["containers"]) for p in pods["items"]] == [
        ("db", [{"name": "pg", "usage": {"cpu": "1", "memory": "1Gi"}}])]
    assert sorted(p["metadata"]["name"] for p in by_namespace["default"]["items"]) == ["db", "web"]
    assert by_namespace["kube-system"]["items"] == []
    assert sorted(p["metadata"]["name"] for p in everywhere["items"]) == ["db", "web"]


async def test_get_answers_one_object_or_the_404s_metrics_server_answers(cluster: Any) -> None:
    api, kubelet, kubectl = cluster
    await _until(kubectl, "top", "nodes")
    status, body, _ = await api.request("POST", f"{NS}/pods", json={
        "metadata": {"name": "pending"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert status == 201, body

    status, node, _ = await api.request("GET", f"{METRICS}/nodes/node-a")
    assert (status, node["kind"], node["apiVersion"], node["metadata"]["name"]) == (
        200, "NodeMetrics", "metrics.k8s.io/v1beta1", "node-a")
    status, pod, _ = await api.request("GET", f"{METRICS}/namespaces/default/pods/web")
    assert (status, pod["kind"], [c["name"] for c in pod["containers"]]) == (200, "PodMetrics", ["app", "sidecar"])
    status, missing, _ = await api.request("GET", f"{METRICS}/namespaces/default/pods/nope")
    assert (status, missing["reason"], missing["message"]) == (404, "NotFound", 'pods "nope" not found')
    status, unmeasured, _ = await api.request("GET", f"{METRICS}/namespaces/default/pods/pending")
    assert (status, unmeasured["message"]) == (404, 'podmetrics.metrics.k8s.io "default/pending" not found')
    status, no_node, _ = await api.request("GET", f"{METRICS}/nodes/node-z")
    assert (status, no_node["message"]) == (404, 'node "node-z" not found')
    status, watch, _ = await api.request("GET", f"{METRICS}/nodes?watch=true")
    assert (status, watch["reason"]) == (405, "MethodNotAllowed")
    status, selected, _ = await api.request("GET", f"{METRICS}/nodes?labelSelector=pool%3Dgpu")
    assert (status, selected["items"]) == (200, [])


async def test_discovery_and_tables_are_metrics_servers(cluster: Any) -> None:
    api, _, kubectl = cluster

    code, out, err = await kubectl.run("api-resources", "--api-group=metrics.k8s.io", "--no-headers")
    assert code == 0, err
    assert [line.split() for line in out.splitlines()] == [
        ["nodes", "metrics.k8s.io/v1beta1", "false", "NodeMetrics"],
        ["pods", "metrics.k8s.io/v1beta1", "true", "PodMetrics"]]
    await _until(kubectl, "top", "pods")
    code, out, err = await kubectl.run("get", "pods.metrics.k8s.io", "db")
    assert code == 0, err
    assert [line.split() for line in out.splitlines()] == [["NAME", "CPU", "MEMORY", "WINDOW"],
                                                           [out.splitlines()[1].split()[0], "1", "1Gi",
                                                            out.splitlines()[1].split()[3]]]
    assert out.splitlines()[1].split()[0] == "db"


async def test_a_silent_kubelet_does_not_hold_the_answer_and_a_not_ready_node_is_not_scraped(cluster: Any) -> None:
    api, kubelet, kubectl = cluster
    held: list[asyncio.StreamWriter] = []

    async def never_answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)  # accepts the connection, then says nothing

    silent = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    try:
        await ready_node(api, "node-slow", silent.sockets[0].getsockname()[1])
        await ready_node(api, "node-down", kubelet.port)
        patch = {"status": {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]}}
        await api.request("PATCH", "/api/v1/nodes/node-down/status", data=json.dumps(patch),
                          headers={"Content-Type": "application/merge-patch+json"})

        for _ in range(60):
            status, body, _ = await api.request("GET", f"{METRICS}/nodes")
            if body["items"]:
                break
        assert [n["metadata"]["name"] for n in body["items"]] == ["node-a"]
        assert held  # node-slow was asked
    finally:
        for writer in held:
            writer.close()
        silent.close()
        await silent.wait_closed()
