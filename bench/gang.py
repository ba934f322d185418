"""`python -m bench.gang [--quick | --case NODES GANGS PODS]`: scheduler_perf's podgroup shapes.

5,000 nodes with 1,000 / 2,000 / 3,000 gangs of 3, and 10 gangs of 5,000, through the real
`Scheduler` in this process (queue, GangScheduling, the PodGroup cycle, a binding task per pod),
without an API server: nodes, pods and PodGroups are fed to its cache and stores, Bind records.
Printed: CPU of this process per pod (the machine is shared, so not wall time), the pods/s that
bounds beside issue 13's 200, gangs left partly bound (must be 0), and measurements.md §2.7's
published figures with their caveats. `--through-api` runs the same shape end to end instead: an API
server child, `python -m scheduler`, objects over HTTP (bench/_gang_api.py).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass
from typing import Any

from client import cache as client_cache
from client import resources as api
from client.resources import Resource as ApiResource
from scheduler import config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, Resource
from scheduler.framework.status import Status
from scheduler.plugins import names
from scheduler.registry import REGISTRY
from scheduler.scheduler import Scheduler

Obj = dict[str, Any]
FEATURES = {"GenericWorkload": True, "GangScheduling": True}
TAS_FEATURES = {**FEATURES, "TopologyAwareWorkloadScheduling": True}
RACK = "topology.kubernetes.io/rack"
TARGET = 200.0  # issue 13: pods/s with zero partly bound gangs
ANCHORS = [
    ("Volcano", "~55 pods/s", "Kind on an 8-core Xeon 6230, 10,000 single-pod Jobs with the webhook off, "
                             "end to end through the API server; not a gang workload (OSPP study)"),
    ("Kueue", "~43 workloads/s", "admission (quota) rate, not pod binding; the gang is enforced at admission"),
]


class _Binder:
    name = names.DEFAULT_BINDER

    def __init__(self) -> None:
        self.bound: dict[str, str] = {}

    async def bind(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        self.bound[pod["metadata"]["uid"]] = node_name
        return None


class _StoreFed(Scheduler):
    """The real scheduler with its informer stores filled by this process."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.fed: dict[ApiResource, client_cache.Store] = {}
        super().__init__(*args, **kwargs)

    def store(self, resource: ApiResource) -> client_cache.Store:
        return self.fed.setdefault(resource, client_cache.Store())


def _node(i: int, racks: int = 0) -> Obj:
    allocatable = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    labels = {"kubernetes.io/hostname": f"node-{i}", **({RACK: f"rack-{i % racks}"} if racks else {})}
    return {"metadata": {"name": f"node-{i}", "uid": f"uid-node-{i}", "labels": labels},
            "spec": {}, "status": {"allocatable": allocatable, "capacity": dict(allocatable)}}


def _gang(g: int, pods: int, in_one_rack: bool = False) -> tuple[Obj, list[Obj]]:
    name = f"gang-{g}"
    spec: Obj = {"schedulingPolicy": {"gang": {"minCount": pods}}}
    if in_one_rack:
        spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    group = {"metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"}, "spec": spec}
    members = [{"metadata": {"name": f"{name}-{i}", "namespace": "bench", "uid": f"uid-{name}-{i}"},
                "spec": {"schedulingGroup": {"podGroupName": name}, "priority": 0, "schedulerName": "default-scheduler",
                         "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m",
                                                                                             "memory": "100Mi"}}}]},
                "status": {"phase": "Pending"}}
               for i in range(pods)]
    return group, members


@dataclass
class Result:
    case: str
    pods: int
    bound: int
    partial: int
    cpu: float
    split: int = 0  # gangs bound across more than one rack (the TAS rows)

    @property
    def rate(self) -> float:
        return self.bound / self.cpu if self.cpu else 0.0


async def _run(case: str, nodes: int, gangs: int, size: int, racks: int = 0) -> Result:
    binder = _Binder()
    features = TAS_FEATURES if racks else FEATURES
    sched = _StoreFed(None, config.default(features), features,
                      registry={**REGISTRY, names.DEFAULT_BINDER: lambda a, h, f: binder})
    for i in range(nodes):
        sched.cache.add_node(_node(i, racks))
    groups = [_gang(g, size, in_one_rack=bool(racks)) for g in range(gangs)]
    total = gangs * size
    started = time.process_time()
    loop = asyncio.get_running_loop()
    worker = loop.create_task(sched._loop())  # noqa: SLF001 - the scheduling loop alone, no informers
    for group, members in groups:
        sched.store(api.PODGROUPS).add(group)
        sched.queue.move_all_on_event(ClusterEvent(Resource.POD_GROUP, ActionType.ADD), None, group)
        for pod in members:
            sched.store(api.PODS).add(pod)
            sched.queue.add(pod)
        await asyncio.sleep(0)
    while len(binder.bound) < total:
        if worker.done():
            break
        await asyncio.sleep(0.01)
        if not sched.queue.pending_counts()["active"] and not sched._tasks and len(binder.bound) < total:  # noqa: SLF001
            break  # nothing left to try: report what bound
    cpu = time.process_time() - started
    sched.queue.close()
    worker.cancel()
    await asyncio.gather(worker, return_exceptions=True)
    partial = split = 0
    for group, members in groups:
        count = sum(1 for p in members if p["metadata"]["uid"] in binder.bound)
        partial += 0 < count < size
        if racks:  # node-i is in rack i % racks
            used = {int(binder.bound[p["metadata"]["uid"]].rsplit("-", 1)[1]) % racks
                    for p in members if p["metadata"]["uid"] in binder.bound}
            split += len(used) > 1
    return Result(case, total, len(binder.bound), partial, cpu, split)


