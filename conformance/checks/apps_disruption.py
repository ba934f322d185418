"""PodDisruptionBudget behaviours of upstream's test/e2e/apps/disruption.go: the API, the
disruption controller's status, and evictions it allows or blocks."""

from __future__ import annotations

from client import errors
from conformance.checks._confcore_support import running_pods, template, update_retrying
from conformance.context import Context, Obj
from conformance.registry import conformance

POLICY = "policy/v1"


def _pdb(name: str, labels: dict[str, str], **spec: object) -> Obj:
    return {"apiVersion": POLICY, "kind": "PodDisruptionBudget", "metadata": {"name": name, "labels": {"e2e": "pdb"}},
            "spec": {"selector": {"matchLabels": dict(labels)}, **spec}}


async def _bare_pods(ctx: Context, labels: dict[str, str], count: int) -> list[Obj]:
    for i in range(count):
        await ctx.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}", "labels": dict(labels)},
                          "spec": template(labels)["spec"]})
    return await running_pods(ctx, labels, count)


async def _allowed(ctx: Context, name: str, want: int) -> Obj:
    async def probe() -> Obj:
        pdb = await ctx.get(POLICY, "PodDisruptionBudget", name)
        status = pdb.get("status") or {}
        assert status.get("observedGeneration", 0) >= pdb["metadata"]["generation"], "generation not observed yet"
        assert status.get("disruptionsAllowed") == want, f"disruptionsAllowed {status.get('disruptionsAllowed')}, want {want}"
        return pdb
    return await ctx.eventually(probe, what=f"PDB {name} allowing {want} disruptions")


async def _evict(ctx: Context, pod: str) -> None:
    path = ctx.api.resource("v1", "Pod").path(ctx.namespace, pod, "eviction")
    await ctx.api.request("POST", path, body={"apiVersion": POLICY, "kind": "Eviction",
                                              "metadata": {"name": pod, "namespace": ctx.namespace}})


@conformance("[sig-apps] DisruptionController should create a PodDisruptionBudget [Conformance]", area="apps")
async def pdb_create(ctx: Context) -> None:
    name = ctx.name("foo")
    await ctx.create(_pdb(name, {"foo": "bar"}, minAvailable=2))
    await _allowed(ctx, name, 0)
    updated = await update_retrying(ctx, POLICY, "PodDisruptionBudget", name,
                                    lambda pdb: pdb["spec"].update(minAvailable=3))
    assert updated["spec"]["minAvailable"] == 3, "the update did not land"
    patched = await ctx.patch(POLICY, "PodDisruptionBudget", name, {"spec": {"minAvailable": 4}})
    assert patched["spec"]["minAvailable"] == 4, "the patch did not land"
    await ctx.delete(POLICY, "PodDisruptionBudget", name)
    try:
        await ctx.get(POLICY, "PodDisruptionBudget", name)
    except errors.APIError as err:
        assert errors.is_not_found(err), f"expected NotFound after delete, got {err}"
    else:
        raise AssertionError("the PodDisruptionBudget is still there after delete")


@conformance("[sig-apps] DisruptionController should observe PodDisruptionBudget status updated [Conformance]",
             area="apps")
async def pdb_status_observed(ctx: Context) -> None:
    labels = {"foo": "bar"}
    await _bare_pods(ctx, labels, 3)
    name = ctx.name("foo")
    await ctx.create(_pdb(name, labels, minAvailable=1))
    pdb = await _allowed(ctx, name, 2)
    status = pdb["status"]
    assert (status.get("currentHealthy"), status.get("desiredHealthy"), status.get("expectedPods")) == (3, 1, 3), \
        f"status {status}"


@conformance("[sig-apps] DisruptionController should update/patch PodDisruptionBudget status [Conformance]",
             area="apps")
async def pdb_status_update(ctx: Context) -> None:
    name = ctx.name("foo")
    await ctx.create(_pdb(name, {"foo": "bar"}, minAvailable=1))
    await _allowed(ctx, name, 0)
    updated = await update_retrying(ctx, POLICY, "PodDisruptionBudget", name,
                                    lambda pdb: pdb["status"].update(disruptedPods={"foo": "2026-01-01T00:00:00Z"}),
                                    subresource="status")
    assert updated["status"].get("disruptedPods") == {"foo": "2026-01-01T00:00:00Z"}, \
        f"PUT status answered {updated['status']}"
    patched = await ctx.patch(POLICY, "PodDisruptionBudget", name, {"status": {"disruptedPods": None}},
                              subresource="status")
    assert not patched["status"].get("disruptedPods"), f"PATCH status left {patched['status'].get('disruptedPods')}"
    read = await ctx.get(POLICY, "PodDisruptionBudget", name, subresource="status")
    assert read["kind"] == "PodDisruptionBudget" and not read["status"].get("disruptedPods")


@conformance("[sig-apps] DisruptionController Listing PodDisruptionBudgets for all namespaces should list and "
             "delete a collection of PodDisruptionBudgets [Conformance]", area="apps")
async def pdb_collection(ctx: Context) -> None:
    names = [ctx.name("foo") for _ in range(3)]
    for name in names:
        await ctx.create(_pdb(name, {"foo": "bar"}, minAvailable=1))
    resource = ctx.api.resource(POLICY, "PodDisruptionBudget")
    everywhere = await ctx.api.list(resource, None, label_selector="e2e=pdb")
    mine = sorted(p["metadata"]["name"] for p in everywhere["items"] if p["metadata"]["namespace"] == ctx.namespace)
    assert mine == sorted(names), f"listing in all namespaces found {mine}"
    await ctx.api.delete_collection(resource, ctx.namespace, label_selector="e2e=pdb")
    left = await ctx.list(POLICY, "PodDisruptionBudget")
    assert not left["items"], f"deletecollection left {[p['metadata']['name'] for p in left['items']]}"


@conformance("[sig-apps] DisruptionController should block an eviction until the PDB is updated to allow it "
             "[Conformance]", area="apps")
async def pdb_blocks_eviction(ctx: Context) -> None:
    labels = {"foo": "bar"}
    name = ctx.name("foo")
    await ctx.create(_pdb(name, labels, minAvailable=3))
    pods = await _bare_pods(ctx, labels, 3)
    await _allowed(ctx, name, 0)
    victim = pods[0]["metadata"]["name"]
    try:
        await _evict(ctx, victim)
    except errors.APIError as err:
        assert err.code == 429, f"an eviction the PDB forbids answered {err.code}, want 429 TooManyRequests"
    else:
        raise AssertionError("an eviction went through although the PDB allows no disruption")
    await ctx.patch(POLICY, "PodDisruptionBudget", name, {"spec": {"minAvailable": 2}})
    await _allowed(ctx, name, 1)
    await _evict(ctx, victim)

    async def evicted() -> bool:
        try:
            pod = await ctx.get("v1", "Pod", victim)
        except errors.APIError as err:
            return errors.is_not_found(err)
        return bool(pod["metadata"].get("deletionTimestamp"))
    await ctx.eventually(evicted, what=f"pod {victim} evicted")
