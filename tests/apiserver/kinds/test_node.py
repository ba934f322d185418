"""Nodes through the API: status kept on create (kubelet and kubemark registration), then only `/status`."""

from __future__ import annotations

from typing import Any

NODES = "/api/v1/nodes"
CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}


def a_node(name: str = "hollow-1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "spec": {"podCIDR": "10.244.1.0/24", "configSource": {"configMap": {
                "name": "kubelet", "namespace": "kube-system", "kubeletConfigKey": "kubelet"}}},
            "status": {"capacity": CAPACITY, "allocatable": CAPACITY,
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.7"}],
                       "config": {"active": {"configMap": {"name": "kubelet"}}}}}


async def test_a_node_is_created_with_its_status_but_without_dynamic_kubelet_config(api):
    status, node, _ = await api.request("POST", NODES, json=a_node())
    assert status == 201, node
    assert node["status"]["capacity"] == CAPACITY and node["status"]["allocatable"] == CAPACITY
    assert node["status"]["addresses"] == [{"type": "InternalIP", "address": "10.0.0.7"}]
    assert "config" not in node["status"] and "configSource" not in node["spec"]
    assert "generation" not in node["metadata"]
    status, got, _ = await api.request("GET", f"{NODES}/hollow-1")
    assert got["status"]["capacity"] == CAPACITY


async def test_a_plain_update_keeps_the_status_and_status_writes_change_it(api):
    status, node, _ = await api.request("POST", NODES, json=a_node())
    node["status"]["capacity"] = {"cpu": "1"}
    node["metadata"]["labels"] = {"zone": "a"}
    status, updated, _ = await api.request("PUT", f"{NODES}/hollow-1", json=node)
    assert status == 200, updated
    assert updated["status"]["capacity"] == CAPACITY and updated["metadata"]["labels"] == {"zone": "a"}
    status, patched, _ = await api.request(
        "PATCH", f"{NODES}/hollow-1/status", json={"status": {"capacity": {"cpu": "8"}}},
        headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200, patched
    assert patched["status"]["capacity"]["cpu"] == "8" and patched["metadata"]["labels"] == {"zone": "a"}
