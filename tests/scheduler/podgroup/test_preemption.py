"""The PodGroup cycle's preemption seam on the real cache and the default profile (KEP-5710):
`feasible_without` tries the group with the given pods taken out and leaves the cache as it was;
`preempt` runs DefaultPreemption's whole-group preemption through it, and refuses a group with a
topology constraint (1.36's placement never preempts)."""

from __future__ import annotations

from typing import Any

from client.resources import PODGROUPS, PODS
from scheduler import config
from scheduler.cache import Cache
from scheduler.cycle import Algorithm
from scheduler.framework.pod_group import PodGroupInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.podgroup import preemption
from scheduler.plugins import names
from scheduler.plugins.default_preemption import pod_group_preemption
from scheduler.runtime import Framework
from tests.scheduler import fakes

Obj = dict[str, Any]
FEATURES = {"GenericWorkload": True, "GangScheduling": True, "WorkloadAwarePreemption": True,
            "TopologyAwareWorkloadScheduling": True, "SchedulerAsyncPreemption": False}


def group(name: str, priority: int, **spec: Any) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "PodGroup",
                     "priority": priority, **spec}}


def member(name: str, gang: str, node_name: str = "") -> Obj:
    p = fakes.pod(name, requests={"cpu": "2"}, node_name=node_name, spec={"schedulingGroup": {"podGroupName": gang}})
    if node_name:
        p["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
    return p


def setup(existing: list[Obj], groups: list[Obj]) -> tuple[Algorithm, Framework, Cache]:
    cache = Cache()
    for name in ("a", "b", "c"):
        cache.add_node(fakes.node(name, cpu="2", memory="4Gi"))
    for pod in existing:
        cache.add_pod(pod)
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    fw = Framework(config.default(FEATURES).profiles[0], features=FEATURES, snapshot=snapshot,
                   client=fakes.FakeClient())
    fw.store(PODGROUPS).replace(groups)
    fw.store(PODS).replace(existing)
    return Algorithm(cache, snapshot), fw, cache


LOW = [member("low-0", "low", "a"), member("low-1", "low", "b")]
HIGH = PodGroupInfo(group("high", 100), [member("high-0", "high"), member("high-1", "high")])


def test_the_group_is_tried_without_the_pods_given_and_the_cache_is_left_as_it_was() -> None:
    algorithm, fw, cache = setup(LOW, [group("low", 1)])
    feasible = preemption.feasible_without(algorithm, fw, HIGH)
    assert feasible([]) is None  # only c is free: two 2-CPU pods do not fit
    assignment = feasible(LOW)
    assert assignment is not None and len(assignment.pod_to_node) == 2
    assert cache.pod_count() == 2
    assert sorted(p.pod["metadata"]["name"] for n in algorithm.snapshot.node_infos for p in n.pods) == ["low-0", "low-1"]


async def test_the_cycle_preempts_the_whole_low_gang_and_waits() -> None:
    algorithm, fw, cache = setup(LOW, [group("low", 1)])
    nominations, status = await preemption.preempt(algorithm, fw, HIGH)
    assert status is not None and status.message == pod_group_preemption.waiting_message(2)
    assert nominations is not None and len(nominations.pod_to_node) == 2
    await fw.plugins[names.DEFAULT_PREEMPTION].group_preemption.drain()  # the evictions run in the background
    deleted = sorted(c[3] for c in fw.client.calls if c[0] == "delete")
    assert deleted == ["low-0", "low-1"]
    assert cache.pod_count() == 2  # the victims leave the cache when their deletion is seen, not before


async def test_a_group_with_a_topology_constraint_never_preempts() -> None:
    algorithm, fw, _ = setup(LOW, [group("low", 1)])
    racked = PodGroupInfo(group("high", 100, schedulingConstraints={"topology": [{"key": "rack"}]}), HIGH.pods)
    nominations, status = await preemption.preempt(algorithm, fw, racked)
    assert nominations is None and status is not None and status.message == preemption.PLACEMENT_LIMITATION
    assert fw.client.calls == []


async def test_without_workload_aware_preemption_the_cycle_gets_no_answer() -> None:
    algorithm, fw, _ = setup(LOW, [group("low", 1)])
    fw.plugins[names.DEFAULT_PREEMPTION].workload_aware = False
    assert await preemption.preempt(algorithm, fw, HIGH) == (None, None)


async def test_in_the_scheduler_an_unschedulable_gang_preempts_and_waits_nominated() -> None:
    from client import resources as api
    from scheduler.podgroup import status as group_status
    from tests.scheduler.podgroup import test_group_cycle as harness

    class DeletingClient(harness.Client):
        def __init__(self) -> None:
            super().__init__()
            self.deleted: list[str] = []

        async def delete(self, resource: Any, name: str, namespace: str | None = None, **_: Any) -> Obj:
            self.deleted.append(name)
            return {}

    from scheduler.registry import REGISTRY

    gates = {**harness.FEATURES, "WorkloadAwarePreemption": True}
    binder = harness.Binder()
    sched = harness.Offline(None, config.default(gates), gates,
                            registry={**REGISTRY, names.DEFAULT_BINDER: lambda a, h, f: binder})
    client = DeletingClient()
    sched.client = client  # type: ignore[assignment]
    fw = sched.frameworks["default-scheduler"]
    fw.client = client
    fw.events = fakes.Recorder()  # type: ignore[assignment]
    for name in ("n0", "n1"):
        sched.cache.add_node(fakes.node(name, cpu="2"))
    low = [member("low-0", "low", "a"), member("low-1", "low", "b")]
    for p, n in zip(low, ("n0", "n1")):
        p["spec"]["nodeName"] = n
        sched.cache.add_pod(p)
        sched.store(api.PODS).add(p)
    sched.store(api.PODGROUPS).add(group("low", 1))
    harness.add_group(sched, group("high", 100))
    for i in range(2):
        harness.add_pod(sched, member(f"high-{i}", "high"))
    await harness.run_once(sched)
    await fw.plugins[names.DEFAULT_PREEMPTION].group_preemption.drain()

    assert binder.bound == {}  # nothing binds while the victims are still there
    said = [c for c in harness.conditions(client, "high") if c["type"] == group_status.POD_GROUP_SCHEDULED]
    assert said and said[-1]["status"] == "False" and said[-1]["message"] == pod_group_preemption.waiting_message(2)
    assert sorted(client.deleted) == ["low-0", "low-1"]
    marked = [c for c in harness.conditions(client, "low") if c["type"] == "DisruptionTarget"]
    assert marked and marked[0]["reason"] == "PreemptionByScheduler"
    nominated = {n: patch["status"].get("nominatedNodeName") for res, n, patch in client.patches
                 if res == "pods" and "nominatedNodeName" in (patch.get("status") or {})}
    assert sorted(nominated.get(f"high-{i}") or "" for i in range(2)) == ["n0", "n1"]