def _tas_rows(quick: bool) -> None:
    """The TAS variant: racks of nodes, every gang constrained to one rack. Each gang is simulated in
    every rack with room (1.36's alpha has no PercentageOfPlacementsToScore), so it costs far more
    per pod than the rows above; no target is published for it."""
    cases = ([("500 nodes in 10 racks, 50 gangs x 3", 500, 10, 50, 3)] if quick else
             [("5000 nodes in 50 racks, 300 gangs x 3", 5000, 50, 300, 3),
              ("5000 nodes in 50 racks, 10 gangs x 300", 5000, 50, 10, 300)])
    print()
    print("Topology-aware variant (schedulingConstraints.topology[0].key = rack, TopologyAwareWorkloadScheduling):")
    print("| workload | pods | bound | gangs partly bound | gangs split across racks | CPU per pod | "
          "pods/s this CPU bounds |")
    print("|---|---|---|---|---|---|---|")
    for case, nodes, racks, gangs, size in cases:
        r = asyncio.run(_run(case, nodes, gangs, size, racks))
        print(f"| {r.case} | {r.pods} | {r.bound} | {r.partial} | {r.split} | "
              f"{r.cpu / max(r.bound, 1) * 1e3:.2f} ms | {r.rate:.0f} |", flush=True)


def _through_api(args: argparse.Namespace) -> None:
    from bench import _gang_api  # imported here: the in-process rows need no child processes

    shape = tuple(args.case) if args.case else (500, 100, 3) if args.quick else (5000, 1000, 3)
    _gang_api.print_rows([shape], args.quick, TARGET)  # type: ignore[list-item]
    print()
    print("Published gang-scheduler figures (measurements.md §2.7), not like for like:")
    for name, figure, caveat in ANCHORS:
        print(f"- {name}: {figure} ({caveat})")
    print("pods/s is wall-clock SchedulingThroughput over the measured phase on a shared 2-core machine (the API "
          "server, the scheduler and this process share it); CPU per pod is each process's /proc utime+stime over "
          "that phase divided by the pods bound.")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="500 nodes, 100 gangs of 3, 2 gangs of 500")
    parser.add_argument("--case", nargs=3, type=int, metavar=("NODES", "GANGS", "PODS"),
                        help="one workload of this shape instead of the list")
    parser.add_argument("--through-api", action="store_true",
                        help="a fresh API server child and `python -m scheduler`, objects created over HTTP "
                             "(default shape 5000 nodes, 1000 gangs x 3; --quick 500 nodes, 100 gangs x 3)")
    args = parser.parse_args()
    if args.through_api:
        _through_api(args)
        return
    if args.case:
        nodes, gangs, size = args.case
        cases = [(f"{nodes} nodes, {gangs} gangs x {size}", nodes, gangs, size)]
    elif args.quick:
        cases = [("500 nodes, 100 gangs x 3", 500, 100, 3), ("500 nodes, 2 gangs x 500", 500, 2, 500)]
    else:
        cases = [("5000 nodes, 1000 gangs x 3", 5000, 1000, 3), ("5000 nodes, 2000 gangs x 3", 5000, 2000, 3),
                 ("5000 nodes, 3000 gangs x 3", 5000, 3000, 3), ("5000 nodes, 10 gangs x 5000", 5000, 10, 5000)]
    print("| workload | pods | bound | gangs partly bound | CPU per pod | pods/s this CPU bounds | target |")
    print("|---|---|---|---|---|---|---|")
    for case, nodes, gangs, size in cases:
        r = asyncio.run(_run(case, nodes, gangs, size))
        print(f"| {r.case} | {r.pods} | {r.bound} | {r.partial} | {r.cpu / max(r.bound, 1) * 1e3:.2f} ms | "
              f"{r.rate:.0f} | {TARGET:.0f} |", flush=True)
    print()
    print("Published gang-scheduler figures (measurements.md §2.7), not like for like:")
    for name, figure, caveat in ANCHORS:
        print(f"- {name}: {figure} ({caveat})")
    print("CPU is this process's (time.process_time), not wall time: the machine is shared. No API server: "
          "nodes, pods and PodGroups are fed to the scheduler's cache and stores, and Bind is recorded.")
    if not getattr(args, "case", None):  # one `--case` workload (gang-core's flag) is that row alone
        _tas_rows(args.quick)


if __name__ == "__main__":
    main()
