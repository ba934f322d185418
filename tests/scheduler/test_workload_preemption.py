"""Workload-aware preemption (KEP-5710) in DefaultPreemption and PrioritySort, on fakes.

A pod of a PodGroup compares by the group's priority; a group with `disruptionMode: PodGroup` is
one victim, its pods on every node evicted together or not at all; victim units are ordered as
upstream's moreImportantVictim; the preempted group gets DisruptionTarget through its status.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from client.resources import PODGROUPS, PODDISRUPTIONBUDGETS
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
