"""Device-taint eviction against a real API server (in-process, DeviceTaintRules served), no scheduler:
pods are bound by hand and their claims allocated and reserved by writing the status.

A NoExecute taint on the slice's device evicts the pod that does not tolerate it (DisruptionTarget,
then a delete; no kubelet runs, so the pod stays terminating); a toleration without seconds keeps
it; `tolerationSeconds` puts the eviction that far after `timeAdded`; a NoExecute DeviceTaintRule
evicts too and its status says so (`EvictionInProgress`); a `None` rule only previews.
"""

from __future__ import annotations

from typing import Any

import pytest

from client.resources import DEVICETAINTRULES, EVENTS, PODS, RESOURCECLAIMS, RESOURCESLICES
from controllers import timestamps
from controllers.device_taint_eviction import DeviceTaintEvictionController
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("device-taint-eviction",)
FEATURE_GATES = "DRADeviceTaintRules=true"
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"
DRIVER = "gpu.nvidia.com"
TAINT = {"key": "gpu.nvidia.com/unhealthy", "value": "xid-79", "effect": "NoExecute"}


def _controller(cluster: Cluster) -> DeviceTaintEvictionController:
    assert cluster.manager is not None
    [found] = [c for c in cluster.manager.controllers if isinstance(c, DeviceTaintEvictionController)]
    return found


async def _slice(cluster: Cluster, node: str, devices: list[str]) -> dict[str, Any]:
    return await cluster.client.create(RESOURCESLICES, {"metadata": {"name": f"{node}-gpus"}, "spec": {
        "driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": d} for d in devices]}})


async def _taint(cluster: Cluster, node: str, device: str, taint: dict[str, Any]) -> None:
    current = await cluster.client.get(RESOURCESLICES, f"{node}-gpus")
    for entry in current["spec"]["devices"]:
        if entry["name"] == device:
            entry["taints"] = [taint]
    await cluster.client.update(RESOURCESLICES, current)


