"""Micro-benchmark of topology-aware placement alone: `python -m bench.placement [--nodes 5000 --racks 50]`.

N nodes (4 CPU) in R racks, then G gangs of P one-CPU pods (minCount P, topology key `rack`) placed
one after another by `placement.choose` over `simulation.attempt_in` with the default TAS profile,
the winners assumed in the cache; no queue, no API server (`bench.gang` has the whole cycle).
Printed: CPU of this process per pod and per gang (`time.process_time`: the machine is shared, wall
time would measure the neighbours), the pods/s that bounds, and gangs split across racks (0).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from scheduler import config
from scheduler.cache import Cache
from scheduler.cycle import Algorithm
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.pod_group import PodGroupInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.podgroup import placement, simulation
from scheduler.runtime import Framework

FEATURES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
KEY = "rack"


def _node(i: int, racks: int) -> dict[str, Any]:
    allocatable = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return {"metadata": {"name": f"node-{i}", "uid": f"uid-node-{i}",
                         "labels": {"kubernetes.io/hostname": f"node-{i}", KEY: f"rack-{i % racks}"}},
            "spec": {}, "status": {"allocatable": allocatable, "capacity": dict(allocatable)}}


def _gang(g: int, pods: int) -> PodGroupInfo:
    name = f"gang-{g}"
    members = [{"metadata": {"name": f"{name}-{i}", "namespace": "bench", "uid": f"uid-{name}-{i}"},
                "spec": {"schedulingGroup": {"podGroupName": name}, "priority": 0,
                         "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
               for i in range(pods)]
    return PodGroupInfo({"metadata": {"name": name, "namespace": "bench"},
                         "spec": {"schedulingPolicy": {"gang": {"minCount": pods}},
                                  "schedulingConstraints": {"topology": [{"key": KEY}]}}}, members)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--racks", type=int, default=50)
    parser.add_argument("--gangs", type=int, default=100)
    parser.add_argument("--pods", type=int, default=3, help="pods per gang (and its minCount)")
    parser.add_argument("--quick", action="store_true", help="200 nodes, 10 racks, 20 gangs")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.racks, args.gangs = 200, 10, 20
    cache = Cache()
    for i in range(args.nodes):
        cache.add_node(_node(i, args.racks))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    fw = Framework(config.default(FEATURES).profiles[0], features=FEATURES, snapshot=snapshot)
    algorithm = Algorithm(cache, snapshot)
    rack_of = {n.name: n.labels[KEY] for n in snapshot.node_infos}

    placed = split = unschedulable = 0
    started = time.process_time()
    for g in range(args.gangs):
        group = _gang(g, args.pods)
        choice = placement.choose(fw, CycleState(), group, snapshot.node_infos,
                                  simulation.attempt_in(algorithm, fw, group))
        if choice.status is not None or choice.attempt is None:
            unschedulable += 1
            continue
        hosts = choice.attempt.assignment.pod_to_node
        split += len({rack_of[h] for h in hosts.values()}) > 1
        for pod in group.pods:
            key = f"bench/{pod['metadata']['name']}"
            cache.assume_pod({**pod, "spec": {**pod["spec"], "nodeName": hosts[key]}})
            placed += 1
        cache.update_snapshot(snapshot)
    cpu = time.process_time() - started

    print(f"topology-aware placement: {args.nodes} nodes in {args.racks} racks, "
          f"{args.gangs} gangs x {args.pods} pods (minCount {args.pods})")
    print(f"placed pods | {placed}")
    print(f"CPU per pod | {cpu / max(placed, 1) * 1e3:.2f} ms")
    print(f"CPU per gang | {cpu / max(args.gangs, 1) * 1e3:.2f} ms")
    print(f"pods/s this CPU bounds | {placed / cpu if cpu else 0:.0f}")
    print(f"gangs split across racks | {split}")
    print(f"gangs unschedulable | {unschedulable}")
    print("CPU is this process's (time.process_time), not wall time: the machine is shared. Every rack is "
          "simulated for every gang, as 1.36's alpha does (no PercentageOfPlacementsToScore yet).")


if __name__ == "__main__":
    main()
