"""API behaviours of upstream's test/e2e/scheduling/limit_range.go and the PriorityClass endpoints
test of preemption.go: LimitRange defaults applied at pod admission, LimitRange collections,
PriorityClass mutable and immutable fields."""

from __future__ import annotations

from conformance.checks._confupstream_support import gone, pod, refused
from conformance.context import Context, Obj
from conformance.registry import conformance

LIMITS = ("v1", "LimitRange")


def _limit_range(name: str, labels: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"limits": [{"type": "Container",
                                 "min": {"cpu": "100m", "memory": "10Mi", "ephemeral-storage": "100Mi"},
                                 "max": {"cpu": "500m", "memory": "500Mi", "ephemeral-storage": "500Gi"},
                                 "defaultRequest": {"cpu": "100m", "memory": "200Mi", "ephemeral-storage": "200Gi"},
                                 "default": {"cpu": "500m", "memory": "500Mi", "ephemeral-storage": "500Gi"},
                                 "maxLimitRequestRatio": {}}]}}


def _quantities(resources: Obj) -> Obj:
    return {k: v for k, v in resources.items()}


@conformance("[sig-scheduling] LimitRange should create a LimitRange with defaults and ensure pod has those "
             "defaults applied. [Conformance]", area="scheduling")
async def limitrange_defaults(ctx: Context) -> None:
    name = ctx.name("limit-range")
    created = await ctx.create(_limit_range(name))
    found = await ctx.list(*LIMITS, label_selector="")
    assert [l["metadata"]["name"] for l in found["items"]] == [name], "the LimitRange is not listed"
    assert created["spec"]["limits"][0]["defaultRequest"]["cpu"] == "100m"

    # A pod with no resources gets the defaults as requests and limits.
    bare = await ctx.create(pod(ctx.name("pod-no-resources")))
    resources = bare["spec"]["containers"][0].get("resources") or {}
    assert resources.get("requests") == {"cpu": "100m", "memory": "200Mi", "ephemeral-storage": "200Gi"}, \
        f"default requests were not applied: {resources}"
    assert resources.get("limits") == {"cpu": "500m", "memory": "500Mi", "ephemeral-storage": "500Gi"}, \
        f"default limits were not applied: {resources}"

    # A pod with partial resources keeps its own values and gets defaults only for what it left out.
    partial = pod(ctx.name("pod-partial-resources"))
    partial["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "300m", "memory": "150Mi"},
                                                     "limits": {"cpu": "300m", "memory": "500Mi"}}
    made = await ctx.create(partial)
    resources = made["spec"]["containers"][0]["resources"]
    assert resources["requests"] == {"cpu": "300m", "memory": "150Mi", "ephemeral-storage": "200Gi"}, \
        f"partial requests were not completed from the defaults: {resources}"
    assert resources["limits"] == {"cpu": "300m", "memory": "500Mi", "ephemeral-storage": "500Gi"}, \
        f"partial limits were not completed from the defaults: {resources}"

    # Requests above max are refused.
    too_big = pod(ctx.name("pod-too-big"))
    too_big["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "600m", "memory": "600Mi"},
                                                     "limits": {"cpu": "600m", "memory": "600Mi"}}
    await refused(ctx.create(too_big), 403, "Forbidden", "a pod over the LimitRange max")

    # After the LimitRange allows more, the same pod is admitted.
    current = await ctx.get(*LIMITS, name)
    current["spec"]["limits"][0]["max"] = {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "500Gi"}
    await ctx.update(current)

    async def admitted() -> bool:
        too_big["metadata"]["name"] = ctx.name("pod-now-fits")
        await ctx.create(too_big)
        return True
    await ctx.eventually(admitted, what="a pod within the raised max to be admitted")
    await ctx.delete(*LIMITS, name)
    await gone(ctx, *LIMITS, name)


@conformance("[sig-scheduling] LimitRange should list, patch and delete a LimitRange by collection [Conformance]",
             area="scheduling")
async def limitrange_collection(ctx: Context) -> None:
    label = {"e2e-limitrange": ctx.namespace}
    selector = f"e2e-limitrange={ctx.namespace}"
    other = await ctx.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "conformance-lr-"}})
    other_ns = other["metadata"]["name"]
    first, second = ctx.name("limitrange"), ctx.name("limitrange")
    await ctx.create(_limit_range(first, label))
    await ctx.create(_limit_range(second, label), namespace=other_ns)
    everywhere = await ctx.api.list(ctx.api.resource(*LIMITS), None, label_selector=selector)
    assert len(everywhere["items"]) == 2, f"listing across namespaces found {len(everywhere['items'])} LimitRanges"
    patched = await ctx.patch(*LIMITS, first, {"metadata": {"labels": {"e2e-patched": "true"}},
                                               "spec": {"limits": [{"type": "Container",
                                                                    "default": {"cpu": "400m"},
                                                                    "defaultRequest": {"cpu": "200m"}}]}},
                              patch_type="merge")
    assert patched["metadata"]["labels"].get("e2e-patched") == "true", "the patched label did not show"
    assert patched["spec"]["limits"][0]["default"]["cpu"] == "400m", f"the patched spec did not show: {patched['spec']}"
    await ctx.api.delete_collection(ctx.api.resource(*LIMITS), ctx.namespace, label_selector=selector)
    await gone(ctx, *LIMITS, first)
    left = await ctx.api.list(ctx.api.resource(*LIMITS), None, label_selector=selector)
    assert [l["metadata"]["name"] for l in left["items"]] == [second], \
        f"deletecollection in one namespace should leave the other's LimitRange: {left['items']}"


@conformance("[sig-scheduling] SchedulerPreemption [Serial] PriorityClass endpoints verify PriorityClass endpoints "
             "can be operated with different HTTP methods [Conformance]", area="scheduling")
async def priorityclass_endpoints(ctx: Context) -> None:
    pcs = ("scheduling.k8s.io/v1", "PriorityClass")
    names = [f"{ctx.namespace}-pc-{i}"[:63] for i in range(2)]
    for value, name in enumerate(names, start=1):
        await ctx.create({"apiVersion": pcs[0], "kind": pcs[1], "metadata": {"name": name}, "value": value})
    listed = await ctx.list(*pcs)
    assert set(names) <= {p["metadata"]["name"] for p in listed["items"]}, "the PriorityClasses are not listed"
    # value is immutable, through patch and through update.
    await refused(ctx.patch(*pcs, names[0], {"value": 100}), 422, "Invalid", "patching a PriorityClass's value")
    current = await ctx.get(*pcs, names[1])
    await refused(ctx.update({**current, "value": 100}), 422, "Invalid", "updating a PriorityClass's value")
    # description is mutable, through patch and through update.
    patched = await ctx.patch(*pcs, names[0], {"description": "patched"})
    assert patched["description"] == "patched", "the patched description did not show"
    current["description"] = "updated"
    updated = await ctx.update(current)
    assert updated["description"] == "updated", "the updated description did not show"
    for name in names:
        await ctx.delete(*pcs, name)
