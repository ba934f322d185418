"""The objects every cluster has: refused deletes, and recreation when they disappear anyway."""

from __future__ import annotations

import asyncio

import pytest

NS = "/api/v1/namespaces"
KEPT = ["/api/v1/namespaces/default/services/kubernetes", "/api/v1/namespaces/default/endpoints/kubernetes",
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"]


async def _wait_for(api, path: str) -> dict:
    for _ in range(400):  # the bootstrap reacts to the DELETED event; this only bounds a broken run
        status, body, _ = await api.request("GET", path)
        if status == 200:
            return body
        await asyncio.sleep(0.025)
    raise AssertionError(f"{path} was not recreated")


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
async def test_the_immortal_namespaces_may_not_be_deleted(api, name):
    for query in ("", "?dryRun=All"):
        status, body, _ = await api.request("DELETE", f"{NS}/{name}{query}")
        assert status == 403, body
        assert body["reason"] == "Forbidden"
        assert body["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        assert body["details"] == {"name": name, "kind": "namespaces"}
    status, ns, _ = await api.request("GET", f"{NS}/{name}")
    assert status == 200 and "deletionTimestamp" not in ns["metadata"]


async def test_the_kubernetes_service_and_its_endpoints_come_back(api):
    for path in KEPT:
        _, before, _ = await api.request("GET", path)
        status, body, _ = await api.request("DELETE", path)
        assert status == 200, body
        after = await _wait_for(api, path)
        assert after["metadata"]["uid"] != before["metadata"]["uid"]
        assert after.get("spec", {}).get("clusterIP", "10.96.0.1") == "10.96.0.1"
    _, slice_, _ = await api.request("GET", KEPT[2])
    assert slice_["ports"] == [{"name": "https", "port": api.running.port, "protocol": "TCP"}]
    assert slice_["endpoints"] == [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}]
    assert slice_["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    _, endpoints, _ = await api.request("GET", KEPT[1])
    assert endpoints["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}],
                                     "ports": [{"name": "https", "port": api.running.port, "protocol": "TCP"}]}]


async def test_kube_node_lease_comes_back_once_it_is_really_gone(api):
    _, before, _ = await api.request("GET", f"{NS}/kube-node-lease")
    status, body, _ = await api.request("DELETE", f"{NS}/kube-node-lease")
    assert status == 200 and body["status"]["phase"] == "Terminating"
    # what the namespace controller does once the namespace is empty
    body["spec"]["finalizers"] = []
    status, body, _ = await api.request("PUT", f"{NS}/kube-node-lease/finalize", json=body)
    assert status == 200, body
    ns = await _wait_for(api, f"{NS}/kube-node-lease")
    assert ns["metadata"]["uid"] != before["metadata"]["uid"] and ns["status"] == {"phase": "Active"}


async def test_deleting_other_namespaces_still_works(api):
    status, _, _ = await api.request("POST", NS, json={"metadata": {"name": "team-a"}})
    assert status == 201
    status, body, _ = await api.request("DELETE", f"{NS}/team-a")
    assert status == 200 and body["status"]["phase"] == "Terminating"
