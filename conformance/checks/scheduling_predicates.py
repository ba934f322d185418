"""Scheduling predicates of upstream's test/e2e/scheduling/predicates.go and test/e2e/network/hostport.go,
with pods that really schedule onto the cluster's nodes: a nodeSelector that matches a labelled node
and one that matches none, host ports that do and do not conflict, and upstream's precondition of
two untainted nodes (test/e2e/architecture/conformance.go)."""

from __future__ import annotations

from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import pod
from conformance.context import Context, Obj
from conformance.registry import conformance


async def _schedulable_nodes(ctx: Context) -> list[Obj]:
    nodes = (await ctx.list("v1", "Node"))["items"]
    return [n for n in nodes if not n["spec"].get("unschedulable") and not any(
        t.get("effect") in ("NoSchedule", "NoExecute") for t in n["spec"].get("taints") or [])]


async def _node_of(ctx: Context, name: str) -> str:
    async def placed() -> str:
        return (await ctx.get("v1", "Pod", name))["spec"].get("nodeName") or ""
    return await ctx.eventually(placed, timeout=60, what=f"pod {name} to be scheduled")


async def _unschedulable(ctx: Context, name: str) -> Obj:
    async def refused() -> Obj | None:
        got = await ctx.get("v1", "Pod", name)
        assert not got["spec"].get("nodeName"), f"the pod was scheduled onto {got['spec']['nodeName']}"
        scheduled = [c for c in got.get("status", {}).get("conditions") or [] if c["type"] == "PodScheduled"]
        return got if scheduled and scheduled[0]["status"] == "False" and \
            scheduled[0].get("reason") == "Unschedulable" else None
    return await ctx.eventually(refused, timeout=60, what=f"the scheduler to find no node for {name}")


@conformance("[sig-architecture] Conformance Tests should have at least two untainted nodes [Conformance]",
             area="scheduling")
async def two_untainted_nodes(ctx: Context) -> None:
    nodes = await _schedulable_nodes(ctx)
    assert len(nodes) >= 2, f"only {len(nodes)} schedulable untainted nodes: {[n['metadata']['name'] for n in nodes]}"


@conformance("[sig-scheduling] SchedulerPredicates [Serial] validates that NodeSelector is respected if not matching "
             "[Conformance]", area="scheduling")
async def node_selector_not_matching(ctx: Context) -> None:
    name = ctx.name("restricted-pod")
    await ctx.create(pod(name, nodeSelector={"e2e.example.com/label": "nonempty"}))
    await _unschedulable(ctx, name)


@conformance("[sig-scheduling] SchedulerPredicates [Serial] validates that NodeSelector is respected if matching "
             "[Conformance]", area="scheduling", serial=True)
async def node_selector_matching(ctx: Context) -> None:
    # Serial: the check labels a node, which every other check's pods would see.
    nodes = await _schedulable_nodes(ctx)
    target = nodes[-1]["metadata"]["name"]
    key = f"kubernetes.io/e2e-{ctx.namespace}"

    async def label(value: str | None) -> Obj:
        return await ctx.patch("v1", "Node", target, {"metadata": {"labels": {key: value}}})
    await retry_on_conflict(lambda: label("42"))
    ctx.defer(lambda: label(None))
    name = ctx.name("with-labels")
    await ctx.create(pod(name, nodeSelector={key: "42"}))
    assert await _node_of(ctx, name) == target, "the pod was not scheduled onto the only node with its label"


def _host_port_pod(name: str, node: str, port: int, host_ip: str, protocol: str) -> Obj:
    manifest = pod(name, nodeSelector={"kubernetes.io/hostname": node})
    manifest["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": port, "hostIP": host_ip,
                                                   "protocol": protocol}]
    return manifest


@conformance("[sig-network] HostPort validates that there is no conflict between pods with same hostPort but "
             "different hostIP and protocol [LinuxOnly] [Conformance]", area="network")
async def host_port_no_conflict(ctx: Context) -> None:
    node = (await _schedulable_nodes(ctx))[0]["metadata"]["labels"]["kubernetes.io/hostname"]
    port = 54321
    for suffix, host_ip, protocol in (("1", "127.0.0.1", "TCP"), ("2", "127.0.0.2", "TCP"), ("3", "127.0.0.2", "UDP")):
        await ctx.create(_host_port_pod(f"pod{suffix}", node, port, host_ip, protocol))
    for suffix in "123":
        assert await _node_of(ctx, f"pod{suffix}"), f"pod{suffix} was not scheduled"


@conformance("[sig-scheduling] SchedulerPredicates [Serial] validates that there exists conflict between pods with "
             "same hostPort and protocol but one using 0.0.0.0 hostIP [Conformance]", area="scheduling")
async def host_port_conflict(ctx: Context) -> None:
    node = (await _schedulable_nodes(ctx))[0]["metadata"]["labels"]["kubernetes.io/hostname"]
    port = 54322
    await ctx.create(_host_port_pod("pod4", node, port, "0.0.0.0", "TCP"))
    assert await _node_of(ctx, "pod4")
    await ctx.create(_host_port_pod("pod5", node, port, "127.0.0.1", "TCP"))
    await _unschedulable(ctx, "pod5")
