"""Watch behaviours of upstream's test/e2e/apimachinery/watch.go, on ConfigMaps: several watchers
by label, restarting from a resourceVersion, starting in the past, objects leaving and re-entering a
selector, and concurrent watches agreeing on order."""

from __future__ import annotations

import asyncio

from conformance.checks._confupstream_support import watch_events
from conformance.context import Context, Obj
from conformance.registry import conformance

LABEL = "watch-this-configmap"


def _configmap(name: str, label_value: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {LABEL: label_value}}}


def _summary(events: list[Obj]) -> list[tuple[str, str, str]]:
    return [(e["type"], e["object"]["metadata"]["name"], (e["object"].get("data") or {}).get("mutation", ""))
            for e in events]


async def _mutate(ctx: Context, name: str, value: str) -> Obj:
    return await ctx.patch("v1", "ConfigMap", name, {"data": {"mutation": value}})


@conformance("[sig-api-machinery] Watchers should observe add, update, and delete watch notifications on configmaps "
             "[Conformance]", area="api-machinery")
async def watch_by_label(ctx: Context) -> None:
    cms = ctx.api.resource("v1", "ConfigMap")
    since = (await ctx.list("v1", "ConfigMap"))["metadata"]["resourceVersion"]
    a, b = "e2e-watch-test-configmap-a", "e2e-watch-test-configmap-b"
    await ctx.create(_configmap(a, "multiple-watchers-A"))
    await _mutate(ctx, a, "1")
    await _mutate(ctx, a, "2")
    await ctx.delete("v1", "ConfigMap", a)
    await ctx.create(_configmap(b, "multiple-watchers-B"))
    await ctx.delete("v1", "ConfigMap", b)
    expected_a = [("ADDED", a, ""), ("MODIFIED", a, "1"), ("MODIFIED", a, "2"), ("DELETED", a, "2")]
    expected_b = [("ADDED", b, ""), ("DELETED", b, "")]
    watchers = await asyncio.gather(
        watch_events(ctx, cms, ctx.namespace, since, lambda evs: len(evs) >= 4, label_selector=f"{LABEL}=multiple-watchers-A"),
        watch_events(ctx, cms, ctx.namespace, since, lambda evs: len(evs) >= 2, label_selector=f"{LABEL}=multiple-watchers-B"),
        watch_events(ctx, cms, ctx.namespace, since, lambda evs: len(evs) >= 6,
                     label_selector=f"{LABEL} in (multiple-watchers-A,multiple-watchers-B)"))
    assert _summary(watchers[0]) == expected_a, f"watcher A saw {_summary(watchers[0])}"
    assert _summary(watchers[1]) == expected_b, f"watcher B saw {_summary(watchers[1])}"
    assert _summary(watchers[2]) == expected_a + expected_b, f"watcher A-or-B saw {_summary(watchers[2])}"


@conformance("[sig-api-machinery] Watchers should be able to start watching from a specific resource version "
             "[Conformance]", area="api-machinery")
async def watch_from_version(ctx: Context) -> None:
    name = "e2e-watch-test-resource-version"
    await ctx.create(_configmap(name, "from-resource-version"))
    first = await _mutate(ctx, name, "1")
    await _mutate(ctx, name, "2")
    await ctx.delete("v1", "ConfigMap", name)
    # From the first modification's version: only what came after it.
    events = await watch_events(ctx, ctx.api.resource("v1", "ConfigMap"), ctx.namespace,
                                first["metadata"]["resourceVersion"], lambda evs: len(evs) >= 2,
                                label_selector=f"{LABEL}=from-resource-version")
    assert _summary(events) == [("MODIFIED", name, "2"), ("DELETED", name, "2")], \
        f"a watch from the first update's resourceVersion saw {_summary(events)}"


@conformance("[sig-api-machinery] Watchers should be able to restart watching from the last resource version "
             "observed by the previous watch [Conformance]", area="api-machinery")
