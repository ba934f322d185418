"""Workload-aware preemption (KEP-5710) in DefaultPreemption and PrioritySort, on fakes.

A pod of a PodGroup compares by the group's priority; a group with `disruptionMode: PodGroup` is
one victim, its pods on every node evicted together or not at all; victim units are ordered as
upstream's moreImportantVictim; the preempted group gets DisruptionTarget through its status.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from client.resources import PODDISRUPTIONBUDGETS, PODGROUPS, PODS
from scheduler.framework import pod_priority
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import NodeToStatus, QueuedPodInfo
from scheduler.framework.node_info import PodInfo
from scheduler.framework.status import Status
from scheduler.plugins.default_preemption import DefaultPreemption, victim_units
from scheduler.plugins.priority_sort import PrioritySort
from tests.scheduler.fakes import FakeHandle, FilteringHandle, node, pod

Obj = dict[str, Any]
GATES = {"SchedulerAsyncPreemption": False, "GenericWorkload": True, "WorkloadAwarePreemption": True}
NO_WAP = {"SchedulerAsyncPreemption": False, "GenericWorkload": True, "WorkloadAwarePreemption": False}


def group(name: str, priority: int | None, mode: str = "PodGroup") -> Obj:
    spec: Obj = {"schedulingPolicy": {"gang": {"minCount": 1}}, "disruptionMode": mode}
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "generation": 1}, "spec": spec}


def running(name: str, node_name: str, *, cpu: str = "1", priority: int = 0, in_group: str = "",
            started: str = "2026-01-01T00:00:00Z", labels: dict[str, str] | None = None) -> Obj:
    spec = {"schedulingGroup": {"podGroupName": in_group}} if in_group else None
    p = pod(name, requests={"cpu": cpu}, node_name=node_name, priority=priority, spec=spec, labels=labels)
    p["status"] = {"phase": "Running", "startTime": started}
    return p


def preemptor(cpu: str = "2", priority: int = 10, in_group: str = "") -> Obj:
    spec = {"schedulingGroup": {"podGroupName": in_group}} if in_group else None
    return pod("high", requests={"cpu": cpu}, priority=priority, spec=spec)


def everywhere(handle: FilteringHandle) -> NodeToStatus:
    return NodeToStatus({n.name: Status.unschedulable("Insufficient cpu") for n in handle.snapshot})


def plugin(handle: FilteringHandle, gates: dict[str, bool] = GATES) -> DefaultPreemption:
    return DefaultPreemption({}, handle, gates, rand=random.Random(0))


def victims_on(handle: FilteringHandle, p: Obj, node_name: str, gates: dict[str, bool] = GATES,
               pdbs: list[Obj] = ()) -> tuple[list[str], int]:  # type: ignore[assignment]
    plug = plugin(handle, gates)
    plug._group_members = victim_units.GroupMembers(list(handle.snapshot),
                                                    handle.store(PODGROUPS) if gates.get("WorkloadAwarePreemption") else None)
    target = handle.snapshot.get(node_name)
    assert target is not None
    pods, violations, status = plug.select_victims_on_node(CycleState(), p, target.clone(), list(pdbs))
    assert status is None, status
    return sorted(v["metadata"]["name"] for v in pods), violations


CASES = [
    ("a group's own priority is ignored: the low group priority makes its pod a victim",
     [running("member", "n1", cpu="4", priority=100, in_group="g")], [group("g", 1, mode="Pod")],
     preemptor(), ["member"]),
    ("a pod outside any group keeps its own priority",
     [running("lone", "n1", cpu="4", priority=1)], [], preemptor(), ["lone"]),
    ("a group without a priority counts as zero",
     [running("member", "n1", cpu="4", priority=100, in_group="g")], [group("g", None, mode="Pod")],
     preemptor(), ["member"]),
    ("a pod whose group is not known yet keeps its own priority",
     [running("member", "n1", cpu="4", priority=1, in_group="missing")], [], preemptor(), ["member"]),
    ("a whole-group victim takes its pods on other nodes along",
     [running("g-a", "n1", cpu="4", priority=1, in_group="g"), running("g-b", "n2", cpu="4", priority=1, in_group="g")],
     [group("g", 1)], preemptor(), ["g-a", "g-b"]),
    ("a Pod-mode group loses only the pod in the way",
     [running("g-a", "n1", cpu="4", in_group="g"), running("g-b", "n2", cpu="4", in_group="g")],
     [group("g", 1, mode="Pod")], preemptor(), ["g-a"]),
    ("of equal priority a lone pod goes before a group",
     [running("g-a", "n1", cpu="2", in_group="g"), running("g-b", "n2", cpu="2", in_group="g"),
      running("lone", "n1", cpu="2", priority=1)],
     [group("g", 1)], preemptor(), ["lone"]),
    ("a lower-priority group goes before a higher-priority lone pod",
     [running("g-a", "n1", cpu="2", in_group="g"), running("g-b", "n2", cpu="2", in_group="g"),
      running("lone", "n1", cpu="2", priority=5)],
     [group("g", 1)], preemptor(), ["g-a", "g-b"]),
    ("of two groups of equal priority the smaller goes",
     [running("big-a", "n1", cpu="2", in_group="big"), running("big-b", "n2", cpu="1", in_group="big"),
      running("big-c", "n2", cpu="1", in_group="big"), running("small-a", "n1", cpu="2", in_group="small")],
     [group("big", 1), group("small", 1)], preemptor(), ["small-a"]),
    ("a preemptor of a group preempts with the group's priority, its own ignored",
     [running("lone", "n1", cpu="4", priority=20)], [group("mine", 50)], preemptor(priority=0, in_group="mine"),
     ["lone"]),
]


@pytest.mark.parametrize("name,existing,groups,incoming,want", CASES, ids=[c[0] for c in CASES])
def test_victims_under_workload_aware_preemption(name: str, existing: list[Obj], groups: list[Obj], incoming: Obj,
                                                  want: list[str]) -> None:
    handle = FilteringHandle([node("n1", cpu="4"), node("n2", cpu="4")], existing, stores={PODGROUPS: groups})
    assert victims_on(handle, incoming, "n1")[0] == want


def test_without_the_gate_a_group_is_neither_one_victim_nor_its_priority() -> None:
    existing = [running("g-a", "n1", cpu="4", priority=1, in_group="g"),
                running("g-b", "n2", cpu="4", priority=1, in_group="g")]
    handle = FilteringHandle([node("n1", cpu="4"), node("n2", cpu="4")], existing, stores={PODGROUPS: [group("g", 50)]})
    assert victims_on(handle, preemptor(), "n1", NO_WAP)[0] == ["g-a"]


def test_a_group_with_a_pdb_protected_pod_is_one_violation() -> None:
    existing = [running("g-a", "n1", cpu="4", in_group="g", labels={"app": "train"}),
                running("g-b", "n2", cpu="4", in_group="g", labels={"app": "train"})]
    handle = FilteringHandle([node("n1", cpu="4"), node("n2", cpu="4")], existing, stores={PODGROUPS: [group("g", 1)]})
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "default"},
              "spec": {"selector": {"matchLabels": {"app": "train"}}}, "status": {"disruptionsAllowed": 1}}
    assert victims_on(handle, preemptor(), "n1", pdbs=[budget]) == (["g-a", "g-b"], 1)


async def test_the_node_whose_victims_are_fewer_pods_wins_over_a_whole_group() -> None:
    existing = [running("g-a", "n1", cpu="4", in_group="g"), running("g-b", "n3", cpu="4", in_group="g"),
                running("lone", "n2", cpu="4", priority=1)]
    handle = FilteringHandle([node("n1", cpu="4"), node("n2", cpu="4"), node("n3", cpu="4")], existing,
                             stores={PODGROUPS: [group("g", 1)]})
    result, status = await plugin(handle).post_filter(CycleState(), preemptor(), everywhere(handle))
    assert status is None and result is not None and result.nominated_node_name == "n2"
    deleted = [c[3] for c in handle.client.calls if c[0] == "delete"]
    assert deleted == ["lone"]


async def test_a_preempted_group_is_marked_and_every_pod_of_it_is_deleted() -> None:
    existing = [running("g-a", "n1", cpu="4", in_group="g"), running("g-b", "n2", cpu="4", in_group="g"),
                running("other", "n2", cpu="0", priority=100)]
    handle = FilteringHandle([node("n1", cpu="4"), node("n2", cpu="4")], existing,
                             stores={PODGROUPS: [group("g", 1)], PODDISRUPTIONBUDGETS: []})
    result, status = await plugin(handle).post_filter(CycleState(), preemptor(cpu="4"), everywhere(handle))
    assert status is None and result is not None
    group_patches = [c for c in handle.client.calls if c[1] == "podgroups"]
    assert len(group_patches) == 1
    _, _, namespace, name, subresource, patch_type, body = group_patches[0]
    assert (namespace, name, subresource, patch_type) == ("default", "g", "status", "strategic")
    condition = body["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionTarget", "True", "PreemptionByScheduler")
    assert condition["observedGeneration"] == 1 and condition["lastTransitionTime"]
    deleted = sorted(c[3] for c in handle.client.calls if c[0] == "delete")
    assert deleted == ["g-a", "g-b"]
    # The group is marked before any of its pods goes.
    first_delete = next(i for i, c in enumerate(handle.client.calls) if c[0] == "delete")
    assert handle.client.calls.index(group_patches[0]) < first_delete


async def test_a_lone_victim_marks_no_group() -> None:
    handle = FilteringHandle([node("n1", cpu="4")], [running("g-a", "n1", cpu="4", in_group="g")],
                             stores={PODGROUPS: [group("g", 1, mode="Pod")]})
    result, status = await plugin(handle).post_filter(CycleState(), preemptor(), everywhere(handle))
    assert status is None and result is not None
    assert [c for c in handle.client.calls if c[1] == "podgroups"] == []


def queued(p: Obj, timestamp: float) -> QueuedPodInfo:
    return QueuedPodInfo(pod_info=PodInfo.of(p), timestamp=timestamp)


def test_priority_sort_reads_the_groups_priority_only_with_the_gate() -> None:
    high_group = pod("member", priority=0, spec={"schedulingGroup": {"podGroupName": "g"}})
    plain = pod("plain", priority=10)
    handle = FakeHandle(stores={PODGROUPS: [group("g", 100)]})
    aware = PrioritySort(pod_priority.for_plugin(handle, GATES))
    assert aware.less(queued(high_group, 2.0), queued(plain, 1.0))
    unaware = PrioritySort(pod_priority.for_plugin(handle, NO_WAP))
    assert unaware.less(queued(plain, 1.0), queued(high_group, 2.0))


def test_nominated_pods_count_by_their_groups_priority_when_filtering() -> None:
    from client import cache
    from scheduler.config.types import POINTS, PluginRef, Profile
    from scheduler.queue import Nominator
    from scheduler.runtime import Framework
    from tests.scheduler.fakes import node_infos

    class Full:
        name = "Full"

        def filter(self, state: CycleState, p: Obj, n: Any) -> Status | None:
            return Status.unschedulable("taken") if n.pods else None

    plugin_ = Full()
    profile = Profile("test-scheduler", points={point: [PluginRef("Full", 0)] for point in POINTS})
    groups = cache.Store()
    groups.replace([group("vip", 100)])
    nominator = Nominator()
    # Its own priority is 0; its group's 100 outranks the pod being filtered (own priority 10).
    nominator.add(PodInfo.of(pod("vip-0", priority=0, spec={"schedulingGroup": {"podGroupName": "vip"}})), "a")
    target = node_infos([node("a")])[0]
    for gates, want in ((GATES, ["taken"]), (NO_WAP, None)):
        fw = Framework(profile, registry={"Full": lambda a, h, f: plugin_}, features=gates, nominator=nominator,
                       stores=lambda resource: groups)
        status = fw.run_filter_plugins_with_nominated_pods(CycleState(), pod("p", priority=10), target)
        assert (status.reasons if status is not None else None) == want, gates


# Preemption for a whole PodGroup (the PodGroup cycle's entry point), delayed ----------------------

def bin_packing(handle: FilteringHandle, group_pods: list[Obj]) -> Any:
    """A stand-in for the cycle's simulation: first fit by CPU over the snapshot, `gone` pods removed."""
    from scheduler.framework.node_info import pod_key
    from scheduler.framework.pod_group import PodGroupAssignment

    def feasible(gone: list[Obj]) -> PodGroupAssignment | None:
        removed = {pod_key(p) for p in gone}
        free = {}
        for n in handle.snapshot:
            used = sum(i.requests.milli_cpu for i in n.pods if i.key not in removed)
            free[n.name] = n.allocatable.milli_cpu - used
        assignment = PodGroupAssignment()
        for p in group_pods:
            need = PodInfo.of(p).requests.milli_cpu
            host = next((name for name, room in free.items() if room >= need), None)
            if host is None:
                return None
            free[host] -= need
            assignment.pod_to_node[pod_key(p)] = host
        return assignment
    return feasible


