"""CustomResourceDefinition behaviours of upstream's test/e2e/apimachinery: custom_resource_definition.go
(create and delete, list and deletecollection, status subresource, defaulting, discovery),
crd_watch.go, and aggregated_discovery.go's CRD cases."""

from __future__ import annotations

from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import (CRDS, crd_manifest, established, gone, in_discovery, make_crd,
                                                      saw, watch_events)
from conformance.context import Context, Obj
from conformance.registry import conformance

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


@conformance("[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] Simple "
             "CustomResourceDefinition creating/deleting custom resource definition objects works [Conformance]",
             area="api-machinery")
async def crd_create_delete(ctx: Context) -> None:
    created = await ctx.create(crd_manifest(ctx, "Noxu"))
    name = created["metadata"]["name"]
    await established(ctx, name)
    await ctx.delete(*CRDS, name)
    await gone(ctx, *CRDS, name)


@conformance("[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] Simple "
             "CustomResourceDefinition listing custom resource definition objects works [Conformance]",
             area="api-machinery")
async def crd_list(ctx: Context) -> None:
    label = {"e2e-list-test-uuid": ctx.namespace}
    selector = f"e2e-list-test-uuid={ctx.namespace}"
    names = []
    for i in range(10):
        created = await ctx.create(crd_manifest(ctx, f"Noxu{i}", labels=label))
        names.append(created["metadata"]["name"])
    unlabelled = await ctx.create(crd_manifest(ctx, "Other"))
    listed = await ctx.list(*CRDS, label_selector=selector)
    assert sorted(c["metadata"]["name"] for c in listed["items"]) == sorted(names), \
        f"a labelled list found {[c['metadata']['name'] for c in listed['items']]}"
    await ctx.api.delete_collection(ctx.api.resource(*CRDS), None, label_selector=selector)

    async def emptied() -> bool:
        return not (await ctx.list(*CRDS, label_selector=selector))["items"]
    await ctx.eventually(emptied, what="deletecollection to remove the labelled CRDs")
    await ctx.get(*CRDS, unlabelled["metadata"]["name"])  # only the labelled ones went


@conformance("[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] Simple "
             "CustomResourceDefinition getting/updating/patching custom resource definition status sub-resource works "
             "[Conformance]", area="api-machinery")
async def crd_status(ctx: Context) -> None:
    created = await ctx.create(crd_manifest(ctx, "Noxu"))
    name = created["metadata"]["name"]
    await established(ctx, name)
    condition = {"type": "StatusUpdated", "status": "True", "reason": "E2E", "message": "Set from an e2e test",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}

    async def update() -> Obj:
        current = await ctx.get(*CRDS, name, subresource="status")
        current["status"]["conditions"].append(condition)
        return await ctx.update(current, subresource="status")
    updated = await retry_on_conflict(update)
    assert "StatusUpdated" in [c["type"] for c in updated["status"]["conditions"]], "the status update did not show"
    read = await ctx.get(*CRDS, name)
    assert "StatusUpdated" in [c["type"] for c in read["status"]["conditions"]], "a later read lost the status update"
    patched = await ctx.patch(*CRDS, name, [{"op": "add", "path": "/status/conditions/-",
                                             "value": {**condition, "type": "StatusPatched"}}],
                              patch_type="json", subresource="status")
    assert "StatusPatched" in [c["type"] for c in patched["status"]["conditions"]], "the status patch did not show"
    read = await ctx.get(*CRDS, name, subresource="status")
    assert "StatusPatched" in [c["type"] for c in read["status"]["conditions"]], "a later read lost the status patch"


@conformance("[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] should include custom "
             "resource definition resources in discovery documents [Conformance]", area="api-machinery")
async def crd_discovery(ctx: Context) -> None:
    await in_discovery(ctx, "apiextensions.k8s.io", "v1", "customresourcedefinitions",
                       "customresourcedefinitions/status")
    group = await ctx.api.get_path("/apis/apiextensions.k8s.io")
    assert group["preferredVersion"]["groupVersion"] == "apiextensions.k8s.io/v1", f"preferred version: {group}"


_SCHEMA_A: Obj = {"type": "object", "properties": {"a": {"type": "string", "default": "A"},
                                                    "b": {"type": "string"}}}
_SCHEMA_B: Obj = {"type": "object", "properties": {"a": {"type": "string"},
                                                    "b": {"type": "string", "default": "B"}}}


@conformance("[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] custom resource "
             "defaulting for requests and from storage works [Conformance]", area="api-machinery")
