"""`python -m bench.gang [--quick]`: scheduler_perf's podgroup workloads through haru's PodGroup cycle.

The shapes of scheduler_perf's gang workloads (5,000 nodes with 1,000 / 2,000 / 3,000 gangs of 3
pods, and 10 gangs of 5,000 pods) run through the real `Scheduler` in this process: its queue
(a group popped as one entity), GangScheduling's PreEnqueue and Permit barrier, the PodGroup cycle
(placement loop, simulation, commit) and one binding task per pod. What is left out is the API
server: nodes go straight into the cache, pods and PodGroups into the stores the informers would
fill, and the Bind plugin records the binding instead of POSTing it (so this is the scheduler's
own cost, not an end-to-end figure like `bench.scheduler`'s). Printed per workload: CPU seconds
of this process per pod (`time.process_time`; the machine is shared, so wall time would measure
the neighbours) and the pods/s that CPU bounds, beside issue 13's target (200 pods/s) and the
published gang-scheduler figures (measurements.md §2.7), with their caveats; and the number of
gangs left partly bound (bound pods fewer than minCount but more than none), which must be 0.
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


def _node(i: int) -> Obj:
    allocatable = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {"metadata": {"name": f"node-{i}", "uid": f"uid-node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}"}},
            "spec": {}, "status": {"allocatable": allocatable, "capacity": dict(allocatable)}}


def _gang(g: int, pods: int) -> tuple[Obj, list[Obj]]:
    name = f"gang-{g}"
    group = {"metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": pods}}}}
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

    @property
    def rate(self) -> float:
        return self.bound / self.cpu if self.cpu else 0.0


async def _run(case: str, nodes: int, gangs: int, size: int) -> Result:
    binder = _Binder()
    sched = _StoreFed(None, config.default(FEATURES), FEATURES,
                      registry={**REGISTRY, names.DEFAULT_BINDER: lambda a, h, f: binder})
    for i in range(nodes):
        sched.cache.add_node(_node(i))
    groups = [_gang(g, size) for g in range(gangs)]
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
    partial = 0
    for group, members in groups:
        count = sum(1 for p in members if p["metadata"]["uid"] in binder.bound)
        partial += 0 < count < size
    return Result(case, total, len(binder.bound), partial, cpu)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="500 nodes, 100 gangs of 3, 2 gangs of 500")
    args = parser.parse_args()
    if args.quick:
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


if __name__ == "__main__":
    main()
