"""DRA structured parameters (KEP-4381, GA in 1.34, no gate): claims allocated by the scheduler
from ResourceSlices, through the API. Each check publishes its own slice with its own driver name
on one node, so the allocation it sees is its own and the cluster's GPUs are left to others."""

from __future__ import annotations

from client import errors
from conformance.checks import _conffeatures_support as s
from conformance.context import Context
from conformance.registry import feature

KEP = "KEP-4381"
AREA = "dra"


@feature("[Feature:DynamicResourceAllocation] a claim is allocated from a node's ResourceSlice and reserved for "
         "the pod, which lands on that node", area=AREA, kep=KEP)
async def claim_allocated_and_reserved(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("dev-0"), s.gpu_like("dev-1")])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("one", cls)])
    name = claim["metadata"]["name"]
    created = await s.pod(ctx, claims={"dev": name})
    bound = await s.scheduled(ctx, created["metadata"]["name"])
    assert bound["spec"]["nodeName"] == node, f"the pod went to {bound['spec']['nodeName']}, its device is on {node}"
    got = await s.allocated(ctx, name)
    [result] = s.results(got)
    assert result["driver"] == s.driver_of(ctx) and result["pool"] == node, f"unexpected result {result}"
    assert result["request"] == "one" and result["device"] in ("dev-0", "dev-1"), f"unexpected result {result}"
    reserved = got["status"].get("reservedFor") or []
    assert [(r.get("resource"), r.get("name"), r.get("uid")) for r in reserved] == \
        [("pods", created["metadata"]["name"], created["metadata"]["uid"])], f"reservedFor is {reserved}"
    terms = (got["status"]["allocation"].get("nodeSelector") or {}).get("nodeSelectorTerms") or []
    assert terms, "a node-local device gives an allocation nodeSelector"


@feature("[Feature:DynamicResourceAllocation] a claim from a ResourceClaimTemplate is generated for the pod, "
         "named in its status and deleted with it", area=AREA, kep=KEP)
async def claim_from_template(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("dev-0")])
    cls = await s.own_class(ctx)
    template = ctx.name("tmpl")
    await ctx.create({"apiVersion": s.RESOURCE_V1, "kind": "ResourceClaimTemplate", "metadata": {"name": template},
                      "spec": {"spec": {"devices": {"requests": [s.exactly("one", cls)]}}}})
    created = await s.pod(ctx, templates={"dev": template})
    pod_name = created["metadata"]["name"]

    async def generated() -> str | None:
        statuses = ((await s.get_pod(ctx, pod_name)).get("status") or {}).get("resourceClaimStatuses") or []
        return next((st.get("resourceClaimName") for st in statuses if st.get("name") == "dev"), None)
    claim_name = await ctx.eventually(generated, what="status.resourceClaimStatuses to name the generated claim")
    got = await s.allocated(ctx, claim_name)
    assert got["metadata"].get("annotations", {}).get("resource.kubernetes.io/pod-claim-name") == "dev", \
        f"annotations of the generated claim: {got['metadata'].get('annotations')}"
    owners = got["metadata"].get("ownerReferences") or []
    assert any(o.get("kind") == "Pod" and o.get("uid") == created["metadata"]["uid"] and o.get("controller")
               for o in owners), f"the generated claim is not owned by the pod: {owners}"
    assert s.devices_of(got) == ["dev-0"]
    await s.delete_pod_and_wait(ctx, pod_name)

    async def claim_gone() -> bool:
        try:
            await ctx.get(s.RESOURCE_V1, "ResourceClaim", claim_name)
        except errors.APIError as err:
            return errors.is_not_found(err)
        return False
    await ctx.eventually(claim_gone, what="the generated claim to be deleted with its pod")


@feature("[Feature:DynamicResourceAllocation] a CEL selector in the request picks the device by attribute",
         area=AREA, kep=KEP)
