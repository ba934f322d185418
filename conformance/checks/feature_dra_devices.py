"""DRA device-side features of 1.36: device taints and DeviceTaintRules (KEP-5055), extended
resources served by DRA (KEP-5004), binding conditions (KEP-5007), device status in the claim
(KEP-4817) and device health in the pod status (KEP-4680). The health check and the "runs" check
use a device of the cluster's own DRA driver (one, released at the end); the others publish their
own slice."""

from __future__ import annotations

from datetime import datetime, timezone

from client import errors
from conformance.checks import _conffeatures_support as s
from conformance.context import Context
from conformance.registry import feature

AREA = "dra"
TAINT_KEY = "conformance.haru.dev/broken"


def tainted(name: str, effect: str) -> dict[str, object]:
    return {"name": name, "taints": [{"key": TAINT_KEY, "value": "yes", "effect": effect}]}


# Device taints ------------------------------------------------------------------------------------

@feature("[Feature:DRADeviceTaints] a NoSchedule-tainted device is not allocated to a claim that does not "
         "tolerate it", area=AREA, kep="KEP-5055", gates=("DRADeviceTaints",))
async def tainted_device_avoided(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [tainted("bad", "NoSchedule"), {"name": "good"}])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("d", cls)])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    assert s.devices_of(got) == ["good"], f"the tainted device was allocated: {s.devices_of(got)}"
    two = await s.claim(ctx, [s.exactly("d", cls, count=2)])
    p2 = await s.pod(ctx, claims={"dev": two["metadata"]["name"]})
    await s.unschedulable(ctx, p2["metadata"]["name"])


@feature("[Feature:DRADeviceTaints] a request that tolerates the taint gets the tainted device, and the result "
         "records the toleration", area=AREA, kep="KEP-5055", gates=("DRADeviceTaints",))
async def tainted_device_tolerated(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [tainted("bad", "NoSchedule")])
    cls = await s.own_class(ctx)
    toleration = {"key": TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
    claim = await s.claim(ctx, [s.exactly("d", cls, tolerations=[toleration])])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    [result] = s.results(got)
    assert result["device"] == "bad"
    assert [t.get("key") for t in result.get("tolerations") or []] == [TAINT_KEY], \
        f"the result should carry the toleration: {result}"


@feature("[Feature:DRADeviceTaints] a slice's device taint gets its timeAdded set by the server",
         area=AREA, kep="KEP-5055", gates=("DRADeviceTaints",))
async def taint_time_added(ctx: Context) -> None:
    node = await s.a_node(ctx)
    created = await s.own_slice(ctx, node, [tainted("bad", "NoSchedule")])
    [taint] = created["spec"]["devices"][0]["taints"]
    assert taint.get("timeAdded"), f"timeAdded is set automatically: {taint}"


async def rule(ctx: Context, device: str, effect: str) -> dict[str, object]:
    return await s.make(ctx, {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule",
                              "metadata": {"name": f"{ctx.namespace}-{device}"},
                              "spec": {"deviceSelector": {"driver": s.driver_of(ctx), "device": device},
                                       "taint": {"key": TAINT_KEY, "value": "rule", "effect": effect}}})


@feature("[Feature:DRADeviceTaintRules] a DeviceTaintRule's NoSchedule taint keeps the device from new claims",
         area=AREA, kep="KEP-5055", gates=("DRADeviceTaints", "DRADeviceTaintRules"))
async def taint_rule_no_schedule(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [{"name": "a"}, {"name": "b"}])
    await rule(ctx, "a", "NoSchedule")
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("d", cls)])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    assert s.devices_of(got) == ["b"], f"device a is tainted by the rule, got {s.devices_of(got)}"


@feature("[Feature:DRADeviceTaintRules] a DeviceTaintRule's NoExecute taint evicts the pod using the device",
         area=AREA, kep="KEP-5055", gates=("DRADeviceTaints", "DRADeviceTaintRules"))
async def taint_rule_no_execute_evicts(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [{"name": "a"}])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("d", cls)])
    created = await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    name = created["metadata"]["name"]
    await s.scheduled(ctx, name)
    await rule(ctx, "a", "NoExecute")

    async def evicted() -> bool:
        try:
            found = await s.get_pod(ctx, name)
        except errors.APIError as err:
            return errors.is_not_found(err)
        return bool(found["metadata"].get("deletionTimestamp"))
    await ctx.eventually(evicted, what="the pod to be evicted by the NoExecute rule")


@feature("[Feature:DRADeviceTaints] a NoExecute toleration with tolerationSeconds is kept in the allocation "
         "result", area=AREA, kep="KEP-5055", gates=("DRADeviceTaints",))