async def watch_restart(ctx: Context) -> None:
    cms = ctx.api.resource("v1", "ConfigMap")
    selector = f"{LABEL}=watch-closed-and-restarted"
    name = "e2e-watch-test-watch-closed"
    since = (await ctx.list("v1", "ConfigMap"))["metadata"]["resourceVersion"]
    await ctx.create(_configmap(name, "watch-closed-and-restarted"))
    await _mutate(ctx, name, "1")
    first = await watch_events(ctx, cms, ctx.namespace, since, lambda evs: len(evs) >= 2, label_selector=selector)
    assert _summary(first) == [("ADDED", name, ""), ("MODIFIED", name, "1")], f"the first watch saw {_summary(first)}"
    last_seen = first[-1]["object"]["metadata"]["resourceVersion"]
    # Changes while no watch is open, then a new watch from the last version the old one saw.
    await _mutate(ctx, name, "2")
    await ctx.delete("v1", "ConfigMap", name)
    second = await watch_events(ctx, cms, ctx.namespace, last_seen, lambda evs: len(evs) >= 2, label_selector=selector)
    assert _summary(second) == [("MODIFIED", name, "2"), ("DELETED", name, "2")], \
        f"the restarted watch saw {_summary(second)}"


@conformance("[sig-api-machinery] Watchers should observe an object deletion if it stops meeting the requirements of "
             "the selector [Conformance]", area="api-machinery")
async def watch_label_changes(ctx: Context) -> None:
    cms = ctx.api.resource("v1", "ConfigMap")
    selector = f"{LABEL}=label-changed-and-restored"
    name = "e2e-watch-test-label-changed"
    since = (await ctx.list("v1", "ConfigMap"))["metadata"]["resourceVersion"]
    await ctx.create(_configmap(name, "label-changed-and-restored"))
    await _mutate(ctx, name, "1")
    await ctx.patch("v1", "ConfigMap", name, {"metadata": {"labels": {LABEL: "wrong-value"}}})
    await _mutate(ctx, name, "2")  # not seen: the object is outside the selector
    await ctx.patch("v1", "ConfigMap", name, {"metadata": {"labels": {LABEL: "label-changed-and-restored"}}})
    await _mutate(ctx, name, "3")
    await ctx.delete("v1", "ConfigMap", name)
    events = await watch_events(ctx, cms, ctx.namespace, since, lambda evs: len(evs) >= 6, label_selector=selector)
    assert _summary(events) == [("ADDED", name, ""), ("MODIFIED", name, "1"), ("DELETED", name, "1"),
                                ("ADDED", name, "2"), ("MODIFIED", name, "3"), ("DELETED", name, "3")], \
        f"a watch on the label saw {_summary(events)}"


@conformance("[sig-api-machinery] Watchers should receive events on concurrent watches in same order [Conformance]",
             area="api-machinery")
async def watch_order(ctx: Context) -> None:
    cms = ctx.api.resource("v1", "ConfigMap")
    since = (await ctx.list("v1", "ConfigMap"))["metadata"]["resourceVersion"]
    writes = 40

    async def produce() -> None:
        names = [f"e2e-watch-order-{i % 5}" for i in range(writes)]
        existing: set[str] = set()
        for i, name in enumerate(names):
            if name in existing and i % 3 == 0:
                await ctx.delete("v1", "ConfigMap", name)
                existing.discard(name)
            elif name in existing:
                await _mutate(ctx, name, str(i))
            else:
                await ctx.create(_configmap(name, "order"))
                existing.add(name)
    await produce()
    first = await watch_events(ctx, cms, ctx.namespace, since, lambda evs: len(evs) >= writes)
    versions = [e["object"]["metadata"]["resourceVersion"] for e in first]
    # A watch started at each event's version sees exactly the rest of the first watch's events.
    for start in range(0, len(first) - 1, 7):
        tail = versions[start + 1:]
        again = await watch_events(ctx, cms, ctx.namespace, versions[start], lambda evs, n=len(tail): len(evs) >= n)
        assert [e["object"]["metadata"]["resourceVersion"] for e in again] == tail, \
            f"a watch from resourceVersion {versions[start]} saw another order than the first watch"
