"""DynamicResources' PreBind and PostFilter against the in-process API server: the claim status it
writes (allocation, allocationTimestamp, reservedFor, the finalizer), claims shared by pods,
binding conditions, and the special claim for extended resources with the pod's status mapping."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client import resources as kinds
from client.kubeconfig import Config
from client.rest import RestClient
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import NodeToStatus
from scheduler.framework.status import Code
from scheduler.plugins.dynamic_resources import DynamicResources
from tests.scheduler import fakes
from tests.scheduler.dynamic_resources.objects import device_class, gpu_slice

Obj = dict[str, Any]
NIC = {"bindingConditions": ["nic.haru.dev/attached"], "bindingFailureConditions": ["nic.haru.dev/attach-failed"]}


@pytest.fixture
async def client(api: Any) -> Any:
    rest = RestClient(Config.for_url(api.url))
    try:
        yield rest
    finally:
        await rest.close()


async def make_pod(client: RestClient, name: str, *, claims: list[str] = (), requests: Obj | None = None) -> Obj:  # type: ignore[assignment]
    container: Obj = {"name": "main", "image": "busybox"}
    if requests:
        container["resources"] = {"requests": requests, "limits": requests}
    spec: Obj = {"containers": [container]}
    if claims:
        spec["resourceClaims"] = [{"name": c, "resourceClaimName": c} for c in claims]
    return await client.create(kinds.PODS, {"apiVersion": "v1", "kind": "Pod",
                                            "metadata": {"name": name, "namespace": "default"}, "spec": spec})


async def make_claim(client: RestClient, name: str, class_name: str = "gpu") -> Obj:
    return await client.create(kinds.RESOURCECLAIMS, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": class_name}}]}}})


def plugin_on(client: RestClient, claims: list[Obj], slices: list[Obj], classes: list[Obj],
              timeout: float = 600, node_extra: Obj | None = None) -> DynamicResources:
    handle = fakes.FakeHandle([fakes.node("n1", extra=node_extra)], stores={
        kinds.RESOURCECLAIMS: claims, kinds.RESOURCESLICES: slices, kinds.DEVICECLASSES: classes})
    handle.client = client
    return DynamicResources(handle, {},
                            binding_timeout=timeout)


def schedule(plugin: DynamicResources, pod: Obj) -> CycleState:
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert status is None, status
    node = plugin.handle.snapshot.get("n1")
    assert plugin.filter(state, pod, node) is None
    assert plugin.reserve(state, pod, "n1") is None
    assert plugin.pre_bind_pre_flight(state, pod, "n1") is None
    return state


async def test_pre_bind_writes_allocation_and_reservation_and_two_pods_share_the_claim(client: RestClient) -> None:
    c = await make_claim(client, "shared")
    p1 = await make_pod(client, "p1", claims=["shared"])
    p2 = await make_pod(client, "p2", claims=["shared"])
    plugin = plugin_on(client, [c], [gpu_slice("n1", "gpu-0")], [device_class("gpu")])

    state = schedule(plugin, p1)
    assert await plugin.pre_bind(state, p1, "n1") is None
    stored = await client.get(kinds.RESOURCECLAIMS, "shared", "default")
    assert stored["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    allocation = stored["status"]["allocation"]
    assert allocation["devices"]["results"] == [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n1",
                                                 "device": "gpu-0"}]
    assert allocation["allocationTimestamp"].endswith("Z")
    assert stored["status"]["reservedFor"] == [{"resource": "pods", "name": "p1", "uid": p1["metadata"]["uid"]}]
    assert not plugin.claims.has_pending(c["metadata"]["uid"])

    # The informer has not delivered the write yet: the plugin's own copy stands in for it.
    state = schedule(plugin, p2)
    assert state.read("DynamicResources").allocator is None
    assert await plugin.pre_bind(state, p2, "n1") is None
    stored = await client.get(kinds.RESOURCECLAIMS, "shared", "default")
    assert [r["name"] for r in stored["status"]["reservedFor"]] == ["p1", "p2"]
    assert stored["status"]["allocation"]["devices"] == allocation["devices"]


async def test_pre_bind_waits_for_the_binding_conditions(client: RestClient) -> None:
    c = await make_claim(client, "nic", class_name="nic")
    pod = await make_pod(client, "p", claims=["nic"])
    plugin = plugin_on(client, [c], [gpu_slice("n1", "nic-0", driver="nic.haru.dev", **NIC)],
                       [device_class("nic", driver="nic.haru.dev")])
    state = schedule(plugin, pod)
    waiting = asyncio.create_task(plugin.pre_bind(state, pod, "n1"))

    # Act as the driver: once the allocation is written, report the attach.
    store = plugin.handle.store(kinds.RESOURCECLAIMS)
    while True:
        current = await client.get(kinds.RESOURCECLAIMS, "nic", "default")
        if (current.get("status") or {}).get("allocation"):
            break
        await asyncio.sleep(0.05)
    assert not waiting.done()
    current["status"]["devices"] = [{"driver": "nic.haru.dev", "pool": "n1", "device": "nic-0", "conditions": [
        {"type": "nic.haru.dev/attached", "status": "True", "reason": "Attached", "message": "",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
    store.update(await client.update(kinds.RESOURCECLAIMS, current, subresource="status"))

    assert await waiting is None
    assert ("p", "Normal", "BindingConditionsPending", "waiting for binding conditions for device on node n1") \
        in plugin.handle.events.events


async def report_attach(client: RestClient, plugin: DynamicResources, name: str, condition: str,
                        reason: str = "Attached", message: str = "") -> None:
    """Act as the NIC driver: once the allocation is written, report the attach (and feed the informer)."""
    while not ((current := await client.get(kinds.RESOURCECLAIMS, name, "default")).get("status") or {}).get("allocation"):
        await asyncio.sleep(0.05)
    current["status"]["devices"] = [{"driver": "nic.haru.dev", "pool": "n1", "device": "nic-0", "conditions": [
        {"type": condition, "status": "True", "reason": reason, "message": message,
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
    plugin.handle.store(kinds.RESOURCECLAIMS).update(
        await client.update(kinds.RESOURCECLAIMS, current, subresource="status"))


async def test_binding_conditions_with_extended_resources_a_device_plugin_serves(client: RestClient) -> None:
    c = await make_claim(client, "nic", class_name="nic")
    pod = await make_pod(client, "p", claims=["nic"], requests={"nvidia.com/gpu": "1"})
    plugin = plugin_on(client, [c], [gpu_slice("n1", "nic-0", driver="nic.haru.dev", **NIC)],
                       [device_class("nic", driver="nic.haru.dev"),
                        device_class("gpu.nvidia.com", extended_resource="nvidia.com/gpu")],
                       node_extra={"nvidia.com/gpu": "8"})
    state = schedule(plugin, pod)
    waiting = asyncio.create_task(plugin.pre_bind(state, pod, "n1"))
    await report_attach(client, plugin, "nic", "nic.haru.dev/attached")
    assert await waiting is None
    assert [c["metadata"]["name"] for c in (await client.list(kinds.RESOURCECLAIMS, "default"))["items"]] == ["nic"]
    assert "extendedResourceClaimStatus" not in (await client.get(kinds.PODS, "p", "default")).get("status", {})


async def test_pre_bind_fails_on_a_binding_failure_condition_and_post_filter_deallocates(client: RestClient) -> None:
    c = await make_claim(client, "nic", class_name="nic")
    pod = await make_pod(client, "p", claims=["nic"])
    plugin = plugin_on(client, [c], [gpu_slice("n1", "nic-0", driver="nic.haru.dev", **NIC)],
                       [device_class("nic", driver="nic.haru.dev")])
    state = schedule(plugin, pod)
    waiting = asyncio.create_task(plugin.pre_bind(state, pod, "n1"))
    store = plugin.handle.store(kinds.RESOURCECLAIMS)
    while not ((current := await client.get(kinds.RESOURCECLAIMS, "nic", "default")).get("status") or {}).get("allocation"):
        await asyncio.sleep(0.05)
    current["status"]["devices"] = [{"driver": "nic.haru.dev", "pool": "n1", "device": "nic-0", "conditions": [
        {"type": "nic.haru.dev/attach-failed", "status": "True", "reason": "AttachFailed", "message": "link down",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
    failed = await client.update(kinds.RESOURCECLAIMS, current, subresource="status")
    store.update(failed)

    status = await waiting
    assert status is not None and status.code is Code.ERROR
    assert status.message == 'claim nic binding failed: reason=AttachFailed, message="link down"'

    # The next attempt finds the claim unusable everywhere, and PostFilter frees it.
    retry = CycleState()
    assert plugin.pre_filter(retry, pod, [])[1] is None
    assert plugin.filter(retry, pod, plugin.handle.snapshot.get("n1")).message == \
        "resourceclaim not available on the node"
    _, status = await plugin.post_filter(retry, pod, NodeToStatus())
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.message == "deallocation of ResourceClaim completed"
    stored = await client.get(kinds.RESOURCECLAIMS, "nic", "default")
    assert {"allocation", "reservedFor", "devices"}.isdisjoint(stored.get("status") or {})


async def test_pre_bind_gives_up_after_the_binding_timeout(client: RestClient) -> None:
    c = await make_claim(client, "nic", class_name="nic")
    pod = await make_pod(client, "p", claims=["nic"])
    plugin = plugin_on(client, [c], [gpu_slice("n1", "nic-0", driver="nic.haru.dev", **NIC)],
                       [device_class("nic", driver="nic.haru.dev")], timeout=0.2)
    state = schedule(plugin, pod)
    status = await plugin.pre_bind(state, pod, "n1")
    assert status is not None and status.code is Code.ERROR
    assert status.message in ("claim nic binding timeout", "device binding timeout")


async def test_pre_bind_creates_the_extended_resource_claim_and_maps_it_in_the_pod_status(client: RestClient) -> None:
    pod = await make_pod(client, "p", requests={"cpu": "100m", "nvidia.com/gpu": "1"})
    plugin = plugin_on(client, [], [gpu_slice("n1", "gpu-0")],
                       [device_class("gpu.nvidia.com", extended_resource="nvidia.com/gpu")])
    state = schedule(plugin, pod)
    assert await plugin.pre_bind(state, pod, "n1") is None

    claims = (await client.list(kinds.RESOURCECLAIMS, "default"))["items"]
    assert len(claims) == 1
    special = claims[0]
    meta = special["metadata"]
    assert meta["name"].startswith("p-extended-resources-") and len(meta["name"]) > len("p-extended-resources-")
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": pod["metadata"]["uid"],
                                        "controller": True, "blockOwnerDeletion": True}]
    assert "resource.kubernetes.io/pod-claim-name" not in meta["annotations"]
    assert special["spec"]["devices"]["requests"] == [{"name": "container-0-request-1", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]
    assert special["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    assert special["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": pod["metadata"]["uid"]}]

    stored_pod = await client.get(kinds.PODS, "p", "default")
    assert stored_pod["status"]["extendedResourceClaimStatus"] == {
        "resourceClaimName": meta["name"],
        "requestMappings": [{"containerName": "main", "resourceName": "nvidia.com/gpu",
                             "requestName": "container-0-request-1"}]}


async def test_unreserve_deletes_a_created_extended_resource_claim(client: RestClient) -> None:
    pod = await make_pod(client, "p", requests={"nvidia.com/gpu": "1"})
    plugin = plugin_on(client, [], [gpu_slice("n1", "gpu-0")],
                       [device_class("gpu.nvidia.com", extended_resource="nvidia.com/gpu")])
    state = schedule(plugin, pod)
    assert await plugin.pre_bind(state, pod, "n1") is None
    plugin.unreserve(state, pod, "n1")
    await asyncio.gather(*plugin._background)
    assert (await client.list(kinds.RESOURCECLAIMS, "default"))["items"] == []


async def test_pre_bind_pre_flight_skips_pods_without_claims(client: RestClient) -> None:
    plugin = plugin_on(client, [], [], [device_class("gpu")])
    pod = fakes.pod("plain")
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert status is not None and status.code is Code.SKIP
    assert plugin.pre_bind_pre_flight(state, pod, "n1").code is Code.SKIP


async def test_unreserve_takes_the_pod_out_of_reserved_for_and_keeps_the_other_consumer(client: RestClient) -> None:
    c = await make_claim(client, "shared")
    p1 = await make_pod(client, "p1", claims=["shared"])
    p2 = await make_pod(client, "p2", claims=["shared"])
    plugin = plugin_on(client, [c], [gpu_slice("n1", "gpu-0")], [device_class("gpu")])
    for pod in (p1, p2):
        state = schedule(plugin, pod)
        assert await plugin.pre_bind(state, pod, "n1") is None
    plugin.unreserve(state, p2, "n1")  # p2's binding failed after PreBind
    await asyncio.gather(*plugin._background)
    stored = await client.get(kinds.RESOURCECLAIMS, "shared", "default")
    assert [r["name"] for r in stored["status"]["reservedFor"]] == ["p1"]
    assert stored["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"


async def test_post_filter_deletes_a_special_claim_left_from_an_earlier_attempt(client: RestClient) -> None:
    pod = await make_pod(client, "p", requests={"nvidia.com/gpu": "1"})
    plugin = plugin_on(client, [], [gpu_slice("n1", "gpu-0")],
                       [device_class("gpu.nvidia.com", extended_resource="nvidia.com/gpu")])
    state = schedule(plugin, pod)
    assert await plugin.pre_bind(state, pod, "n1") is None
    (left,) = (await client.list(kinds.RESOURCECLAIMS, "default"))["items"]
    plugin.handle.store(kinds.RESOURCECLAIMS).update(left)

    retry = CycleState()  # the pod came back (its binding failed): the claim is found, not remade
    assert plugin.pre_filter(retry, pod, [])[1] is None
    assert plugin.filter(retry, pod, plugin.handle.snapshot.get("n1")).message == \
        "cannot schedule extended resource claim"
    _, status = await plugin.post_filter(retry, pod, NodeToStatus())
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.message == "deletion of ResourceClaim completed"
    assert (await client.list(kinds.RESOURCECLAIMS, "default"))["items"] == []
