"""DRA allocation features of 1.36, each behind its own gate: prioritized lists (KEP-4816), admin
access (KEP-5018), partitionable devices (KEP-4815), consumable capacity (KEP-5075) and list-type
attributes (KEP-5491). Each check publishes its own devices (`_conffeatures_support.own_slice`)."""

from __future__ import annotations

from conformance.checks import _conffeatures_support as s
from conformance.context import Context
from conformance.registry import feature

AREA = "dra"


# Prioritized list ---------------------------------------------------------------------------------

def sub(name: str, device_class: str, **more: object) -> dict[str, object]:
    return {"name": name, "deviceClassName": device_class, **more}


@feature("[Feature:DRAPrioritizedList] the first satisfiable subrequest of firstAvailable is allocated",
         area=AREA, kep="KEP-4816", gates=("DRAPrioritizedList",))
async def prioritized_first_satisfiable(ctx: Context) -> None:
    node = await s.a_node(ctx)
    driver = s.driver_of(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("small", model="a10"), s.gpu_like("other", model="t4")])
    cls = await s.own_class(ctx)
    # No h100 exists, so the first choice cannot be met; the second (a10) can, the third (any) too.
    claim = await s.claim(ctx, [{"name": "gpu", "firstAvailable": [
        sub("h100", cls, selectors=[{"cel": {"expression": f'device.attributes["{driver}"].model == "h100"'}}]),
        sub("a10", cls, selectors=[{"cel": {"expression": f'device.attributes["{driver}"].model == "a10"'}}]),
        sub("any", cls)]}])
    created = await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    [result] = s.results(got)
    assert result["request"] == "gpu/a10", f"the result should name gpu/a10, got {result['request']}"
    assert result["device"] == "small", f"subrequest a10 should get device 'small', got {result['device']}"
    await s.scheduled(ctx, created["metadata"]["name"])


@feature("[Feature:DRAPrioritizedList] when the first subrequest fits it wins over later ones",
         area=AREA, kep="KEP-4816", gates=("DRAPrioritizedList",))
async def prioritized_first_wins(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like(f"dev-{i}") for i in range(3)])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [{"name": "gpu", "firstAvailable": [sub("two", cls, count=2), sub("one", cls)]}])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    requests = sorted(r["request"] for r in s.results(got))
    assert requests == ["gpu/two", "gpu/two"], f"the first subrequest (2 devices) fits, got {requests}"


@feature("[Feature:DRAPrioritizedList] a subrequest asking more devices than exist falls through to a smaller one",
         area=AREA, kep="KEP-4816", gates=("DRAPrioritizedList",))
async def prioritized_count_fallback(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("dev-0"), s.gpu_like("dev-1")])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [{"name": "gpu", "firstAvailable": [sub("four", cls, count=4),
                                                                   sub("two", cls, count=2)]}])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    assert sorted(r["request"] for r in s.results(got)) == ["gpu/two", "gpu/two"], s.results(got)
    assert s.devices_of(got) == ["dev-0", "dev-1"]


@feature("[Feature:DRAPrioritizedList] a request with both exactly and firstAvailable is Invalid",
         area=AREA, kep="KEP-4816", gates=("DRAPrioritizedList",))
async def prioritized_union_validated(ctx: Context) -> None:
    body = {"apiVersion": s.RESOURCE_V1, "kind": "ResourceClaim", "metadata": {"name": ctx.name("claim")},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "c"},
                                               "firstAvailable": [sub("a", "c")]}]}}}
    await s.refused(ctx.create(body), 422, "Invalid", contains="exactly one of `exactly` or `firstAvailable`")


@feature("[Feature:DRAPrioritizedList] a matchAttribute constraint steers the choice between subrequests",
         area=AREA, kep="KEP-4816", gates=("DRAPrioritizedList",))
async def prioritized_with_constraint(ctx: Context) -> None:
    node = await s.a_node(ctx)
    driver = s.driver_of(ctx)
    # Two devices per numa node only on numa 1 and they are "small"; the "big" one is alone on numa 0.
    await s.own_slice(ctx, node, [s.gpu_like("big", numa=0, size="big"), s.gpu_like("s1", numa=1, size="small"),
                                  s.gpu_like("s2", numa=1, size="small")])
    cls = await s.own_class(ctx)
    big = [{"cel": {"expression": f'device.attributes["{driver}"].size == "big"'}}]
    claim = await s.claim(ctx, [{"name": "a", "firstAvailable": [sub("big", cls, selectors=big), sub("any", cls)]},
                                s.exactly("b", cls)],
                          constraints=[{"requests": ["a", "b"], "matchAttribute": f"{driver}/numa"}])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    by_request = {r["request"]: r["device"] for r in s.results(got)}
    assert by_request.get("a/any") in ("s1", "s2") and by_request.get("b") in ("s1", "s2"), \
        f"only numa 1 can meet the constraint, so a/any and b share it: {by_request}"


