"""DaemonSet and ControllerRevision behaviours of upstream's test/e2e/apps/daemon_set.go and
controller_revision.go. Upstream marks them [Serial] because some label nodes; only the one that
does (node selection) is serial here, the others only read the nodes."""

from __future__ import annotations

from conformance.checks._confcore_support import (APPS, HTTPD, HTTPD_NEW, check_status_subresource, owner_uids,
                                                  pods, selector, update_retrying, workload)
from conformance.context import Context, Obj
from conformance.registry import conformance

# Taints a DaemonSet pod tolerates by default (the DaemonSet controller adds these tolerations).
_TOLERATED = {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
              "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure",
              "node.kubernetes.io/unschedulable", "node.kubernetes.io/network-unavailable"}
_DS = "[sig-apps] Daemon set [Serial] "


async def daemon_nodes(ctx: Context, node_selector: dict[str, str] | None = None) -> set[str]:
    """The nodes a plain DaemonSet pod may land on: no taint it does not tolerate, matching labels."""
    nodes = (await ctx.list("v1", "Node"))["items"]
    chosen = set()
    for node in nodes:
        taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") in ("NoSchedule", "NoExecute")]
        labels = node["metadata"].get("labels") or {}
        if all(t["key"] in _TOLERATED for t in taints) and all(labels.get(k) == v for k, v in (node_selector or {}).items()):
            chosen.add(node["metadata"]["name"])
    return chosen


async def on_every_node(ctx: Context, labels: dict[str, str], nodes: set[str], image: str | None = None,
                        timeout: float = 45) -> list[Obj]:
    async def probe() -> tuple[list[Obj]]:  # a tuple: truthy even when no pod is the right answer
        found = await pods(ctx, labels)
        placed = {p["spec"].get("nodeName") for p in found if (p.get("status") or {}).get("phase") == "Running"}
        assert placed == nodes and len(found) == len(nodes), \
            f"running daemon pods on {sorted(n for n in placed if n)} ({len(found)} pods), want one on each of {sorted(nodes)}"
        if image:
            assert all(p["spec"]["containers"][0]["image"] == image for p in found), "pods of the old template remain"
        return (found,)
    return (await ctx.eventually(probe, timeout=timeout, what=f"a daemon pod on each of {len(nodes)} nodes"))[0]


def _daemon_set(name: str, labels: dict[str, str], image: str = HTTPD, **spec: object) -> Obj:
    return workload("DaemonSet", name, labels, None, image=image, **spec)


@conformance(_DS + "should run and stop simple daemon [Conformance]", area="apps")
async def daemonset_simple(ctx: Context) -> None:
    name = ctx.name("daemon-set")
    labels = {"daemonset-name": name}
    nodes = await daemon_nodes(ctx)
    assert nodes, "no node can run a DaemonSet pod"
    await ctx.create(_daemon_set(name, labels))
    placed = await on_every_node(ctx, labels, nodes)
    await ctx.delete("v1", "Pod", placed[0]["metadata"]["name"])
    revived = await on_every_node(ctx, labels, nodes)
    assert placed[0]["metadata"]["name"] not in {p["metadata"]["name"] for p in revived}, "the deleted pod is still there"


@conformance(_DS + "should run and stop complex daemon [Conformance]", area="apps", serial=True)
async def daemonset_node_selection(ctx: Context) -> None:
    name = ctx.name("daemon-set")
    labels = {"daemonset-name": name}
    key = "daemonset-color"
    candidates = sorted(await daemon_nodes(ctx))
    assert candidates, "no node can run a DaemonSet pod"
    node = candidates[0]

    async def unlabel() -> None:
        await ctx.patch("v1", "Node", node, {"metadata": {"labels": {key: None}}})
    ctx.defer(unlabel)
    await ctx.create(_daemon_set(name, labels, template={
        "metadata": {"labels": labels}, "spec": {"nodeSelector": {key: "blue"}, "terminationGracePeriodSeconds": 0,
                                                 "containers": [{"name": "httpd", "image": HTTPD}]}}))
    await on_every_node(ctx, labels, set())
    await ctx.patch("v1", "Node", node, {"metadata": {"labels": {key: "blue"}}})
    await on_every_node(ctx, labels, {node})
    # Relabel the node and the pod's selector with it: the pod moves with the label.
    await ctx.patch("v1", "Node", node, {"metadata": {"labels": {key: "green"}}})
    await on_every_node(ctx, labels, set())
    await ctx.patch(APPS, "DaemonSet", name, {"spec": {"template": {"spec": {"nodeSelector": {key: "green"}}},
                                                       "updateStrategy": {"type": "RollingUpdate"}}})
    await on_every_node(ctx, labels, {node})


@conformance(_DS + "should retry creating failed daemon pods [Conformance]", area="apps")
async def daemonset_retry_failed(ctx: Context) -> None:
    name = ctx.name("daemon-set")
    labels = {"daemonset-name": name}
    nodes = await daemon_nodes(ctx)
    await ctx.create(_daemon_set(name, labels))
    placed = await on_every_node(ctx, labels, nodes)
    victim = placed[0]
    await update_retrying(ctx, "v1", "Pod", victim["metadata"]["name"], lambda p: p["status"].update(phase="Failed"),
                          subresource="status")

    async def replaced() -> bool:
        names = {p["metadata"]["name"] for p in await pods(ctx, labels)
                 if (p.get("status") or {}).get("phase") == "Running"}
        assert victim["metadata"]["name"] not in names, "the failed pod was not replaced yet"
        return len(names) == len(nodes)
    await ctx.eventually(replaced, timeout=45, what="the failed daemon pod deleted and created again")