async def no_execute_toleration_seconds(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [tainted("bad", "NoExecute")])
    cls = await s.own_class(ctx)
    toleration = {"key": TAINT_KEY, "operator": "Equal", "value": "yes", "effect": "NoExecute",
                  "tolerationSeconds": 3600}
    claim = await s.claim(ctx, [s.exactly("d", cls, tolerations=[toleration])])
    created = await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    [kept] = s.results(got)[0].get("tolerations") or [{}]
    assert kept.get("tolerationSeconds") == 3600, f"the result's toleration: {kept}"
    found = await s.get_pod(ctx, created["metadata"]["name"])
    assert not found["metadata"].get("deletionTimestamp"), "a pod tolerating for an hour was evicted at once"


# Extended resources -------------------------------------------------------------------------------

async def extended_pod(ctx: Context, resource: str) -> tuple[str, dict[str, object]]:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [{"name": "a"}, {"name": "b"}])
    created = await s.pod(ctx, requests={resource: "1"})
    name = created["metadata"]["name"]
    await s.scheduled(ctx, name)

    async def status() -> dict[str, object] | None:
        return ((await s.get_pod(ctx, name)).get("status") or {}).get("extendedResourceClaimStatus")
    return name, await ctx.eventually(status, what="status.extendedResourceClaimStatus")


@feature("[Feature:DRAExtendedResource] an extended resource named by a DeviceClass is served through a "
         "special claim mapped in the pod status", area=AREA, kep="KEP-5004", gates=("DRAExtendedResource",))
async def extended_resource_claim(ctx: Context) -> None:
    resource = f"{s.driver_of(ctx)}/dev"
    await s.own_class(ctx, extra={"extendedResourceName": resource})
    name, status = await extended_pod(ctx, resource)
    assert status.get("requestMappings") == [{"containerName": "c", "resourceName": resource,
                                              "requestName": "container-0-request-0"}], status
    claim = await ctx.get(s.RESOURCE_V1, "ResourceClaim", str(status["resourceClaimName"]))
    annotations = claim["metadata"].get("annotations") or {}
    assert annotations.get("resource.kubernetes.io/extended-resource-claim") == "true", annotations
    assert claim["metadata"]["name"].startswith(f"{name}-extended-resources-"), claim["metadata"]["name"]
    assert any(o.get("kind") == "Pod" and o.get("name") == name and o.get("controller")
               for o in claim["metadata"].get("ownerReferences") or []), claim["metadata"].get("ownerReferences")
    assert len(s.devices_of(claim)) == 1, f"one device for a request of 1: {s.devices_of(claim)}"


@feature("[Feature:DRAExtendedResource] every DeviceClass is reachable as "
         "deviceclass.resource.kubernetes.io/<class>", area=AREA, kep="KEP-5004", gates=("DRAExtendedResource",))
async def extended_resource_implicit_name(ctx: Context) -> None:
    cls = await s.own_class(ctx)
    _, status = await extended_pod(ctx, f"deviceclass.resource.kubernetes.io/{cls}")
    claim = await s.allocated(ctx, str(status["resourceClaimName"]))
    assert [r["driver"] for r in s.results(claim)] == [s.driver_of(ctx)], s.results(claim)


@feature("[Feature:DRAExtendedResource] the extended-resource claim is deleted with its pod",
         area=AREA, kep="KEP-5004", gates=("DRAExtendedResource",))
async def extended_resource_claim_deleted(ctx: Context) -> None:
    resource = f"{s.driver_of(ctx)}/dev"
    await s.own_class(ctx, extra={"extendedResourceName": resource})
    name, status = await extended_pod(ctx, resource)
    await s.delete_pod_and_wait(ctx, name)

    async def gone() -> bool:
        try:
            await ctx.get(s.RESOURCE_V1, "ResourceClaim", str(status["resourceClaimName"]))
        except errors.APIError as err:
            return errors.is_not_found(err)
        return False
    await ctx.eventually(gone, what="the special claim to go with its pod")


# Binding conditions -------------------------------------------------------------------------------

def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@feature("[Feature:DRADeviceBindingConditions] the pod is bound only after the driver reports the device's "
         "binding condition True", area=AREA, kep="KEP-5007",
         gates=("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"))
