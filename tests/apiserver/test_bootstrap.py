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


async def test_the_endpoints_address_is_put_back_after_a_hand_edit(api):
    _, endpoints, _ = await api.request("GET", KEPT[1])
    wanted = endpoints["subsets"]
    endpoints["subsets"] = [{"addresses": [{"ip": "10.9.9.9"}], "ports": [{"name": "https", "port": 1}]}]
    endpoints["metadata"]["labels"]["team"] = "a"
    status, body, _ = await api.request("PUT", KEPT[1], json=endpoints)
    assert status == 200, body
    for _ in range(400):
        _, now, _ = await api.request("GET", KEPT[1])
        if now["subsets"] == wanted:
            break
        await asyncio.sleep(0.025)
    assert now["subsets"] == wanted
    assert now["metadata"]["labels"]["team"] == "a"  # only the fields the server owns are rewritten


async def test_a_restart_on_another_port_moves_the_service_and_its_endpoints(api):
    from apiserver import seed

    server = api.running.server
    await api.running.bootstrap.stop()  # as if this server stopped; the next one listens on 7443
    written = await seed.ensure(server, seed.wanted(server, 7443))
    assert len(written) == 3  # the Service, the Endpoints, the EndpointSlice; namespaces untouched
    _, service, _ = await api.request("GET", KEPT[0])
    _, slice_, _ = await api.request("GET", KEPT[2])
    assert service["spec"]["ports"][0]["targetPort"] == 7443
    assert slice_["ports"][0]["port"] == 7443 and slice_["metadata"]["generation"] == 2
    assert await seed.ensure(server, seed.wanted(server, 7443)) == []