async def _pod_using(cluster: Cluster, name: str, node: str, device: str,
                     tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A pod bound by hand to `node` whose claim is allocated `device` and reserved for it."""
    request: dict[str, Any] = {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}
    result: dict[str, Any] = {"request": "gpu", "driver": DRIVER, "pool": node, "device": device}
    if tolerations:
        request["exactly"]["tolerations"] = tolerations
        result["tolerations"] = tolerations
    await cluster.client.create(RESOURCECLAIMS, {"metadata": {"name": f"{name}-claim"},
                                                 "spec": {"devices": {"requests": [request]}}}, NS)
    pod = await cluster.client.create(PODS, {"metadata": {"name": name}, "spec": {
        "nodeName": node, "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{name}-claim"}],
        "containers": [{"name": "main", "image": "cuda", "resources": {"claims": [{"name": "gpu"}]}}]}}, NS)
    await cluster.client.patch(RESOURCECLAIMS, f"{name}-claim", {"status": {
        "allocation": {"devices": {"results": [result]}},
        "reservedFor": [{"resource": "pods", "name": name, "uid": pod["metadata"]["uid"]}]}}, NS, subresource="status")
    return pod


async def _evicted(cluster: Cluster, name: str) -> dict[str, Any] | None:
    pod = await cluster.client.get(PODS, name, NS)
    return pod if pod["metadata"].get("deletionTimestamp") else None


def _disruption(pod: dict[str, Any]) -> dict[str, Any]:
    [condition] = [c for c in pod["status"].get("conditions") or [] if c["type"] == "DisruptionTarget"]
    return {k: condition[k] for k in ("status", "reason", "message")}


async def _cached_claim_sees(cluster: Cluster, node: str, device: str, key: str) -> bool:
    """The controller's slice cache has the taint (so a decision it made already counted it)."""
    controller = _controller(cluster)
    found = controller._device(DRIVER, node, device)
    return any(t.get("key") == key for t in (found or {}).get("taints") or [])


async def test_an_untolerated_no_execute_taint_evicts_the_pod_with_disruption_target(cluster: Cluster) -> None:
    await _slice(cluster, "gpu-a", ["gpu-0", "gpu-1"])
    await _pod_using(cluster, "victim", "gpu-a", "gpu-1")
    await _pod_using(cluster, "bystander", "gpu-a", "gpu-0")

    await _taint(cluster, "gpu-a", "gpu-1", TAINT)

    pod = await eventually(lambda: _evicted(cluster, "victim"))
    assert _disruption(pod) == {"status": "True", "reason": "DeletionByDeviceTaintManager",
                                "message": "Device Taint manager: deleting due to NoExecute taint"}
    events = (await cluster.client.list(EVENTS, NS)).get("items") or []
    marked = [e for e in events if e["involvedObject"].get("name") == "victim"]
    assert [(e["reason"], e["message"], e["source"]["component"]) for e in marked] == [
        ("DeviceTaintManagerEviction", "Marking for deletion", "device-taint-eviction")]
    assert not (await cluster.client.get(PODS, "bystander", NS))["metadata"].get("deletionTimestamp")


async def test_a_toleration_without_seconds_keeps_the_pod(cluster: Cluster) -> None:
    await _slice(cluster, "gpu-b", ["gpu-0"])
    pod = await _pod_using(cluster, "tolerant", "gpu-b", "gpu-0",
                           tolerations=[{"key": TAINT["key"], "operator": "Exists", "effect": "NoExecute"}])

    await _taint(cluster, "gpu-b", "gpu-0", TAINT)
    await eventually(lambda: _cached_claim_sees(cluster, "gpu-b", "gpu-0", TAINT["key"]))

    assert _controller(cluster).eviction_for(pod) is None
    assert not (await cluster.client.get(PODS, "tolerant", NS))["metadata"].get("deletionTimestamp")


async def test_toleration_seconds_put_the_eviction_that_long_after_the_taint_was_added(cluster: Cluster) -> None:
    await _slice(cluster, "gpu-c", ["gpu-0"])
    await _pod_using(cluster, "patient", "gpu-c", "gpu-0", tolerations=[
        {"key": TAINT["key"], "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600},
        {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 1}])

    await _taint(cluster, "gpu-c", "gpu-0", {**TAINT, "timeAdded": "2026-01-01T00:00:00Z"})
    await eventually(lambda: _cached_claim_sees(cluster, "gpu-c", "gpu-0", TAINT["key"]))
    pod = await cluster.client.get(PODS, "patient", NS)
    eviction = _controller(cluster).eviction_for(pod)

    assert eviction is not None and eviction.when == timestamps.parse("2026-01-01T00:00:01Z")  # the smaller tolerance wins
    assert _disruption(await eventually(lambda: _evicted(cluster, "patient")))["reason"] == "DeletionByDeviceTaintManager"


async def _condition(cluster: Cluster, rule: str) -> dict[str, Any] | None:
    status = (await cluster.client.get(DEVICETAINTRULES, rule)).get("status") or {}
    return next((c for c in status.get("conditions") or [] if c["type"] == "EvictionInProgress"), None)


async def test_a_no_execute_device_taint_rule_evicts_and_reports_in_its_status(cluster: Cluster) -> None:
    await _slice(cluster, "gpu-d", ["gpu-0", "gpu-1"])
    await _pod_using(cluster, "ruled", "gpu-d", "gpu-0")
    await _pod_using(cluster, "spared", "gpu-d", "gpu-1")

    await cluster.client.create(DEVICETAINTRULES, {"metadata": {"name": "drain-gpu-d-0"}, "spec": {
        "deviceSelector": {"driver": DRIVER, "pool": "gpu-d", "device": "gpu-0"},
        "taint": {"key": "example.com/maintenance", "effect": "NoExecute"}}})

    assert _disruption(await eventually(lambda: _evicted(cluster, "ruled")))["status"] == "True"

    async def completed() -> dict[str, Any] | None:
        condition = await _condition(cluster, "drain-gpu-d-0")
        return condition if condition and condition["reason"] == "Completed" else None

    condition = await eventually(completed, timeout=10)
    assert (condition["status"], condition["message"], condition["observedGeneration"]) == (
        "False", "1 pod evicted since starting the controller.", 1)
    assert not (await cluster.client.get(PODS, "spared", NS))["metadata"].get("deletionTimestamp")


async def test_a_none_rule_previews_what_no_execute_would_evict(cluster: Cluster) -> None:
    await _slice(cluster, "gpu-e", ["gpu-0", "gpu-1", "gpu-2"])
    await _pod_using(cluster, "previewed", "gpu-e", "gpu-2")

    await cluster.client.create(DEVICETAINTRULES, {"metadata": {"name": "preview-gpu-e"}, "spec": {
        "deviceSelector": {"pool": "gpu-e"}, "taint": {"key": "example.com/maintenance", "effect": "None"}}})

    condition = await eventually(lambda: _condition(cluster, "preview-gpu-e"))
    assert (condition["status"], condition["reason"]) == ("False", "NoEffect")
    assert condition["message"] == (
        "3 published devices selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace "
        "if the effect was NoExecute. This information will not be updated again. "
        "Recreate the DeviceTaintRule to trigger an update.")
    assert not (await cluster.client.get(PODS, "previewed", NS))["metadata"].get("deletionTimestamp")


async def test_a_pod_is_evicted_for_a_tainted_device_of_its_extended_resource_claim(cluster: Cluster) -> None:
    # KEP-5004: the scheduler's claim for `nvidia.com/gpu: 1` is named in the pod status only.
    await _slice(cluster, "gpu-f", ["gpu-0"])
    pod = await cluster.client.create(PODS, {"metadata": {"name": "extended"}, "spec": {"nodeName": "gpu-f", "containers": [
        {"name": "main", "image": "cuda", "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]}}, NS)
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "extended", "uid": pod["metadata"]["uid"], "controller": True}
    await cluster.client.create(RESOURCECLAIMS, {"metadata": {
        "name": "extended-extended-resources-x1y2z", "ownerReferences": [owner],
        "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"}}, "spec": {"devices": {"requests": [
            {"name": "container-0-request-0", "exactly": {"deviceClassName": DRIVER, "count": 1}}]}}}, NS)
    await cluster.client.patch(RESOURCECLAIMS, "extended-extended-resources-x1y2z", {"status": {
        "allocation": {"devices": {"results": [
            {"request": "container-0-request-0", "driver": DRIVER, "pool": "gpu-f", "device": "gpu-0"}]}},
        "reservedFor": [{"resource": "pods", "name": "extended", "uid": pod["metadata"]["uid"]}]}}, NS, subresource="status")
    await cluster.client.patch(PODS, "extended", {"status": {"extendedResourceClaimStatus": {
        "resourceClaimName": "extended-extended-resources-x1y2z", "requestMappings": [
            {"containerName": "main", "resourceName": "nvidia.com/gpu", "requestName": "container-0-request-0"}]}}},
        NS, subresource="status")

    await _taint(cluster, "gpu-f", "gpu-0", TAINT)

    assert _disruption(await eventually(lambda: _evicted(cluster, "extended")))["reason"] == "DeletionByDeviceTaintManager"


async def test_a_pending_eviction_is_cancelled_when_the_taint_goes(cluster: Cluster) -> None:
    await _slice(cluster, "gpu-g", ["gpu-0"])
    pod = await _pod_using(cluster, "reprieved", "gpu-g", "gpu-0", tolerations=[
        {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 3600}])
    await _taint(cluster, "gpu-g", "gpu-0", TAINT)
    key = f"{NS}/reprieved"

    async def pending() -> bool:
        return key in _controller(cluster)._pending

    await eventually(pending)
    current = await cluster.client.get(RESOURCESLICES, "gpu-g-gpus")
    current["spec"]["devices"][0].pop("taints")
    await cluster.client.update(RESOURCESLICES, current)

    async def cancelled() -> list[dict[str, Any]]:
        items = (await cluster.client.list(EVENTS, NS)).get("items") or []
        return [e for e in items if e["involvedObject"].get("uid") == pod["metadata"]["uid"]]

    [event] = await eventually(cancelled)
    assert (event["reason"], event["message"]) == ("DeviceTaintManagerEviction", "Cancelling deletion")
    assert not (await cluster.client.get(PODS, "reprieved", NS))["metadata"].get("deletionTimestamp")
