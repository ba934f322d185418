"""`python -m bench.gang --through-api`: the gang rows with the API server and the scheduler as children.

The in-process rows of `bench.gang` feed the scheduler's stores directly; this mode measures the
same shape end to end, as `bench.scheduler` does its workloads (and with its helpers): a fresh API
server child with GenericWorkload on, `python -m scheduler` with GenericWorkload and GangScheduling
as another child, and this process POSTing the Nodes, then each gang's PodGroup and its pods, and
watching the pods bind. Printed per row: pods/s over the measured phase (scheduler_perf's
SchedulingThroughput average), gangs partly bound (must be 0), and each process's CPU per pod.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench import _scheduler_objects as objs
from bench._nodes_side import write_kubeconfig
from bench._server_process import ServerProcess
from bench.scheduler import FULL, QUICK, Cluster, create_nodes, measure, progress, start_child

GATES = "GenericWorkload=true,GangScheduling=true"
NAMESPACE = "bench"
Obj = dict[str, Any]


def pod_group(name: str, min_count: int) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def member(name: str, group: str) -> Obj:
    body = objs.pod(name, NAMESPACE)
    body["spec"]["schedulingGroup"] = {"podGroupName": group}
    return body


@dataclass
class ApiResult:
    case: str
    pods: int
    bound: int
    partial: int
    rate: float  # pods/s, SchedulingThroughput's average over the measured phase
    cpu: dict[str, float]  # process -> CPU seconds over the measured phase
    wall: float
    notes: list[str]

    def per_pod_ms(self, process: str) -> float:
        return self.cpu.get(process, 0.0) / max(self.bound, 1) * 1e3


async def run_case(nodes: int, gangs: int, size: int, quick: bool) -> ApiResult:
    sizes = QUICK if quick else FULL
    work_dir = Path(tempfile.mkdtemp(prefix="bench-gang-api-"))
    notes: list[str] = []
    case = f"{nodes} nodes, {gangs} gangs x {size} (through the API)"
    apiserver = await ServerProcess.start_apiserver(work_dir / "data", extra=("--feature-gates", GATES))
    progress(f"API server serving {apiserver.url} (pid {apiserver.pid})")
    kubeconfig = write_kubeconfig(work_dir / "kubeconfig", apiserver.url)
    ctx: Cluster | None = None
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            ctx = Cluster(sizes, work_dir, session, apiserver, notes=notes, name="gang")
            ctx.scheduler = await start_child(
                "scheduler", ["-m", "scheduler", "--kubeconfig", str(kubeconfig), "--feature-gates", GATES,
                              "--secure-port", "0"], work_dir / "scheduler.log")
            await objs.create_one(session, ctx.url, objs.namespace(NAMESPACE))
            await create_nodes(ctx, "node-", nodes)
            groups = [f"gang-{g}" for g in range(gangs)]

            async def create(_: Any) -> int:
                # Each gang's PodGroup, then its pods: the order a Job controller writes them.
                bodies: list[Obj] = []
                for name in groups:
                    bodies.append(pod_group(name, size))
                    bodies += [member(f"{name}-{i}", name) for i in range(size)]
                made = await objs.create_all(session, ctx.url, bodies, sizes.clients)  # type: ignore[union-attr]
                notes.append(made.describe("PodGroups and pods"))
                return gangs * size - made.failed

            m = await measure(ctx, NAMESPACE, create)
            # A gang is partly bound when some but not all of its pods got a node.
            bound_per_group: dict[str, int] = {}
            for name in await _bound_pods(session, ctx.url):
                group = name.rsplit("-", 1)[0]
                bound_per_group[group] = bound_per_group.get(group, 0) + 1
            partial = sum(1 for n in bound_per_group.values() if 0 < n < size)
            cpu = {k: v for k, v in m.phase.cpu.items()}
            rate = m.summary.average
            if m.summary.samples == 0:  # over in under a second: no one-second sample, so bound / wall
                rate = m.bound / m.seconds if m.seconds else 0.0
                notes.append("pods/s is bound / wall: the phase ended before the first one-second sample")
            return ApiResult(case, gangs * size, m.bound, partial, rate, cpu, m.phase.wall, notes)
    finally:
        if ctx is not None and ctx.scheduler is not None:
            await ctx.scheduler.stop()
        await apiserver.stop()
        shutil.rmtree(work_dir, ignore_errors=True)


async def _bound_pods(session: aiohttp.ClientSession, url: str) -> list[str]:
    async with session.get(f"{url}/api/v1/namespaces/{NAMESPACE}/pods") as resp:
        listed = await resp.json()
    return [p["metadata"]["name"] for p in listed.get("items") or [] if (p.get("spec") or {}).get("nodeName")]


def print_rows(cases: list[tuple[int, int, int]], quick: bool, target: float) -> None:
    print("| workload | pods | bound | gangs partly bound | pods/s | target | scheduler CPU per pod | "
          "pods/s the scheduler's CPU bounds | API server CPU per pod | bench CPU per pod |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for nodes, gangs, size in cases:
        r = asyncio.run(run_case(nodes, gangs, size, quick))
        results.append(r)
        print(f"| {r.case} | {r.pods} | {r.bound} | {r.partial} | {r.rate:.0f} | {target:.0f} | "
              f"{r.per_pod_ms('scheduler'):.2f} ms | {1e3 / max(r.per_pod_ms('scheduler'), 1e-9):.0f} | "
              f"{r.per_pod_ms('API server'):.2f} ms | "
              f"{r.per_pod_ms('bench (this process)'):.2f} ms |", flush=True)
    for r in results:
        for note in r.notes:
            print(f"- {r.case}: {note}")
        print(f"- {r.case}: CPU over the measured phase ({r.wall:.1f} s wall): " + ", ".join(
            f"{name} {sec:.1f} s ({sec / r.wall:.2f} cores)" for name, sec in r.cpu.items()))