def gang(name: str, priority: int, *cpus: str) -> tuple[Any, list[Obj]]:
    from scheduler.framework.pod_group import PodGroupInfo
    members = [pod(f"{name}-{i}", requests={"cpu": cpu}, spec={"schedulingGroup": {"podGroupName": name}})
               for i, cpu in enumerate(cpus)]
    return PodGroupInfo(group(name, priority), members), members


def cluster_of(existing: list[Obj], groups: list[Obj]) -> FilteringHandle:
    return FilteringHandle([node("n1", cpu="4"), node("n2", cpu="4"), node("n3", cpu="4")], existing,
                           stores={PODGROUPS: groups, PODS: existing, PODDISRUPTIONBUDGETS: []})


GROUP_CASES = [
    ("a lower-priority whole group goes before a higher-priority lone pod",
     [running("low-a", "n1", cpu="4", in_group="low"), running("low-b", "n2", cpu="4", in_group="low"),
      running("lone", "n3", cpu="4", priority=5)], [group("low", 1)], ("4",), ["low-a", "low-b"]),
    ("of equal priority the lone pod goes and the group stays",
     [running("low-a", "n1", cpu="4", in_group="low"), running("low-b", "n2", cpu="4", in_group="low"),
      running("lone", "n3", cpu="4", priority=1)], [group("low", 1)], ("4",), ["lone"]),
    ("a group needing two nodes takes the whole low gang, and the lone pod then is spared",
     [running("low-a", "n1", cpu="4", in_group="low"), running("low-b", "n2", cpu="4", in_group="low"),
      running("lone", "n3", cpu="4", priority=1)], [group("low", 1)], ("4", "4"), ["low-a", "low-b"]),
    ("a group needing all three nodes takes everything of lower priority",
     [running("low-a", "n1", cpu="4", in_group="low"), running("low-b", "n2", cpu="4", in_group="low"),
      running("lone", "n3", cpu="4", priority=1)], [group("low", 1)], ("4", "4", "4"), ["lone", "low-a", "low-b"]),
    ("a Pod-mode group's pods are lone victims: only what is needed goes",
     [running("low-a", "n1", cpu="4", in_group="low"), running("low-b", "n2", cpu="4", in_group="low"),
      running("busy", "n3", cpu="4", priority=50)], [group("low", 1, mode="Pod")], ("4",), ["low-b"]),
]