@conformance(_DS + "should update pod when spec was updated and update strategy is RollingUpdate [Conformance]",
             area="apps")
async def daemonset_rolling_update(ctx: Context) -> None:
    name = ctx.name("daemon-set")
    labels = {"daemonset-name": name}
    nodes = await daemon_nodes(ctx)
    await ctx.create(_daemon_set(name, labels, updateStrategy={"type": "RollingUpdate"}))
    await on_every_node(ctx, labels, nodes)
    await ctx.patch(APPS, "DaemonSet", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": HTTPD_NEW}]}}}}, patch_type="strategic")
    await on_every_node(ctx, labels, nodes, image=HTTPD_NEW, timeout=60)


@conformance(_DS + "should rollback without unnecessary restarts [Conformance]", area="apps")
async def daemonset_rollback(ctx: Context) -> None:
    name = ctx.name("daemon-set")
    labels = {"daemonset-name": name}
    nodes = await daemon_nodes(ctx)
    await ctx.create(_daemon_set(name, labels, updateStrategy={"type": "RollingUpdate"}))
    first = {p["metadata"]["name"] for p in await on_every_node(ctx, labels, nodes)}
    # An image that never becomes ready on a real cluster; the rollout is reverted at once, so the
    # pods not yet replaced must survive the rollback untouched.
    await ctx.patch(APPS, "DaemonSet", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": "foo:non-existent"}]}}}}, patch_type="strategic")
    await ctx.patch(APPS, "DaemonSet", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": HTTPD}]}}}}, patch_type="strategic")
    final = await on_every_node(ctx, labels, nodes, image=HTTPD, timeout=60)
    kept = first & {p["metadata"]["name"] for p in final}
    # maxUnavailable 1: at most one pod may have been replaced before the rollback.
    assert len(kept) >= len(nodes) - 1, f"the rollback restarted {len(nodes) - len(kept)} pods; at most 1 may restart"


@conformance(_DS + "should list and delete a collection of DaemonSets [Conformance]", area="apps")
async def daemonset_collection(ctx: Context) -> None:
    name = ctx.name("daemon-set")
    labels = {"daemonset-name": name}
    await ctx.create(_daemon_set(name, labels))
    resource = ctx.api.resource(APPS, "DaemonSet")
    listed = await ctx.api.list(resource, None, label_selector=selector(labels))
    assert [d["metadata"]["name"] for d in listed["items"]] == [name], "listing by label did not find the DaemonSet"
    await ctx.api.delete_collection(resource, ctx.namespace, label_selector=selector(labels))

    async def gone() -> bool:
        return not (await ctx.list(APPS, "DaemonSet", label_selector=selector(labels)))["items"]
    await ctx.eventually(gone, what="the DaemonSets deleted by collection")


@conformance(_DS + "should verify changes to a daemon set status [Conformance]", area="apps")
async def daemonset_status(ctx: Context) -> None:
    name = ctx.name("daemon-set")
    await ctx.create(_daemon_set(name, {"daemonset-name": name}))
    await check_status_subresource(ctx, "DaemonSet", name)


@conformance("[sig-apps] ControllerRevision [Serial] should manage the lifecycle of a ControllerRevision [Conformance]",
             area="apps")
async def controller_revision_lifecycle(ctx: Context) -> None:
    name = ctx.name("e2e-ds")
    labels = {"daemonset-name": name}
    ds = await ctx.create(_daemon_set(name, labels))
    uid = ds["metadata"]["uid"]

    async def revisions(count: int) -> list[Obj]:
        async def probe() -> list[Obj]:
            found = [r for r in (await ctx.list(APPS, "ControllerRevision", label_selector=selector(labels)))["items"]
                     if uid in owner_uids(r)]
            assert len(found) == count, f"{len(found)} ControllerRevisions of the DaemonSet, want {count}"
            return found
        return await ctx.eventually(probe, what=f"{count} ControllerRevisions")

    [first] = await revisions(1)
    patched = await ctx.patch(APPS, "ControllerRevision", first["metadata"]["name"],
                              {"metadata": {"labels": {"e2e": "patched"}}})
    assert patched["metadata"]["labels"].get("e2e") == "patched", "the label patch did not land"
    extra = {"apiVersion": APPS, "kind": "ControllerRevision",
             "metadata": {"name": f"{name}-extra", "labels": {**labels}, "ownerReferences": [
                 {"apiVersion": APPS, "kind": "DaemonSet", "name": name, "uid": uid, "controller": True,
                  "blockOwnerDeletion": True}]},
             "data": first["data"], "revision": first["revision"] + 1}
    await ctx.create(extra)
    await revisions(2)
    await ctx.delete(APPS, "ControllerRevision", first["metadata"]["name"])
    [left] = await revisions(1)
    updated = await update_retrying(ctx, APPS, "ControllerRevision", left["metadata"]["name"],
                                    lambda r: r["metadata"]["labels"].update(e2e="updated"))
    assert updated["metadata"]["labels"]["e2e"] == "updated", "the label update did not land"
    # A template change makes the controller write a new revision.
    await ctx.patch(APPS, "DaemonSet", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": HTTPD_NEW}]}}}}, patch_type="strategic")
    await revisions(2)
    await ctx.api.delete_collection(ctx.api.resource(APPS, "ControllerRevision"), ctx.namespace,
                                    label_selector=f"{selector(labels)},e2e=updated")
    [current] = await revisions(1)
    assert current["revision"] == 3, f"the current ControllerRevision has revision {current['revision']}, want 3"