# Admin access -------------------------------------------------------------------------------------

ADMIN_LABEL = "resource.kubernetes.io/admin-access"


@feature("[Feature:DRAAdminAccess] adminAccess is refused in a namespace without the admin-access label",
         area=AREA, kep="KEP-5018", gates=("DRAAdminAccess",))
async def admin_access_needs_label(ctx: Context) -> None:
    body = {"apiVersion": s.RESOURCE_V1, "kind": "ResourceClaim", "metadata": {"name": ctx.name("claim")},
            "spec": {"devices": {"requests": [s.exactly("gpu", "c", adminAccess=True)]}}}
    await s.refused(ctx.create(body), 422, "Invalid", contains=ADMIN_LABEL)


@feature("[Feature:DRAAdminAccess] an admin-access claim gets a device already allocated to another claim",
         area=AREA, kep="KEP-5018", gates=("DRAAdminAccess",))
async def admin_access_shares_allocated_device(ctx: Context) -> None:
    await ctx.patch("v1", "Namespace", ctx.namespace, {"metadata": {"labels": {ADMIN_LABEL: "true"}}})
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("only")])
    cls = await s.own_class(ctx)
    user = await s.claim(ctx, [s.exactly("gpu", cls)])
    await s.pod(ctx, claims={"dev": user["metadata"]["name"]})
    await s.allocated(ctx, user["metadata"]["name"])
    admin = await s.claim(ctx, [s.exactly("gpu", cls, adminAccess=True)])
    monitor = await s.pod(ctx, claims={"dev": admin["metadata"]["name"]})
    got = await s.allocated(ctx, admin["metadata"]["name"])
    [result] = s.results(got)
    assert result["device"] == "only" and result.get("adminAccess") is True, f"admin result {result}"
    bound = await s.scheduled(ctx, monitor["metadata"]["name"])
    assert bound["spec"]["nodeName"] == node


# Partitionable devices ----------------------------------------------------------------------------

async def partitioned_pool(ctx: Context, node: str, memory: str, parts: dict[str, str]) -> None:
    """One counter set `gpu` with `memory`, and devices consuming parts of it (two slices of one pool)."""
    pool = {"name": node, "generation": 1, "resourceSliceCount": 2}
    await s.own_slice(ctx, node, [], extra={"pool": pool, "sharedCounters": [
        {"name": "gpu", "counters": {"memory": {"value": memory}}}]})
    await s.own_slice(ctx, node, [{"name": name, "consumesCounters": [
        {"counterSet": "gpu", "counters": {"memory": {"value": value}}}]} for name, value in parts.items()],
        extra={"pool": pool})


@feature("[Feature:DRAPartitionableDevices] partitions that would overdraw a shared counter are not both "
         "allocated", area=AREA, kep="KEP-4815", gates=("DRAPartitionableDevices",))
async def partitions_respect_counters(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await partitioned_pool(ctx, node, "40Gi", {"part-a": "30Gi", "part-b": "30Gi"})
    cls = await s.own_class(ctx)
    first = await s.claim(ctx, [s.exactly("p", cls)])
    p1 = await s.pod(ctx, claims={"dev": first["metadata"]["name"]})
    got = await s.allocated(ctx, first["metadata"]["name"])
    taken = s.devices_of(got)
    second = await s.claim(ctx, [s.exactly("p", cls)])
    p2 = await s.pod(ctx, claims={"dev": second["metadata"]["name"]})
    await s.unschedulable(ctx, p2["metadata"]["name"])
    await s.delete_pod_and_wait(ctx, p1["metadata"]["name"])
    again = await s.allocated(ctx, second["metadata"]["name"])
    assert len(s.devices_of(again)) == 1, f"after the first partition is freed, one fits: {s.devices_of(again)}"
    assert taken, "the first claim had a partition"


@feature("[Feature:DRAPartitionableDevices] partitions whose counters add up within the set are allocated "
         "together", area=AREA, kep="KEP-4815", gates=("DRAPartitionableDevices",))
async def partitions_fit_together(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await partitioned_pool(ctx, node, "40Gi", {"half-a": "20Gi", "half-b": "20Gi", "whole": "40Gi"})
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("p", cls, count=2)])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    assert s.devices_of(got) == ["half-a", "half-b"], f"only the two halves fit 40Gi together: {s.devices_of(got)}"


@feature("[Feature:DRAPartitionableDevices] perDeviceNodeSelection: each device's own nodeName decides where "
         "the pod goes", area=AREA, kep="KEP-4815", gates=("DRAPartitionableDevices",))
