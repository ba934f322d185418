"""Upstream's Lease API test (test/e2e/common/node/lease.go) and Node lifecycle
(test/e2e/node/node_lifecycle.go): pure API behaviour."""

from __future__ import annotations

from conformance.checks._confupstream_support import gone, refused
from conformance.context import Context, Obj
from conformance.registry import conformance

LEASES = ("coordination.k8s.io/v1", "Lease")


def _spec(holder: str, seconds: int) -> Obj:
    return {"holderIdentity": holder, "leaseDurationSeconds": seconds,
            "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:00:10.000000Z",
            "leaseTransitions": 0}


def _same(a: Obj, b: Obj) -> bool:
    keys = ("holderIdentity", "leaseDurationSeconds", "leaseTransitions")
    return all(a.get(k) == b.get(k) for k in keys)


@conformance("[sig-node] Lease lease API should be available [Conformance]", area="node")
async def lease_api(ctx: Context) -> None:
    name = ctx.name("lease")
    spec = _spec("holder", 30)
    await ctx.create({"apiVersion": LEASES[0], "kind": LEASES[1], "metadata": {"name": name}, "spec": spec})
    read = await ctx.get(*LEASES, name)
    assert _same(read["spec"], spec), f"the read Lease's spec differs: {read['spec']}"
    read["spec"] = {**read["spec"], "holderIdentity": "holder2", "leaseDurationSeconds": 60}
    await ctx.update(read)
    read = await ctx.get(*LEASES, name)
    assert read["spec"]["holderIdentity"] == "holder2" and read["spec"]["leaseDurationSeconds"] == 60, \
        f"the update did not show: {read['spec']}"
    await ctx.patch(*LEASES, name, {"spec": {"holderIdentity": "holder3", "leaseTransitions": 1}},
                    patch_type="strategic")
    read = await ctx.get(*LEASES, name)
    assert read["spec"]["holderIdentity"] == "holder3" and read["spec"]["leaseTransitions"] == 1, \
        f"the patch did not show: {read['spec']}"

    labelled = ctx.name("lease")
    await ctx.create({"apiVersion": LEASES[0], "kind": LEASES[1],
                      "metadata": {"name": labelled, "labels": {"deletecollection": "true"}}, "spec": _spec("x", 30)})
    listed = await ctx.list(*LEASES)
    assert sorted(l["metadata"]["name"] for l in listed["items"]) == sorted([name, labelled]), \
        f"the list found {[l['metadata']['name'] for l in listed['items']]}"
    await ctx.api.delete_collection(ctx.api.resource(*LEASES), ctx.namespace, label_selector="deletecollection=true")

    async def one_left() -> bool:
        left = await ctx.list(*LEASES)
        return [l["metadata"]["name"] for l in left["items"]] == [name]
    await ctx.eventually(one_left, what="deletecollection to remove only the labelled lease")
    await ctx.delete(*LEASES, name)
    await refused(ctx.get(*LEASES, name), 404, "NotFound", "getting the deleted Lease")


@conformance("[sig-node] Node Lifecycle should run through the lifecycle of a node [Conformance]", area="node")
async def node_lifecycle(ctx: Context) -> None:
    name = f"e2e-fake-node-{ctx.namespace}"[:63]
    # Tainted so that nothing schedules onto a node no kubelet runs.
    await ctx.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                      "spec": {"taints": [{"key": "e2e.example.com/fake", "effect": "NoSchedule"}]}})
    read = await ctx.get("v1", "Node", name)
    assert read["metadata"]["name"] == name
    await ctx.patch("v1", "Node", name, {"metadata": {"labels": {name: "patched"}}})
    found = await ctx.list("v1", "Node", label_selector=f"{name}=patched")
    assert [n["metadata"]["name"] for n in found["items"]] == [name], f"a label selector found {found['items']}"
    read = await ctx.get("v1", "Node", name)
    read["metadata"]["labels"][name] = "updated"
    updated = await ctx.update(read)
    assert updated["metadata"]["labels"][name] == "updated", "the update did not show"
    await ctx.delete("v1", "Node", name)
    await gone(ctx, "v1", "Node", name)
