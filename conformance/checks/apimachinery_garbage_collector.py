"""Garbage collector behaviours of upstream's test/e2e/apimachinery/garbage_collector.go: background,
foreground and orphan propagation for a Deployment's ReplicaSet and a ReplicationController's pods,
a dependency cycle, and dependents kept alive by a second, valid owner."""

from __future__ import annotations

from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import PAUSE, gone, pod
from conformance.context import Context, Obj
from conformance.registry import conformance

HOLD = "e2e.example.com/hold"  # a finalizer the check sets and removes itself


def _template(labels: dict[str, str]) -> Obj:
    return {"metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": PAUSE}], "terminationGracePeriodSeconds": 1}}


def _rc(name: str, replicas: int, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": labels, "template": _template(labels)}}


def _deployment(name: str, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": _template(labels)}}


async def _pods(ctx: Context, selector: str) -> list[Obj]:
    return (await ctx.list("v1", "Pod", label_selector=selector))["items"]


async def _count(ctx: Context, api_version: str, kind: str, selector: str, count: int, what: str) -> list[Obj]:
    async def reached() -> list[Obj] | bool:
        items = (await ctx.list(api_version, kind, label_selector=selector))["items"]
        live = [i for i in items if not i["metadata"].get("deletionTimestamp")]
        assert len(live) == count and len(items) == count, f"{len(items)} {kind}s ({len(live)} not deleting)"
        return items or True
    found = await ctx.eventually(reached, timeout=60, what=what)
    return found if isinstance(found, list) else []


def _owners(obj: Obj) -> list[str]:
    return [o["name"] for o in obj["metadata"].get("ownerReferences") or []]


@conformance("[sig-api-machinery] Garbage collector should delete RS created by deployment when not orphaning "
             "[Conformance]", area="api-machinery")
async def gc_deployment_background(ctx: Context) -> None:
    labels = {"gc-test": "deployment-background"}
    await ctx.create(_deployment("simpletest-deployment", labels))
    await _count(ctx, "apps/v1", "ReplicaSet", "gc-test=deployment-background", 1, "the deployment's ReplicaSet")
    await _count(ctx, "v1", "Pod", "gc-test=deployment-background", 2, "the deployment's pods")
    await ctx.delete("apps/v1", "Deployment", "simpletest-deployment", propagation_policy="Background")
    await _count(ctx, "apps/v1", "ReplicaSet", "gc-test=deployment-background", 0, "the ReplicaSet to be collected")
    await _count(ctx, "v1", "Pod", "gc-test=deployment-background", 0, "the pods to be collected")


@conformance("[sig-api-machinery] Garbage collector should orphan RS created by deployment when "
             "deleteOptions.PropagationPolicy is Orphan [Conformance]", area="api-machinery")
async def gc_deployment_orphan(ctx: Context) -> None:
    labels = {"gc-test": "deployment-orphan"}
    await ctx.create(_deployment("simpletest-deployment", labels))
    await _count(ctx, "apps/v1", "ReplicaSet", "gc-test=deployment-orphan", 1, "the deployment's ReplicaSet")
    await ctx.delete("apps/v1", "Deployment", "simpletest-deployment", propagation_policy="Orphan")
    await gone(ctx, "apps/v1", "Deployment", "simpletest-deployment")

    async def orphaned() -> bool:
        sets = (await ctx.list("apps/v1", "ReplicaSet", label_selector="gc-test=deployment-orphan"))["items"]
        assert len(sets) == 1 and not sets[0]["metadata"].get("deletionTimestamp"), f"ReplicaSets: {sets}"
        assert not _owners(sets[0]), f"the ReplicaSet still names owners {_owners(sets[0])}"
        return True
    await ctx.eventually(orphaned, what="the ReplicaSet to be orphaned, not deleted")
    await _count(ctx, "v1", "Pod", "gc-test=deployment-orphan", 2, "the pods to stay")


@conformance("[sig-api-machinery] Garbage collector should delete pods created by rc when not orphaning "
             "[Conformance]", area="api-machinery")
async def gc_rc_background(ctx: Context) -> None:
    labels = {"gc-test": "rc-background"}
    await ctx.create(_rc("simpletest.rc", 2, labels))
    await _count(ctx, "v1", "Pod", "gc-test=rc-background", 2, "the controller's pods")
    await ctx.delete("v1", "ReplicationController", "simpletest.rc", propagation_policy="Background")
    await _count(ctx, "v1", "Pod", "gc-test=rc-background", 0, "the pods to be collected")


@conformance("[sig-api-machinery] Garbage collector should orphan pods created by rc if delete options say so "
             "[Conformance]", area="api-machinery")
async def gc_rc_orphan(ctx: Context) -> None:
    labels = {"gc-test": "rc-orphan"}
    await ctx.create(_rc("simpletest.rc", 10, labels))
    await _count(ctx, "v1", "Pod", "gc-test=rc-orphan", 10, "the controller's pods")
    await ctx.delete("v1", "ReplicationController", "simpletest.rc", propagation_policy="Orphan")
    await gone(ctx, "v1", "ReplicationController", "simpletest.rc")

    async def orphaned() -> bool:
        pods = await _pods(ctx, "gc-test=rc-orphan")
        assert len(pods) == 10, f"{len(pods)} pods left, expected all 10"
        owned = [p["metadata"]["name"] for p in pods if _owners(p)]
        assert not owned, f"pods still name an owner: {owned}"
        return True
    await ctx.eventually(orphaned, what="the pods to be orphaned")


@conformance("[sig-api-machinery] Garbage collector should keep the rc around until all its pods are deleted if the "
             "deleteOptions says so [Conformance]", area="api-machinery")
async def gc_rc_foreground(ctx: Context) -> None:
    labels = {"gc-test": "rc-foreground"}
    await ctx.create(_rc("simpletest.rc", 3, labels))
    pods = await _count(ctx, "v1", "Pod", "gc-test=rc-foreground", 3, "the controller's pods")
    held = pods[0]["metadata"]["name"]
    # One pod carries a finalizer of the check's own: it cannot go until the check lets it, and
    # with foreground deletion neither can its owner.
    await ctx.patch("v1", "Pod", held, {"metadata": {"finalizers": [HOLD]}})

    async def release() -> None:
        try:
            await ctx.patch("v1", "Pod", held, {"metadata": {"finalizers": None}})
        except Exception:
            pass
    ctx.defer(release)
    await ctx.delete("v1", "ReplicationController", "simpletest.rc", propagation_policy="Foreground")

    async def waiting() -> bool:
        rc = await ctx.get("v1", "ReplicationController", "simpletest.rc")
        assert rc["metadata"].get("deletionTimestamp"), "the controller is not being deleted"
        assert "foregroundDeletion" in (rc["metadata"].get("finalizers") or []), \
            f"the controller lacks the foregroundDeletion finalizer: {rc['metadata'].get('finalizers')}"
        left = await _pods(ctx, "gc-test=rc-foreground")
        assert [p["metadata"]["name"] for p in left] == [held], \
            f"the other pods should be gone and only the held one left: {[p['metadata']['name'] for p in left]}"
        return True
    await ctx.eventually(waiting, timeout=60, what="the controller to wait for its last pod")
    await ctx.patch("v1", "Pod", held, {"metadata": {"finalizers": None}})
    await gone(ctx, "v1", "ReplicationController", "simpletest.rc", timeout=60)
    assert not await _pods(ctx, "gc-test=rc-foreground"), "pods outlived their foreground-deleted controller"


@conformance("[sig-api-machinery] Garbage collector should not delete dependents that have both valid owner and "
             "owner that's waiting for dependents to be deleted [Conformance]", area="api-machinery")
async def gc_multiple_owners(ctx: Context) -> None:
    first = await ctx.create(_rc("simpletest-rc-to-be-deleted", 6, {"gc-test": "multi-owner"}))
    second = await ctx.create(_rc("simpletest-rc-to-stay", 0, {"gc-test": "multi-owner-stay"}))
    pods = await _count(ctx, "v1", "Pod", "gc-test=multi-owner", 6, "the first controller's pods")
    shared = sorted(p["metadata"]["name"] for p in pods)[:3]
    stay_ref = {"apiVersion": "v1", "kind": "ReplicationController", "name": second["metadata"]["name"],
                "uid": second["metadata"]["uid"]}
    for name in shared:
        async def add_owner(name: str = name) -> Obj:
            current = await ctx.get("v1", "Pod", name)
            current["metadata"]["ownerReferences"] = [*current["metadata"]["ownerReferences"], stay_ref]
            return await ctx.update(current)
        await retry_on_conflict(add_owner)
    await ctx.delete("v1", "ReplicationController", first["metadata"]["name"], propagation_policy="Foreground")
    await gone(ctx, "v1", "ReplicationController", first["metadata"]["name"], timeout=60)

    async def survivors() -> bool:
        left = await _pods(ctx, "gc-test=multi-owner")
        names = sorted(p["metadata"]["name"] for p in left)
        assert names == shared, f"pods left {names}, expected only those with a valid owner {shared}"
        deleting = [p["metadata"]["name"] for p in left if p["metadata"].get("deletionTimestamp")]
        assert not deleting, f"pods with a valid owner are being deleted: {deleting}"
        for p in left:
            assert _owners(p) == [second["metadata"]["name"]], f"{p['metadata']['name']} names {_owners(p)}"
        return True
    await ctx.eventually(survivors, timeout=60, what="only the pods with a valid owner to survive")


@conformance("[sig-api-machinery] Garbage collector should not be blocked by dependency circle [Conformance]",
             area="api-machinery")
async def gc_dependency_circle(ctx: Context) -> None:
    names = ["pod1", "pod2", "pod3"]
    created = {n: await ctx.create(pod(n, labels={"gc-test": "circle"})) for n in names}

    def ref(name: str) -> Obj:
        return {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": created[name]["metadata"]["uid"],
                "blockOwnerDeletion": True}
    # pod1 is owned by pod3, pod2 by pod1, pod3 by pod2.
    for owned, owner in (("pod1", "pod3"), ("pod2", "pod1"), ("pod3", "pod2")):
        await ctx.patch("v1", "Pod", owned, {"metadata": {"ownerReferences": [ref(owner)]}})
    await ctx.delete("v1", "Pod", "pod1", grace_period_seconds=0)

    async def all_gone() -> bool:
        left = await _pods(ctx, "gc-test=circle")
        assert not left, f"pods left: {[p['metadata']['name'] for p in left]}"
        return True
    await ctx.eventually(all_gone, timeout=60, what="the whole ownership circle to be collected")