async def per_device_node_selection(ctx: Context) -> None:
    target = await s.a_node(ctx, 1)
    await s.own_slice(ctx, None, [dict(s.gpu_like("here"), nodeName=target)], pool="shared",
                      extra={"perDeviceNodeSelection": True})
    slices = await ctx.list(s.RESOURCE_V1, "ResourceSlice", field_selector=f"spec.driver={s.driver_of(ctx)}")
    spec = slices["items"][0]["spec"]
    assert spec.get("perDeviceNodeSelection") is True and "allNodes" not in spec, \
        f"the slice should keep only perDeviceNodeSelection: {spec}"
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("d", cls)])
    created = await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    bound = await s.scheduled(ctx, created["metadata"]["name"])
    assert bound["spec"]["nodeName"] == target, \
        f"the device lives on {target}, the pod went to {bound['spec']['nodeName']}"


# Consumable capacity ------------------------------------------------------------------------------

def shareable(name: str, memory: str, policy: dict[str, object] | None = None) -> dict[str, object]:
    capacity: dict[str, object] = {"value": memory}
    if policy:
        capacity["requestPolicy"] = policy
    return {"name": name, "allowMultipleAllocations": True, "capacity": {"memory": capacity}}


def capacity_request(name: str, device_class: str, memory: str) -> dict[str, object]:
    return s.exactly(name, device_class, capacity={"requests": {"memory": memory}})


@feature("[Feature:DRAConsumableCapacity] a device that allows multiple allocations is shared by claims, each "
         "with its own shareID and consumed capacity", area=AREA, kep="KEP-5075", gates=("DRAConsumableCapacity",))
async def consumable_capacity_shared(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [shareable("shared", "80Gi")])
    cls = await s.own_class(ctx)
    claims = [await s.claim(ctx, [capacity_request("mem", cls, "30Gi")]) for _ in range(2)]
    for c in claims:
        await s.pod(ctx, claims={"dev": c["metadata"]["name"]})
    got = [await s.allocated(ctx, c["metadata"]["name"]) for c in claims]
    results = [s.results(g)[0] for g in got]
    assert all(r["device"] == "shared" for r in results), results
    share_ids = [r.get("shareID") for r in results]
    assert all(share_ids) and share_ids[0] != share_ids[1], f"each allocation needs its own shareID: {share_ids}"
    assert all(r.get("consumedCapacity", {}).get("memory") == "30Gi" for r in results), \
        f"consumedCapacity should be 30Gi each: {[r.get('consumedCapacity') for r in results]}"


@feature("[Feature:DRAConsumableCapacity] a claim asking more than the remaining capacity is not allocated",
         area=AREA, kep="KEP-5075", gates=("DRAConsumableCapacity",))
async def consumable_capacity_exhausted(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [shareable("shared", "80Gi")])
    cls = await s.own_class(ctx)
    first = await s.claim(ctx, [capacity_request("mem", cls, "50Gi")])
    await s.pod(ctx, claims={"dev": first["metadata"]["name"]})
    await s.allocated(ctx, first["metadata"]["name"])
    second = await s.claim(ctx, [capacity_request("mem", cls, "40Gi")])
    p2 = await s.pod(ctx, claims={"dev": second["metadata"]["name"]})
    await s.unschedulable(ctx, p2["metadata"]["name"])


@feature("[Feature:DRAConsumableCapacity] a validRange requestPolicy rounds the request up to its step",
         area=AREA, kep="KEP-5075", gates=("DRAConsumableCapacity",))
async def consumable_capacity_rounding(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [shareable("shared", "80Gi", {"default": "10Gi",
                                                               "validRange": {"min": "10Gi", "step": "10Gi"}})])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [capacity_request("mem", cls, "15Gi")])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    consumed = s.results(got)[0].get("consumedCapacity") or {}
    assert consumed.get("memory") == "20Gi", f"15Gi rounds up to the 10Gi step: 20Gi, got {consumed}"


@feature("[Feature:DRAConsumableCapacity] without a capacity request the policy's default is consumed",
         area=AREA, kep="KEP-5075", gates=("DRAConsumableCapacity",))
async def consumable_capacity_default(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [shareable("shared", "80Gi", {"default": "8Gi",
                                                               "validValues": ["8Gi", "16Gi", "32Gi"]})])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("mem", cls)])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    consumed = s.results(got)[0].get("consumedCapacity") or {}
    assert consumed.get("memory") == "8Gi", f"no request consumes the default 8Gi, got {consumed}"


# List-type attributes -----------------------------------------------------------------------------

@feature("[Feature:DRAListTypeAttributes] matchAttribute over list attributes needs a common value",
         area=AREA, kep="KEP-5491", gates=("DRAListTypeAttributes",))
async def list_attributes_match(ctx: Context) -> None:
    node = await s.a_node(ctx)
    driver = s.driver_of(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("a", links={"strings": ["x", "y"]}),
                                  s.gpu_like("b", links={"strings": ["z"]}),
                                  s.gpu_like("c", links={"strings": ["y", "w"]})])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("one", cls), s.exactly("two", cls)],
                          constraints=[{"requests": ["one", "two"], "matchAttribute": f"{driver}/links"}])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    assert s.devices_of(got) == ["a", "c"], f"only a and c share a link (y): {s.devices_of(got)}"