async def binding_conditions_wait(ctx: Context) -> None:
    node = await s.a_node(ctx)
    driver = s.driver_of(ctx)
    ready, failed = f"{driver}/attached", f"{driver}/attach-failed"
    await s.own_slice(ctx, node, [{"name": "nic", "bindsToNode": True, "bindingConditions": [ready],
                                   "bindingFailureConditions": [failed]}])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("nic", cls)])
    claim_name = claim["metadata"]["name"]
    created = await s.pod(ctx, claims={"nic": claim_name})
    pod_name = created["metadata"]["name"]
    got = await s.allocated(ctx, claim_name)
    [result] = s.results(got)
    assert result.get("bindingConditions") == [ready] and result.get("bindingFailureConditions") == [failed], result
    assert got["status"]["allocation"].get("allocationTimestamp"), "allocationTimestamp is set with binding conditions"
    terms = got["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    assert node in str(terms), f"bindsToNode pins the allocation to {node}: {terms}"

    async def not_bound() -> bool:
        return not (await s.get_pod(ctx, pod_name))["spec"].get("nodeName")
    await s.stays(ctx, not_bound)
    await ctx.patch(s.RESOURCE_V1, "ResourceClaim", claim_name, {"status": {"devices": [
        {"driver": driver, "pool": result["pool"], "device": "nic", "conditions": [
            {"type": ready, "status": "True", "reason": "Attached", "message": "", "lastTransitionTime": now()}]}]}},
        subresource="status")
    bound = await s.scheduled(ctx, pod_name)
    assert bound["spec"]["nodeName"] == node


# Device status ------------------------------------------------------------------------------------

@feature("[Feature:DRAResourceClaimDeviceStatus] a driver can report conditions and network data of an "
         "allocated device in the claim status", area=AREA, kep="KEP-4817", gates=("DRAResourceClaimDeviceStatus",))
async def device_status_reported(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [{"name": "eth"}])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("nic", cls)])
    name = claim["metadata"]["name"]
    await s.pod(ctx, claims={"nic": name})
    got = await s.allocated(ctx, name)
    entry = {"driver": s.driver_of(ctx), "pool": node, "device": "eth",
             "conditions": [{"type": "Ready", "status": "True", "reason": "Up", "message": "",
                             "lastTransitionTime": now()}],
             "data": {"vlan": 7},
             "networkData": {"interfaceName": "net1", "ips": ["10.9.0.5/24"], "hardwareAddress": "02:00:00:00:00:01"}}
    await ctx.patch(s.RESOURCE_V1, "ResourceClaim", name, {"status": {"devices": [entry]}}, subresource="status")
    again = await ctx.get(s.RESOURCE_V1, "ResourceClaim", name)
    [device] = again["status"].get("devices") or [{}]
    assert device.get("networkData") == entry["networkData"] and device.get("data") == {"vlan": 7}, device
    assert s.devices_of(again) == s.devices_of(got), "a status write for devices must keep the allocation"


# Device health and a pod on the cluster's own driver ---------------------------------------------

async def cluster_device(ctx: Context) -> tuple[str, str]:
    """(driver, node) of a node-local device some DRA driver of the cluster publishes; skips if none."""
    slices = (await ctx.list(s.RESOURCE_V1, "ResourceSlice"))["items"]
    for item in sorted(slices, key=lambda x: x["metadata"]["name"]):
        spec = item.get("spec") or {}
        if spec.get("nodeName") and spec.get("devices") and not spec["driver"].endswith(".conformance.haru.dev"):
            return spec["driver"], spec["nodeName"]
    ctx.skip("no DRA driver of the cluster publishes node-local devices")


async def pod_on_cluster_device(ctx: Context) -> tuple[str, str, str]:
    driver, _ = await cluster_device(ctx)
    cls = f"{ctx.namespace}-{ctx.name('class')}"
    await ctx.create({"apiVersion": s.RESOURCE_V1, "kind": "DeviceClass", "metadata": {"name": cls},
                      "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    claim = await s.claim(ctx, [s.exactly("gpu", cls)])
    created = await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    await s.running(ctx, created["metadata"]["name"], timeout=45)
    return driver, claim["metadata"]["name"], created["metadata"]["name"]


@feature("[Feature:DynamicResourceAllocation] a pod with a claim on a device of the cluster's DRA driver runs",
         area=AREA, kep="KEP-4381")
async def pod_runs_with_cluster_device(ctx: Context) -> None:
    driver, claim_name, pod_name = await pod_on_cluster_device(ctx)
    got = await s.allocated(ctx, claim_name)
    found = await s.get_pod(ctx, pod_name)
    [result] = s.results(got)
    assert result["driver"] == driver
    statuses = (found.get("status") or {}).get("containerStatuses") or []
    assert statuses and statuses[0].get("ready") is True, f"the container should be ready: {statuses}"


@feature("[Feature:ResourceHealthStatus] a running container reports the health of its DRA device in "
         "allocatedResourcesStatus", area=AREA, kep="KEP-4680", gates=("ResourceHealthStatus",))
async def device_health_in_pod_status(ctx: Context) -> None:
    driver, claim_name, pod_name = await pod_on_cluster_device(ctx)
    [result] = s.results(await s.allocated(ctx, claim_name))
    wanted = f"{driver}/{result['pool']}/{result['device']}"

    async def reported() -> list[dict[str, object]] | None:
        statuses = ((await s.get_pod(ctx, pod_name)).get("status") or {}).get("containerStatuses") or [{}]
        return statuses[0].get("allocatedResourcesStatus")
    entries = await ctx.eventually(reported, what="containerStatuses[0].allocatedResourcesStatus")
    [entry] = [e for e in entries if str(e.get("name", "")).startswith("claim:dev")] or [{}]
    health = entry.get("resources") or []
    assert [h.get("resourceID") for h in health] == [wanted], f"expected resourceID {wanted}: {entries}"
    assert health[0].get("health") in ("Healthy", "Unhealthy", "Unknown"), health