@pytest.mark.parametrize("name,existing,groups,cpus,want", GROUP_CASES, ids=[c[0] for c in GROUP_CASES])
def test_victims_for_a_whole_pod_group(name: str, existing: list[Obj], groups: list[Obj], cpus: tuple[str, ...],
                                       want: list[str]) -> None:
    handle = cluster_of(existing, groups)
    info, members = gang("high", 10, *cpus)
    plan, status = plugin(handle).group_preemption.select_victims(info, bin_packing(handle, members))
    assert status is None and plan is not None
    assert sorted(p["metadata"]["name"] for p in plan.pods) == sorted(want)
    assert len(plan.assignment.pod_to_node) == len(members)


async def test_victims_are_deleted_only_once_chosen_and_retries_wait_without_new_preemptions() -> None:
    from scheduler.plugins.default_preemption import pod_group_preemption

    existing = [running("low-a", "n1", cpu="4", in_group="low"), running("low-b", "n2", cpu="4", in_group="low"),
                running("lone", "n3", cpu="4", priority=50)]
    handle = cluster_of(existing, [group("low", 1)])
    info, members = gang("high", 10, "4", "4")
    preemption = plugin(handle)
    assignment, status = await preemption.preempt_pod_group(info, bin_packing(handle, members))
    assert status is not None and status.message == pod_group_preemption.waiting_message(2)
    assert assignment is not None and sorted(assignment.pod_to_node.values()) == ["n1", "n2"]
    await preemption.group_preemption.drain()
    deleted = sorted(c[3] for c in handle.client.calls if c[0] == "delete")
    assert deleted == ["low-a", "low-b"]
    assert [c[3] for c in handle.client.calls if c[1] == "podgroups"] == ["low"]

    # The victims are still terminating: a retry waits and chooses nothing new.
    calls = len(handle.client.calls)
    again, status = await preemption.preempt_pod_group(info, bin_packing(handle, members))
    assert again is None and status is not None and status.message == pod_group_preemption.waiting_message(2)
    assert len(handle.client.calls) == calls

    # Once they are gone the wait is over: the next attempt preempts afresh if it must.
    handle.store(PODS).replace([p for p in existing if p["metadata"]["name"] == "lone"])
    assert preemption.group_preemption.waiting_for(info.key) == 0


async def test_a_group_that_cannot_fit_even_on_an_emptied_cluster_preempts_nothing() -> None:
    from scheduler.plugins.default_preemption import pod_group_preemption

    existing = [running("low-a", "n1", cpu="4", in_group="low")]
    handle = cluster_of(existing, [group("low", 1)])
    info, members = gang("high", 10, "8")
    assignment, status = await plugin(handle).preempt_pod_group(info, bin_packing(handle, members))
    assert assignment is None and status is not None and status.message == pod_group_preemption.NOT_HELPFUL
    assert handle.client.calls == []


async def test_nothing_of_lower_priority_means_no_victims() -> None:
    from scheduler.framework.status import Code

    existing = [running("peer", "n1", cpu="4", priority=10)]
    handle = cluster_of(existing, [])
    info, members = gang("high", 10, "4", "4", "4")
    assignment, status = await plugin(handle).preempt_pod_group(info, bin_packing(handle, members))
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert handle.client.calls == []