async def cel_selector_on_attribute(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("small", model="a10", memoryGi=24),
                                  s.gpu_like("large", model="h100", memoryGi=80)])
    cls = await s.own_class(ctx)
    driver = s.driver_of(ctx)
    claim = await s.claim(ctx, [s.exactly("big", cls, selectors=[f'device.attributes["{driver}"].memoryGi >= 40'])])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    assert s.devices_of(got) == ["large"], f"memoryGi >= 40 should pick 'large', got {s.devices_of(got)}"


@feature("[Feature:DynamicResourceAllocation] the DeviceClass's selectors restrict which devices a claim gets",
         area=AREA, kep=KEP)
async def device_class_selectors(ctx: Context) -> None:
    node = await s.a_node(ctx)
    driver = s.driver_of(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("a", model="a10"), s.gpu_like("b", model="h100"),
                                  s.gpu_like("c", model="a10")])
    cls = await s.own_class(ctx, selectors=[f'device.attributes["{driver}"].model == "h100"'])
    claim = await s.claim(ctx, [s.exactly("one", cls)])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    assert s.devices_of(got) == ["b"], f"the class admits only model h100 ('b'), got {s.devices_of(got)}"


@feature("[Feature:DynamicResourceAllocation] allocationMode All allocates every matching device of the node",
         area=AREA, kep=KEP)
async def allocation_mode_all(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like(f"dev-{i}") for i in range(3)])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("all", cls, allocationMode="All")])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    assert s.devices_of(got) == ["dev-0", "dev-1", "dev-2"], f"mode All got {s.devices_of(got)}"


@feature("[Feature:DynamicResourceAllocation] count asks for that many distinct devices", area=AREA, kep=KEP)
async def exact_count(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like(f"dev-{i}") for i in range(4)])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("two", cls, count=2)])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    devices = s.devices_of(got)
    assert len(devices) == 2 and len(set(devices)) == 2, f"count 2 got {devices}"
    assert all(r["request"] == "two" for r in s.results(got))


@feature("[Feature:DynamicResourceAllocation] a matchAttribute constraint gives two requests devices that agree "
         "on the attribute", area=AREA, kep=KEP)
async def match_attribute_constraint(ctx: Context) -> None:
    node = await s.a_node(ctx)
    driver = s.driver_of(ctx)
    # Only numa 1 has two devices, so the constraint has one answer.
    await s.own_slice(ctx, node, [s.gpu_like("a", numa=0), s.gpu_like("b", numa=1), s.gpu_like("c", numa=1),
                                  s.gpu_like("d", numa=2)])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("x", cls), s.exactly("y", cls)],
                          constraints=[{"requests": ["x", "y"], "matchAttribute": f"{driver}/numa"}])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    assert s.devices_of(got) == ["b", "c"], f"matchAttribute numa should give b and c, got {s.devices_of(got)}"


@feature("[Feature:DynamicResourceAllocation] a distinctAttribute constraint gives two requests devices that "
         "differ in the attribute", area=AREA, kep=KEP)
async def distinct_attribute_constraint(ctx: Context) -> None:
    node = await s.a_node(ctx)
    driver = s.driver_of(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("a", switch="s1"), s.gpu_like("b", switch="s1"),
                                  s.gpu_like("c", switch="s2")])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("x", cls), s.exactly("y", cls)],
                          constraints=[{"requests": ["x", "y"], "distinctAttribute": f"{driver}/switch"}])
    await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    got = await s.allocated(ctx, claim["metadata"]["name"])
    devices = s.devices_of(got)
    assert "c" in devices and len(devices) == 2, f"distinct switches need c and one of a/b, got {devices}"


@feature("[Feature:DynamicResourceAllocation] a claim no node can satisfy leaves its pod Unschedulable",
         area=AREA, kep=KEP)
async def unsatisfiable_claim(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("dev-0"), s.gpu_like("dev-1")])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("three", cls, count=3)])
    created = await s.pod(ctx, claims={"dev": claim["metadata"]["name"]})
    await s.unschedulable(ctx, created["metadata"]["name"])
    got = await ctx.get(s.RESOURCE_V1, "ResourceClaim", claim["metadata"]["name"])
    assert not (got.get("status") or {}).get("allocation"), "an unsatisfiable claim got an allocation"