async def crd_defaulting(ctx: Context) -> None:
    plain = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    crd, noxus = await make_crd(ctx, "Noxu", schema=plain)
    name = crd["metadata"]["name"]
    first = await ctx.api.create(noxus, {"apiVersion": noxus.api_version, "kind": "Noxu",
                                         "metadata": {"name": "foo1"}}, ctx.namespace)
    assert "a" not in first, f"no default yet, but the object has a: {first}"

    async def set_schema(schema: Obj) -> Obj:
        current = await ctx.get(*CRDS, name)
        current["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema
        return await ctx.update(current)
    await retry_on_conflict(lambda: set_schema(_SCHEMA_A))

    async def defaulted_from_storage() -> bool:
        got = await ctx.api.get(noxus, "foo1", ctx.namespace)
        return got.get("a") == "A"
    await ctx.eventually(defaulted_from_storage, what="the new default a=A on the stored object when read")
    second = await ctx.api.create(noxus, {"apiVersion": noxus.api_version, "kind": "Noxu",
                                          "metadata": {"name": "foo2"}}, ctx.namespace)
    assert second.get("a") == "A", f"a new object was not defaulted on create: {second}"

    await retry_on_conflict(lambda: set_schema(_SCHEMA_B))

    async def new_default_old_persisted() -> bool:
        one = await ctx.api.get(noxus, "foo1", ctx.namespace)
        two = await ctx.api.get(noxus, "foo2", ctx.namespace)
        # foo1 was never written with a; foo2 was, so its a stays. Both now read b=B.
        return one.get("b") == "B" and two.get("b") == "B" and two.get("a") == "A"
    await ctx.eventually(new_default_old_persisted, what="b=B defaulted while foo2 keeps its persisted a=A")


@conformance("[sig-api-machinery] CustomResourceDefinition Watch [Privileged:ClusterAdmin] CustomResourceDefinition "
             "Watch watch on custom resource definition objects [Conformance]", area="api-machinery")
async def crd_watch(ctx: Context) -> None:
    _, noxus = await make_crd(ctx, "Noxu", scope="Cluster")
    since = (await ctx.api.list(noxus))["metadata"]["resourceVersion"]
    names = [f"name1-{ctx.namespace}", f"name2-{ctx.namespace}"]
    for name in names:
        await ctx.api.create(noxus, {"apiVersion": noxus.api_version, "kind": "Noxu", "metadata": {"name": name},
                                     "content": {"key": "value"}})
    await ctx.api.patch(noxus, names[0], {"dummy": "test"})
    for name in names:
        await ctx.api.delete(noxus, name)
    events = await watch_events(ctx, noxus, None, since, lambda evs: len(evs) >= 5)
    assert saw(events, "ADDED", names[0]) and saw(events, "ADDED", names[1]), f"no ADDED events: {events}"
    assert saw(events, "MODIFIED", names[0], lambda o: o.get("dummy") == "test"), "no MODIFIED event with the patch"
    assert saw(events, "DELETED", names[0]) and saw(events, "DELETED", names[1]), "no DELETED events"


async def _crd_in_aggregated(ctx: Context, accept: str) -> None:
    crd, noxus = await make_crd(ctx, "Noxu")

    async def listed() -> bool:
        doc = await ctx.api.request("GET", "/apis", accept=accept)
        assert doc.get("kind") == "APIGroupDiscoveryList", f"/apis answered {doc.get('kind')}"
        for group in doc.get("items") or []:
            if group["metadata"]["name"] != noxus.group:
                continue
            for version in group.get("versions") or []:
                for resource in version.get("resources") or []:
                    if resource["resource"] == noxus.resource and resource["responseKind"]["kind"] == "Noxu":
                        assert resource.get("scope") == "Namespaced", f"the CRD's scope reads {resource}"
                        return True
        return False
    await ctx.eventually(listed, what=f"{noxus} in the aggregated discovery document")


@conformance("[sig-api-machinery] AggregatedDiscovery should support aggregated discovery interface for CRDs "
             "[Conformance]", area="api-machinery")
async def aggregated_crd(ctx: Context) -> None:
    await _crd_in_aggregated(ctx, f"{AGGREGATED_V2},application/json")


@conformance("[sig-api-machinery] AggregatedDiscovery should support raw aggregated discovery request for CRDs "
             "[Conformance]", area="api-machinery")
async def aggregated_crd_raw(ctx: Context) -> None:
    await _crd_in_aggregated(ctx, AGGREGATED_V2)
