"""Namespace behaviours of upstream's test/e2e/apimachinery/namespace.go: patch, update, status,
finalizers, and deletion taking the namespace's pods and services with it. The namespaces are the
check's own (never the runner's), so the [Serial] tag upstream carries is not needed here."""

from __future__ import annotations

from client import errors
from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import PAUSE, gone
from conformance.context import Context, Obj
from conformance.registry import conformance

FAKE_FINALIZER = "e2e.example.com/fakeFinalizer"


async def _namespace(ctx: Context, prefix: str) -> str:
    created = await ctx.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": f"{prefix}-"}})
    return created["metadata"]["name"]


@conformance("[sig-api-machinery] Namespaces [Serial] should patch a Namespace [Conformance]", area="api-machinery")
async def namespace_patch(ctx: Context) -> None:
    name = await _namespace(ctx, "nspatchtest")
    await ctx.patch("v1", "Namespace", name, {"metadata": {"labels": {"testLabel": "testValue"}}})
    read = await ctx.get("v1", "Namespace", name)
    assert read["metadata"]["labels"].get("testLabel") == "testValue", f"the patched label is missing: {read['metadata']}"


@conformance("[sig-api-machinery] Namespaces [Serial] should apply an update to a Namespace [Conformance]",
             area="api-machinery")
async def namespace_update(ctx: Context) -> None:
    name = await _namespace(ctx, "e2e-ns-update")

    async def attempt() -> Obj:
        current = await ctx.get("v1", "Namespace", name)
        current["metadata"].setdefault("labels", {})["e2e-ns-update"] = "updated"
        return await ctx.update(current)
    updated = await retry_on_conflict(attempt)
    assert updated["metadata"]["labels"].get("e2e-ns-update") == "updated", "the updated label did not show"


@conformance("[sig-api-machinery] Namespaces [Serial] should apply changes to a namespace status [Conformance]",
             area="api-machinery")
async def namespace_status(ctx: Context) -> None:
    name = await _namespace(ctx, "e2e-ns-status")
    status = await ctx.get("v1", "Namespace", name, subresource="status")
    assert status["status"]["phase"] == "Active", f"a new namespace is {status['status']}"
    condition = {"type": "StatusPatch", "status": "True", "reason": "E2E", "message": "Patched by an e2e test"}
    patched = await ctx.patch("v1", "Namespace", name, {"status": {"conditions": [condition]}}, subresource="status")
    assert [c["type"] for c in patched["status"].get("conditions") or []] == ["StatusPatch"], \
        f"the status patch did not show: {patched['status']}"

    async def attempt() -> Obj:
        current = await ctx.get("v1", "Namespace", name, subresource="status")
        current["status"]["conditions"].append({**condition, "type": "StatusUpdate", "message": "Updated by an e2e test"})
        return await ctx.update(current, subresource="status")
    updated = await retry_on_conflict(attempt)
    assert [c["type"] for c in updated["status"]["conditions"]] == ["StatusPatch", "StatusUpdate"], \
        f"the status update did not show: {updated['status']}"


@conformance("[sig-api-machinery] Namespaces [Serial] should apply a finalizer to a Namespace [Conformance]",
             area="api-machinery")
async def namespace_finalizer(ctx: Context) -> None:
    name = await _namespace(ctx, "e2e-ns-finalizer")
    namespaces = ctx.api.resource("v1", "Namespace")

    async def finalize(change) -> Obj:  # type: ignore[no-untyped-def]
        current = await ctx.get("v1", "Namespace", name)
        current["spec"]["finalizers"] = change(current["spec"].get("finalizers") or [])
        return await ctx.api.request("PUT", namespaces.path(None, name, "finalize"), body=current)
    added = await retry_on_conflict(lambda: finalize(lambda fs: [*fs, FAKE_FINALIZER]))
    assert FAKE_FINALIZER in added["spec"]["finalizers"], f"the finalizer was not added: {added['spec']}"
    read = await ctx.get("v1", "Namespace", name)
    assert FAKE_FINALIZER in read["spec"]["finalizers"], "the added finalizer is not found"
    removed = await retry_on_conflict(lambda: finalize(lambda fs: [f for f in fs if f != FAKE_FINALIZER]))
    assert FAKE_FINALIZER not in (removed["spec"].get("finalizers") or []), "the finalizer was not removed"
    read = await ctx.get("v1", "Namespace", name)
    assert FAKE_FINALIZER not in (read["spec"].get("finalizers") or []), "the removed finalizer is still found"


async def _namespace_gone(ctx: Context, name: str) -> None:
    await gone(ctx, "v1", "Namespace", name, timeout=60)


@conformance("[sig-api-machinery] Namespaces [Serial] should ensure that all pods are removed when a namespace is "
             "deleted [Conformance]", area="api-machinery")
async def namespace_deletes_pods(ctx: Context) -> None:
    name = await _namespace(ctx, "nsdeletetest")
    await ctx.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod"},
                      "spec": {"containers": [{"name": "nginx", "image": PAUSE}], "terminationGracePeriodSeconds": 1}},
                     namespace=name)

    async def running() -> bool:
        got = await ctx.get("v1", "Pod", "test-pod", name)
        return got.get("status", {}).get("phase") == "Running"
    await ctx.eventually(running, timeout=60, what="the pod in the doomed namespace to run")
    await ctx.delete("v1", "Namespace", name)
    await _namespace_gone(ctx, name)
    recreated = await ctx.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert recreated["metadata"]["name"] == name
    pods = await ctx.list("v1", "Pod", namespace=name)
    assert not pods["items"], f"a recreated namespace still holds pods: {[p['metadata']['name'] for p in pods['items']]}"


@conformance("[sig-api-machinery] Namespaces [Serial] should ensure that all services are removed when a namespace "
             "is deleted [Conformance]", area="api-machinery")
async def namespace_deletes_services(ctx: Context) -> None:
    name = await _namespace(ctx, "nsdeletetest")
    await ctx.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "test-service"},
                      "spec": {"selector": {"foo": "bar"}, "ports": [{"port": 80, "targetPort": 80}]}}, namespace=name)
    await ctx.delete("v1", "Namespace", name)
    await _namespace_gone(ctx, name)
    await ctx.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        await ctx.get("v1", "Service", "test-service", name)
    except errors.APIError as err:
        assert errors.is_not_found(err), f"expected the service to be gone, got {err}"
    else:
        raise AssertionError("the service survived its namespace's deletion")
