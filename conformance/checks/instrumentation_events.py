"""Event behaviours of upstream's test/e2e/instrumentation/core_events.go (core/v1 Events) and
events.go (events.k8s.io/v1): create, list across namespaces, patch, update a series, delete."""

from __future__ import annotations

from conformance.checks._confupstream_support import gone
from conformance.context import Context, Obj
from conformance.registry import conformance

CORE = ("v1", "Event")
NEW = ("events.k8s.io/v1", "Event")
NOW = "2026-01-01T00:00:00.000000Z"


def _core_event(ctx: Context, name: str, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "labels": labels},
            "involvedObject": {"kind": "Pod", "name": "e2e-pod", "namespace": ctx.namespace, "apiVersion": "v1"},
            "reason": "Testing", "message": "This is a test event", "type": "Normal", "count": 1,
            "source": {"component": "e2e"}, "firstTimestamp": "2026-01-01T00:00:00Z",
            "lastTimestamp": "2026-01-01T00:00:00Z", "reportingComponent": "", "reportingInstance": ""}


def _new_event(ctx: Context, name: str, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name, "labels": labels},
            "eventTime": NOW, "reportingController": "test-controller", "reportingInstance": "test-node",
            "action": "Do", "reason": "Test", "type": "Normal", "note": "This is a test event",
            "regarding": {"kind": "Pod", "name": "e2e-pod", "namespace": ctx.namespace, "apiVersion": "v1"}}


async def _across_namespaces(ctx: Context, api: tuple[str, str], selector: str) -> list[Obj]:
    found = await ctx.api.list(ctx.api.resource(*api), None, label_selector=selector)
    return [e for e in found["items"] if e["metadata"]["namespace"] == ctx.namespace]


async def _delete_collection(ctx: Context, api: tuple[str, str], selector: str) -> None:
    await ctx.api.delete_collection(ctx.api.resource(*api), ctx.namespace, label_selector=selector)

    async def emptied() -> bool:
        return not (await ctx.list(*api, label_selector=selector))["items"]
    await ctx.eventually(emptied, what="deletecollection to remove the labelled events")


@conformance("[sig-instrumentation] Events should manage the lifecycle of an event [Conformance]",
             area="instrumentation")
async def core_event_lifecycle(ctx: Context) -> None:
    name = ctx.name("event-test")
    await ctx.create(_core_event(ctx, name, {"testevent-set": "true"}))
    found = await _across_namespaces(ctx, CORE, "testevent-set=true")
    assert [e["metadata"]["name"] for e in found] == [name], f"listing across namespaces found {found}"
    await ctx.patch(*CORE, name, {"message": "This is a test event - patched"}, patch_type="strategic")
    read = await ctx.get(*CORE, name)
    assert read["message"] == "This is a test event - patched", f"the patched message did not show: {read['message']}"
    read["series"] = {"count": 100, "lastObservedTime": NOW}
    await ctx.update(read)
    read = await ctx.get(*CORE, name)
    assert (read.get("series") or {}).get("count") == 100, f"the updated series did not show: {read.get('series')}"
    await ctx.delete(*CORE, name)
    await gone(ctx, *CORE, name)
    assert not await _across_namespaces(ctx, CORE, "testevent-set=true"), "the deleted event is still listed"


@conformance("[sig-instrumentation] Events should delete a collection of events [Conformance]", area="instrumentation")
async def core_event_delete_collection(ctx: Context) -> None:
    for _ in range(3):
        await ctx.create(_core_event(ctx, ctx.name("event-test"), {"testevent-set": "true"}))
    found = await ctx.list(*CORE, label_selector="testevent-set=true")
    assert len(found["items"]) == 3, f"expected 3 labelled events, found {len(found['items'])}"
    await _delete_collection(ctx, CORE, "testevent-set=true")


@conformance("[sig-instrumentation] Events API should delete a collection of events [Conformance]",
             area="instrumentation")
async def new_event_delete_collection(ctx: Context) -> None:
    for _ in range(3):
        await ctx.create(_new_event(ctx, ctx.name("event-test"), {"testevent-set": "true"}))
    found = await ctx.list(*NEW, label_selector="testevent-set=true")
    assert len(found["items"]) == 3, f"expected 3 labelled events, found {len(found['items'])}"
    await _delete_collection(ctx, NEW, "testevent-set=true")
    left = await ctx.list(*CORE, label_selector="testevent-set=true")
    assert not left["items"], "core/v1 still lists events deleted through events.k8s.io"