@feature("[Feature:DynamicResourceAllocation] a device allocated to one claim is not given to another",
         area=AREA, kep=KEP)
async def devices_not_shared_between_claims(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("only")])
    cls = await s.own_class(ctx)
    first = await s.claim(ctx, [s.exactly("one", cls)])
    second = await s.claim(ctx, [s.exactly("one", cls)])
    p1 = await s.pod(ctx, claims={"dev": first["metadata"]["name"]})
    await s.allocated(ctx, first["metadata"]["name"])
    p2 = await s.pod(ctx, claims={"dev": second["metadata"]["name"]})
    await s.unschedulable(ctx, p2["metadata"]["name"])
    # Freeing the device lets the second claim have it.
    await s.delete_pod_and_wait(ctx, p1["metadata"]["name"])
    got = await s.allocated(ctx, second["metadata"]["name"])
    assert s.devices_of(got) == ["only"]
    await s.scheduled(ctx, p2["metadata"]["name"])


@feature("[Feature:DynamicResourceAllocation] two pods can share one claim: both are in reservedFor on the same "
         "node", area=AREA, kep=KEP)
async def claim_shared_by_pods(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("dev-0")])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("one", cls)])
    name = claim["metadata"]["name"]
    pods = [await s.pod(ctx, claims={"dev": name}) for _ in range(2)]
    for p in pods:
        bound = await s.scheduled(ctx, p["metadata"]["name"])
        assert bound["spec"]["nodeName"] == node

    async def both_reserved() -> bool:
        got = await ctx.get(s.RESOURCE_V1, "ResourceClaim", name)
        uids = {r.get("uid") for r in (got.get("status") or {}).get("reservedFor") or []}
        return uids == {p["metadata"]["uid"] for p in pods}
    await ctx.eventually(both_reserved, what="both pods in the claim's reservedFor")


@feature("[Feature:DynamicResourceAllocation] a claim is deallocated when the last pod using it goes",
         area=AREA, kep=KEP)
async def claim_deallocated_after_pod(ctx: Context) -> None:
    node = await s.a_node(ctx)
    await s.own_slice(ctx, node, [s.gpu_like("dev-0")])
    cls = await s.own_class(ctx)
    claim = await s.claim(ctx, [s.exactly("one", cls)])
    name = claim["metadata"]["name"]
    created = await s.pod(ctx, claims={"dev": name})
    await s.allocated(ctx, name)
    await s.delete_pod_and_wait(ctx, created["metadata"]["name"])

    async def released() -> bool:
        status = (await ctx.get(s.RESOURCE_V1, "ResourceClaim", name)).get("status") or {}
        return not status.get("reservedFor") and not status.get("allocation")
    await ctx.eventually(released, what="the claim to lose its reservation and allocation")


@feature("[Feature:DynamicResourceAllocation] a ResourceClaim's spec is immutable", area=AREA, kep=KEP)
async def claim_spec_immutable(ctx: Context) -> None:
    claim = await s.claim(ctx, [s.exactly("one", "some-class")])
    claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    await s.refused(ctx.update(claim), 422, "Invalid", contains="immutable")


@feature("[Feature:DynamicResourceAllocation] a ResourceSlice must name exactly one of nodeName, nodeSelector, "
         "allNodes, perDeviceNodeSelection", area=AREA, kep=KEP)
async def slice_node_selection_validated(ctx: Context) -> None:
    body = {"apiVersion": s.RESOURCE_V1, "kind": "ResourceSlice", "metadata": {"name": f"{ctx.namespace}-bad"},
            "spec": {"driver": s.driver_of(ctx), "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "nodeName": await s.a_node(ctx), "allNodes": True, "devices": [{"name": "d"}]}}
    await s.refused(s.make(ctx, body), 422, "Invalid", contains="but multiple fields are set")
    del body["spec"]["nodeName"], body["spec"]["allNodes"]
    await s.refused(s.make(ctx, body), 422, "Invalid", contains="exactly one of `nodeName`")
