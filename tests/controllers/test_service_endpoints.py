"""The EndpointSlice and Endpoints controllers against a real API server in-process: a selector
Service gets a slice and an Endpoints object with its pods' IPs, readiness moves addresses
between ready and not ready, a Service without a selector is left alone, and deleting the Service
takes its Endpoints with it.
"""

from __future__ import annotations

from typing import Any

import pytest

from client import errors
from client.resources import ENDPOINTS, ENDPOINTSLICES, PODS, SERVICES
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("endpointslice", "endpoint")
NS = "default"


async def _pod(cluster: Cluster, name: str, app: str, ip: str, ready: bool) -> None:
    await cluster.client.create(PODS, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"name": "web", "containerPort": 8080}]}]}}, NS)
    await _status(cluster, name, ip, ready)


async def _status(cluster: Cluster, name: str, ip: str, ready: bool) -> None:
    await cluster.client.patch(PODS, name, {"status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                                                       "conditions": [{"type": "Ready", "status": str(ready)}]}},
                               NS, subresource="status")


def _service(name: str, selector: dict[str, str] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"ports": [{"name": "http", "port": 80, "targetPort": "web"}]}
    if selector:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def _slices_of(cluster: Cluster, service: str) -> Any:
    async def check() -> list[dict[str, Any]]:
        return (await cluster.client.list(ENDPOINTSLICES, NS, label_selector=f"kubernetes.io/service-name={service}"))["items"]
    return check


@pytest.mark.asyncio(loop_scope="module")
async def test_a_service_publishes_its_pods(cluster: Cluster) -> None:
    await _pod(cluster, "shop-1", "shop", "10.4.0.1", True)
    await _pod(cluster, "shop-2", "shop", "10.4.0.2", False)
    service = await cluster.client.create(SERVICES, _service("shop", {"app": "shop"}), NS)

    async def both() -> list[dict[str, Any]] | None:
        slices = await _slices_of(cluster, "shop")()
        return slices if slices and len(slices[0].get("endpoints") or []) == 2 else None

    [slice_] = await eventually(both)
    assert slice_["metadata"]["name"].startswith("shop-") and slice_["addressType"] == "IPv4"
    assert slice_["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io"
    assert slice_["metadata"]["ownerReferences"][0]["uid"] == service["metadata"]["uid"]
    assert "endpoints.kubernetes.io/last-change-trigger-time" in slice_["metadata"]["annotations"]
    assert slice_["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
    assert sorted((e["addresses"][0], e["conditions"]["ready"]) for e in slice_["endpoints"]) == \
        [("10.4.0.1", True), ("10.4.0.2", False)]

    async def legacy() -> dict[str, Any] | None:
        try:
            return await cluster.client.get(ENDPOINTS, "shop", NS)
        except errors.APIError:
            return None

    ep = await eventually(legacy)
    assert ep["metadata"]["labels"] == {"endpoints.kubernetes.io/managed-by": "endpoint-controller"}
    [subset] = ep["subsets"]
    assert [a["ip"] for a in subset["addresses"]] == ["10.4.0.1"]
    assert [a["ip"] for a in subset["notReadyAddresses"]] == ["10.4.0.2"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]

    await _status(cluster, "shop-2", "10.4.0.2", True)

    async def all_ready() -> dict[str, Any] | None:
        got = await cluster.client.get(ENDPOINTS, "shop", NS)
        return got if len(got["subsets"][0].get("addresses") or []) == 2 else None

    assert "notReadyAddresses" not in (await eventually(all_ready))["subsets"][0]
    await cluster.client.delete(SERVICES, "shop", NS)

    async def gone() -> bool:
        try:
            await cluster.client.get(ENDPOINTS, "shop", NS)
        except errors.APIError as exc:
            return errors.is_not_found(exc)
        return False

    assert await eventually(gone)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_service_without_a_selector_is_left_alone(cluster: Cluster) -> None:
    await cluster.client.create(SERVICES, _service("external", None), NS)
    mine = await cluster.client.create(ENDPOINTS, {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "external"},
                                            "subsets": [{"addresses": [{"ip": "192.0.2.7"}], "ports": [{"port": 80}]}]}, NS)
    await cluster.client.create(SERVICES, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dns"},
                                           "spec": {"type": "ExternalName", "externalName": "example.com",
                                                    "selector": {"app": "shop"}}}, NS)
    # A selector Service made after them is handled; by then they would have been too.
    await cluster.client.create(SERVICES, _service("marker", {"app": "none"}), NS)
    await eventually(_slices_of(cluster, "marker"))

    assert await _slices_of(cluster, "external")() == [] and await _slices_of(cluster, "dns")() == []
    ep = await cluster.client.get(ENDPOINTS, "external", NS)
    assert ep["metadata"]["resourceVersion"] == mine["metadata"]["resourceVersion"]  # never rewritten
