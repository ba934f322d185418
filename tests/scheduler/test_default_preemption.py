"""DefaultPreemption: victim selection, PDBs, candidate ordering, eligibility, the API calls and
the FailedScheduling text, on a FilteringHandle whose Filter step is a real CPU check."""

from __future__ import annotations

import random
from typing import Any

import pytest

from client.resources import PODDISRUPTIONBUDGETS, PODGROUPS, PODS
from scheduler import registry
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import NodeToStatus
from scheduler.framework.node_info import PodInfo
from scheduler.framework.status import Code, Status
from scheduler.plugins import names
from scheduler.plugins.default_preemption import DefaultPreemption, ordering, pdb
from scheduler.plugins.default_preemption.ordering import Victims
from tests.scheduler.fakes import FilteringHandle, node, pod

Obj = dict[str, Any]
SYNC = {"SchedulerAsyncPreemption": False}


def running(name: str, node_name: str, *, cpu: str = "1", priority: int = 0, started: str = "2026-01-01T00:00:00Z",
            labels: dict[str, str] | None = None, **kw: Any) -> Obj:
    p = pod(name, requests={"cpu": cpu}, node_name=node_name, priority=priority, labels=labels, **kw)
    p["status"] = {"phase": "Running", "startTime": started}
    return p


def budget(name: str, labels: dict[str, str], allowed: int, *, namespace: str = "default",
           disrupted: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": labels}},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted or {}}}


def unschedulable_everywhere(handle: FilteringHandle, reason: str = "Insufficient cpu") -> NodeToStatus:
    return NodeToStatus({n.name: Status.unschedulable(reason) for n in handle.snapshot})


def plugin_for(handle: FilteringHandle, features: dict[str, bool] | None = None, **args: Any) -> DefaultPreemption:
    p = DefaultPreemption(args, handle, SYNC if features is None else features, rand=random.Random(0))
    return p


def names_of(pods: list[Obj]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


# Victim selection on one node ------------------------------------------------------------------

VICTIM_CASES = [
    ("the only lower-priority pod is the victim",
     [running("low", "n1", cpu="4", priority=1)], pod("high", requests={"cpu": "2"}, priority=10),
     [], ["low"], 0, None),
    ("pods of equal or higher priority are never victims, so nothing is found",
     [running("same", "n1", cpu="2", priority=10), running("higher", "n1", cpu="2", priority=20)],
     pod("high", requests={"cpu": "2"}, priority=10), [], [], 0, "No preemption victims found for incoming pod"),
    ("the most important pod is reprieved when the pod fits without it",
     [running("a", "n1", cpu="2", priority=5), running("b", "n1", cpu="2", priority=1)],
     pod("high", requests={"cpu": "2"}, priority=10), [], ["b"], 0, None),
    ("of two equal-priority pods the one running longer is reprieved",
     [running("young", "n1", cpu="2", priority=1, started="2026-02-01T00:00:00Z"),
      running("old", "n1", cpu="2", priority=1, started="2026-01-01T00:00:00Z")],
     pod("high", requests={"cpu": "2"}, priority=10), [], ["young"], 0, None),
    ("every victim goes when the pod needs the whole node, most important first",
     [running("a", "n1", cpu="2", priority=1), running("b", "n1", cpu="2", priority=3)],
     pod("high", requests={"cpu": "4"}, priority=10), [], ["b", "a"], 0, None),
    ("the pod does not fit even on an emptied node: the filter's verdict is the node's status",
     [running("low", "n1", cpu="1", priority=1)], pod("huge", requests={"cpu": "8"}, priority=10),
     [], [], 0, "Insufficient cpu"),
    ("a PDB-protected pod is reprieved before an unprotected one of higher priority",
     [running("guarded", "n1", cpu="2", priority=1, labels={"app": "db"}),
      running("free", "n1", cpu="2", priority=5)],
     pod("high", requests={"cpu": "2"}, priority=10), [budget("db", {"app": "db"}, 0)], ["free"], 0, None),
    ("a PDB-protected pod that must go counts as one violation",
     [running("guarded", "n1", cpu="4", priority=1, labels={"app": "db"})],
     pod("high", requests={"cpu": "2"}, priority=10), [budget("db", {"app": "db"}, 0)], ["guarded"], 1, None),
    ("a budget with disruptions left is no violation",
     [running("guarded", "n1", cpu="4", priority=1, labels={"app": "db"})],
     pod("high", requests={"cpu": "2"}, priority=10), [budget("db", {"app": "db"}, 1)], ["guarded"], 0, None),
    ("a pod already in the budget's disruptedPods does not spend it again",
     [running("guarded", "n1", cpu="4", priority=1, labels={"app": "db"})],
     pod("high", requests={"cpu": "2"}, priority=10),
     [budget("db", {"app": "db"}, 0, disrupted={"guarded": "2026-01-01T00:00:00Z"})], ["guarded"], 0, None),
    ("a budget in another namespace protects nothing here",
     [running("guarded", "n1", cpu="4", priority=1, labels={"app": "db"})],
     pod("high", requests={"cpu": "2"}, priority=10), [budget("db", {"app": "db"}, 0, namespace="other")],
     ["guarded"], 0, None),
    ("victims that break and keep budgets come back sorted by importance",
     [running("guarded", "n1", cpu="2", priority=1, labels={"app": "db"}),
      running("free", "n1", cpu="2", priority=5)],
     pod("high", requests={"cpu": "4"}, priority=10), [budget("db", {"app": "db"}, 0)], ["free", "guarded"], 1,
     None),
]


@pytest.mark.parametrize("name,existing,preemptor,pdbs,want,want_violations,want_reason", VICTIM_CASES,
                         ids=[c[0] for c in VICTIM_CASES])
def test_select_victims_on_node(name: str, existing: list[Obj], preemptor: Obj, pdbs: list[Obj], want: list[str],
                                want_violations: int, want_reason: str | None) -> None:
    handle = FilteringHandle([node("n1", cpu="4")], existing)
    plugin = plugin_for(handle)
    original = handle.snapshot.get("n1")
    before = [i.key for i in original.pods]
    victims, violations, status = plugin.select_victims_on_node(CycleState(), preemptor, original.clone(), pdbs)
    assert names_of(victims) == want
    assert violations == want_violations
    assert (status.reasons if status else None) == ([want_reason] if want_reason else None)
    assert [i.key for i in original.pods] == before  # the snapshot's node is left alone


def test_a_higher_priority_pod_nominated_to_the_node_keeps_its_room() -> None:
    existing = [running("a", "n1", cpu="2", priority=1), running("b", "n1", cpu="2", priority=2)]
    preemptor = pod("p", requests={"cpu": "2"}, priority=10)
    alone = FilteringHandle([node("n1", cpu="4")], existing)
    crowded = FilteringHandle([node("n1", cpu="4")], existing,
                              nominated={"n1": [pod("earlier", requests={"cpu": "2"}, priority=20)]})
    results = [names_of(plugin_for(h).select_victims_on_node(CycleState(), preemptor, h.snapshot.get("n1").clone(),
                                                             [])[0]) for h in (alone, crowded)]
    assert results == [["a"], ["b", "a"]]


def test_selection_runs_the_pre_filter_extensions_for_every_removal_and_reprieve() -> None:
    calls: list[tuple[str, str]] = []

    class Recording(FilteringHandle):
        def run_pre_filter_extension_remove_pod(self, state, p, to_remove, n):  # type: ignore[no-untyped-def]
            calls.append(("remove", to_remove.pod["metadata"]["name"]))

        def run_pre_filter_extension_add_pod(self, state, p, to_add, n):  # type: ignore[no-untyped-def]
            calls.append(("add", to_add.pod["metadata"]["name"]))

    handle = Recording([node("n1", cpu="4")], [running("a", "n1", cpu="2", priority=5),
                                               running("b", "n1", cpu="2", priority=1)])
    plugin_for(handle).select_victims_on_node(CycleState(), pod("p", requests={"cpu": "2"}, priority=10),
                                              handle.snapshot.get("n1").clone(), [])
    assert calls == [("remove", "a"), ("remove", "b"), ("add", "a"), ("add", "b"), ("remove", "b")]


def test_a_failing_pre_filter_extension_is_an_error_of_the_dry_run() -> None:
    class Broken(FilteringHandle):
        def run_pre_filter_extension_remove_pod(self, state, p, to_remove, n):  # type: ignore[no-untyped-def]
            return Status.as_error("state of PodTopologySpread is missing")

    handle = Broken([node("n1", cpu="4")], [running("a", "n1", cpu="4", priority=1)])
    victims, _, status = plugin_for(handle).select_victims_on_node(
        CycleState(), pod("p", requests={"cpu": "2"}, priority=10), handle.snapshot.get("n1").clone(), [])
    assert victims == [] and status is not None and status.code is Code.ERROR
    assert status.message == "state of PodTopologySpread is missing"


# PDB matching ------------------------------------------------------------------------------------

SELECTOR_CASES = [
    ("matchLabels that all match select the pod", {"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
    ("one differing label deselects it", {"matchLabels": {"a": "1", "b": "3"}}, {"a": "1", "b": "2"}, False),
    ("an empty selector matches nothing, for a PDB", {}, {"a": "1"}, False),
    ("In matches one of its values", {"matchExpressions": [{"key": "a", "operator": "In", "values": ["0", "1"]}]},
     {"a": "1"}, True),
    ("NotIn matches a pod without the key", {"matchExpressions": [{"key": "a", "operator": "NotIn",
                                                                   "values": ["1"]}]}, {"b": "1"}, True),
    ("Exists needs the key", {"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"b": "1"}, False),
    ("DoesNotExist refuses the key", {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": "1"},
     False),
]


@pytest.mark.parametrize("name,selector,labels,want", SELECTOR_CASES, ids=[c[0] for c in SELECTOR_CASES])
def test_pdb_selector(name: str, selector: Obj, labels: dict[str, str], want: bool) -> None:
    assert pdb.selector_matches(selector, labels) is want


def test_an_invalid_pdb_selector_protects_no_pod() -> None:
    victim = PodInfo.of(running("v", "n1", labels={"app": "db"}))
    broken = budget("bad", {}, 0)
    broken["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}
    assert pdb.split_by_violation([victim], [broken]) == ([], [victim])


def test_one_budget_is_spent_across_victims_in_order() -> None:
    first, second = (PodInfo.of(running(n, "n1", labels={"app": "db"})) for n in ("first", "second"))
    violating, fine = pdb.split_by_violation([first, second], [budget("db", {"app": "db"}, 1)])
    assert (violating, fine) == ([second], [first])


# Candidate ordering ----------------------------------------------------------------------------

def v(*pods: tuple[int, str], violations: int = 0) -> Victims:
    return Victims([running(f"p{i}", "x", priority=prio, started=start) for i, (prio, start) in enumerate(pods)],
                   violations)


T1, T2, T3 = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"
ORDER_CASES = [
    ("the node with fewer PDB violations wins over lower priorities",
     {"a": v((1, T1), violations=1), "b": v((5, T1))}, "b"),
    ("then the node whose highest-priority victim is lowest",
     {"a": v((5, T1)), "b": v((3, T1), (3, T1))}, "b"),
    ("then the smallest sum of priorities",
     {"a": v((3, T1), (2, T1)), "b": v((3, T1), (1, T1))}, "b"),
    ("negative priorities are summed shifted, so fewer victims of the same priority win",
     {"a": v((-5, T1), (-5, T1)), "b": v((-5, T1))}, "b"),
    ("then the fewest victims",
     {"a": v((3, T1), (0, T1), (0, T1)), "b": v((3, T1), (0, T1))}, "b"),
    ("then the latest start among the highest-priority victims",
     {"a": v((3, T1), (1, T3)), "b": v((3, T2), (1, T1))}, "b"),
    ("a full tie goes to the first node",
     {"a": v((3, T1)), "b": v((3, T1))}, "a"),
]


@pytest.mark.parametrize("name,nodes,want", ORDER_CASES, ids=[c[0] for c in ORDER_CASES])
def test_pick_one_node(name: str, nodes: dict[str, Victims], want: str) -> None:
    assert ordering.pick_one_node(nodes) == want


# How many candidates ---------------------------------------------------------------------------

@pytest.mark.parametrize("num_nodes,percentage,absolute,want", [
    (10, 10, 100, 10),      # the absolute floor, capped by the node count
    (5000, 10, 100, 500),   # ten percent of a big cluster
    (500, 10, 100, 100),    # ten percent is below the floor
    (50, 0, 3, 3),
], ids=["few nodes: all of them", "10% of 5000", "floor of 100", "absolute only"])
def test_number_of_candidates(num_nodes: int, percentage: int, absolute: int, want: int) -> None:
    plugin = plugin_for(FilteringHandle(), minCandidateNodesPercentage=percentage, minCandidateNodesAbsolute=absolute)
    offset, wanted = plugin.offset_and_num_candidates(num_nodes)
    assert wanted == want and 0 <= offset < num_nodes


def test_the_dry_run_stops_once_enough_candidates_respect_every_pdb() -> None:
    nodes = [node(f"n{i}", cpu="2") for i in range(6)]
    pods = [running(f"low{i}", f"n{i}", cpu="2", priority=1) for i in range(6)]
    handle = FilteringHandle(nodes, pods)
    plugin = plugin_for(handle, minCandidateNodesPercentage=0, minCandidateNodesAbsolute=2)
    candidates, _, errs = plugin.evaluator.dry_run(CycleState(), pod("p", requests={"cpu": "1"}, priority=10),
                                                   list(handle.snapshot), [], 4, 2)
    assert list(candidates) == ["n4", "n5"] and errs == []


def test_the_dry_run_keeps_looking_while_every_candidate_breaks_a_pdb() -> None:
    nodes = [node(f"n{i}", cpu="2") for i in range(3)]
    pods = [running("guarded", "n0", cpu="2", priority=1, labels={"app": "db"}),
            running("guarded2", "n1", cpu="2", priority=1, labels={"app": "db"}),
            running("free", "n2", cpu="2", priority=1)]
    handle = FilteringHandle(nodes, pods)
    candidates, _, _ = plugin_for(handle).evaluator.dry_run(
        CycleState(), pod("p", requests={"cpu": "1"}, priority=10), list(handle.snapshot),
        [budget("db", {"app": "db"}, 0)], 0, 1)
    assert list(candidates) == ["n2", "n0"]  # PDB-respecting candidates first


# Eligibility -----------------------------------------------------------------------------------

def terminating_victim(name: str, node_name: str, *, reason: str = "PreemptionByScheduler") -> Obj:
    p = running(name, node_name, priority=1)
    p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    p["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": reason}]
    return p


ELIGIBLE_CASES = [
    ("a pod with preemptionPolicy Never may not preempt",
     pod("p", priority=10, spec={"preemptionPolicy": "Never"}), [], None,
     (False, "not eligible due to preemptionPolicy=Never.")),
    ("a pod with no nomination may preempt", pod("p", priority=10), [terminating_victim("t", "n1")], None, (True, "")),
    ("a nominated pod waits while its victims terminate",
     pod("p", priority=10), [terminating_victim("t", "n1")], "n1",
     (False, "not eligible due to a terminating pod on the nominated node.")),
    ("a pod terminating for another reason does not hold it back",
     pod("p", priority=10), [terminating_victim("t", "n1", reason="EvictionByEvictionAPI")], "n1", (True, "")),
    ("an unresolvable nominated node lets it preempt again",
     pod("p", priority=10), [terminating_victim("t", "n1")], "n1-unresolvable", (True, "")),
]


@pytest.mark.parametrize("name,preemptor,existing,nominated,want", ELIGIBLE_CASES,
                         ids=[c[0] for c in ELIGIBLE_CASES])
def test_eligible_to_preempt_others(name: str, preemptor: Obj, existing: list[Obj], nominated: str | None,
                                    want: tuple[bool, str]) -> None:
    handle = FilteringHandle([node("n1")], existing)
    status = None
    if nominated:
        preemptor["status"]["nominatedNodeName"] = "n1"
        if nominated.endswith("-unresolvable"):
            status = Status.unresolvable("node(s) didn't match Pod's node affinity/selector")
    assert plugin_for(handle).eligible_to_preempt_others(preemptor, status) == want


# PostFilter end to end on the fake handle ------------------------------------------------------

async def test_post_filter_evicts_the_victim_and_nominates_the_node() -> None:
    low = running("low", "n1", cpu="4", priority=1)
    low["metadata"]["generation"] = 1
    high = pod("high", requests={"cpu": "2"}, priority=10)
    high["spec"]["schedulerName"] = "default-scheduler"
    nominated_low = pod("nominated-low", priority=0)
    nominated_low["status"]["nominatedNodeName"] = "n1"
    handle = FilteringHandle([node("n1", cpu="4")], [low], nominated={"n1": [nominated_low]})
    result, status = await plugin_for(handle).post_filter(CycleState(), high, unschedulable_everywhere(handle))
    assert status is None and result is not None and result.nominated_node_name == "n1"
    patch, delete, clear = handle.client.calls
    assert patch[:6] == ("patch", "pods", "default", "low", "status", "strategic")
    (condition,) = patch[6]["status"]["conditions"]
    assert {k: condition[k] for k in ("type", "status", "reason", "message", "observedGeneration")} == {
        "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod", "observedGeneration": 1}
    assert condition["lastTransitionTime"].endswith("Z")
    assert delete == ("delete", "pods", "default", "low", {})  # no grace override: the pod's own
    assert clear == ("patch", "pods", "default", "nominated-low", "status", "merge",
                     {"status": {"nominatedNodeName": None}})
    assert handle.events.events == [("low", "Normal", "Preempted", "Preempted by pod uid-default-high on node n1")]


async def test_a_victim_already_gone_is_no_error_and_gets_no_event() -> None:
    handle = FilteringHandle([node("n1", cpu="4")], [running("low", "n1", cpu="4", priority=1)])
    handle.client.missing.add("low")
    result, status = await plugin_for(handle).post_filter(CycleState(), pod("high", requests={"cpu": "2"}, priority=10),
                                                          unschedulable_everywhere(handle))
    assert status is None and result is not None and result.nominated_node_name == "n1"
    assert [c[0] for c in handle.client.calls] == ["patch"] and handle.events.events == []


async def test_a_failed_eviction_is_the_cycles_error_when_synchronous() -> None:
    handle = FilteringHandle([node("n1", cpu="4")], [running("low", "n1", cpu="4", priority=1)])
    handle.client.failing.add("low")
    result, status = await plugin_for(handle).post_filter(CycleState(), pod("high", requests={"cpu": "2"}, priority=10),
                                                          unschedulable_everywhere(handle))
    assert result is None and status is not None and status.code is Code.ERROR
    assert status.message == "preemption: 500 InternalError: pods 'low' could not be written"


async def test_a_waiting_victim_is_rejected_not_deleted() -> None:
    class Waiting:
        def __init__(self) -> None:
            self.rejections: list[tuple[str, str]] = []

        def reject(self, plugin: str, message: str) -> None:
            self.rejections.append((plugin, message))

    waiting = Waiting()
    low = running("low", "n1", cpu="4", priority=1)
    handle = FilteringHandle([node("n1", cpu="4")], [low], waiting={low["metadata"]["uid"]: waiting})
    await plugin_for(handle).post_filter(CycleState(), pod("high", requests={"cpu": "2"}, priority=10),
                                         unschedulable_everywhere(handle))
    assert waiting.rejections == [("DefaultPreemption", "preempted")] and handle.client.calls == []
    assert handle.events.events[0][2] == "Preempted"


async def test_the_best_of_several_nodes_is_chosen() -> None:
    nodes = [node("n1", cpu="2"), node("n2", cpu="2"), node("n3", cpu="2")]
    pods = [running("mid", "n1", cpu="2", priority=5), running("lowest", "n2", cpu="2", priority=1),
            running("guarded", "n3", cpu="2", priority=0, labels={"app": "db"})]
    handle = FilteringHandle(nodes, pods, stores={PODDISRUPTIONBUDGETS: [budget("db", {"app": "db"}, 0)]})
    result, status = await plugin_for(handle).post_filter(CycleState(), pod("high", requests={"cpu": "2"}, priority=10),
                                                          unschedulable_everywhere(handle))
    assert status is None and result is not None and result.nominated_node_name == "n2"
    assert [c[3] for c in handle.client.calls] == ["lowest", "lowest"]


async def test_only_unschedulable_nodes_are_candidates() -> None:
    handle = FilteringHandle([node("n1", cpu="2"), node("n2", cpu="2")],
                             [running("a", "n1", cpu="2", priority=1), running("b", "n2", cpu="2", priority=0)])
    statuses = NodeToStatus({"n1": Status.unschedulable("Insufficient cpu"),
                             "n2": Status.unresolvable("node(s) had untolerated taint(s)")})
    result, _ = await plugin_for(handle).post_filter(CycleState(), pod("high", requests={"cpu": "2"}, priority=10),
                                                     statuses)
    assert result is not None and result.nominated_node_name == "n1"


FAILURE_CASES = [
    ("eight full nodes of equal priority",
     [node(f"n{i}", cpu="1") for i in range(8)], [running(f"p{i}", f"n{i}", priority=10) for i in range(8)],
     None, "preemption: 0/8 nodes are available: 8 No preemption victims found for incoming pod."),
    ("unresolvable nodes are counted as not helped by preemption",
     [node(f"n{i}", cpu="1") for i in range(3)], [running(f"p{i}", f"n{i}", priority=10) for i in range(3)],
     {"n0": Status.unschedulable("Insufficient cpu"), "n1": Status.unresolvable("node(s) were unschedulable"),
      "n2": Status.unresolvable("node(s) were unschedulable")},
     "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
     "2 Preemption is not helpful for scheduling."),
    ("a pod too big for any emptied node",
     [node("n0", cpu="1"), node("n1", cpu="1")], [running("p0", "n0", priority=1)], None,
     "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod."),
    ("no node was rejected as Unschedulable",
     [node("n0"), node("n1")], [], {"n0": Status.unresolvable("x"), "n1": Status.unresolvable("y")},
     "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
]


@pytest.mark.parametrize("name,nodes,existing,statuses,want", FAILURE_CASES, ids=[c[0] for c in FAILURE_CASES])
async def test_failure_message(name: str, nodes: list[Obj], existing: list[Obj], statuses: dict[str, Status] | None,
                               want: str) -> None:
    handle = FilteringHandle(nodes, existing)
    node_statuses = NodeToStatus(statuses) if statuses else unschedulable_everywhere(handle)
    result, status = await plugin_for(handle).post_filter(CycleState(), pod("big", requests={"cpu": "2"}, priority=10),
                                                          node_statuses)
    assert result is not None and result.nominated_node_name == ""  # clears a stale nomination
    assert status is not None and status.code is Code.UNSCHEDULABLE and status.message == want
    assert handle.client.calls == []


async def test_preemption_policy_never_is_refused_with_upstreams_text() -> None:
    handle = FilteringHandle([node("n1", cpu="4")], [running("low", "n1", cpu="4", priority=1)])
    result, status = await plugin_for(handle).post_filter(
        CycleState(), pod("high", requests={"cpu": "2"}, priority=10, spec={"preemptionPolicy": "Never"}),
        unschedulable_everywhere(handle))
    assert result is None and status is not None and status.code is Code.UNSCHEDULABLE
    assert status.message == "preemption: not eligible due to preemptionPolicy=Never."
    assert handle.client.calls == []


def pod_group(name: str, constraints: bool = False, priority: int | None = None) -> Obj:
    spec: Obj = {"schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]}} if constraints else {}
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


POD_GROUP_CASES = [
    ("a pod of a group is not preempted for pod by pod under workload-aware preemption with gang scheduling",
     {"WorkloadAwarePreemption": True, "GenericWorkload": True, "GangScheduling": True}, [pod_group("g")],
     "preemption: not eligible due to workload aware preemption enabled"),
    ("without gang scheduling a group's pod preempts pod by pod, with the group's priority",
     {"WorkloadAwarePreemption": True, "GenericWorkload": True}, [pod_group("g", priority=10)], None),
    ("with topology-aware scheduling a group with placement constraints is refused",
     {"TopologyAwareWorkloadScheduling": True}, [pod_group("g", constraints=True)],
     "preemption: not eligible due to placement-based pod group scheduling limitation"),
    ("with topology-aware scheduling a missing group is refused",
     {"TopologyAwareWorkloadScheduling": True}, [], "preemption: pod group for pod not found"),
    ("with both gates off a group's pod preempts like any other", {}, [], None),
    ("a group without constraints under topology-aware scheduling preempts like any other",
     {"TopologyAwareWorkloadScheduling": True}, [pod_group("g")], None),
]


@pytest.mark.parametrize("name,gates,groups,want", POD_GROUP_CASES, ids=[c[0] for c in POD_GROUP_CASES])
async def test_pods_of_a_pod_group(name: str, gates: dict[str, bool], groups: list[Obj], want: str | None) -> None:
    handle = FilteringHandle([node("n1", cpu="4")], [running("low", "n1", cpu="4", priority=1)],
                             stores={PODGROUPS: groups})
    member = pod("member", requests={"cpu": "2"}, priority=10, spec={"schedulingGroup": {"podGroupName": "g"}})
    result, status = await plugin_for(handle, features={**SYNC, **gates}).post_filter(
        CycleState(), member, unschedulable_everywhere(handle))
    if want is None:
        assert status is None and result is not None and result.nominated_node_name == "n1"
    else:
        assert result is None and status is not None and status.code is Code.UNSCHEDULABLE
        assert status.message == want and handle.client.calls == []


async def test_the_informers_copy_of_the_preemptor_decides() -> None:
    stale = pod("high", requests={"cpu": "2"}, priority=10)
    fresh = pod("high", requests={"cpu": "2"}, priority=10)
    fresh["status"]["nominatedNodeName"] = "n1"
    handle = FilteringHandle([node("n1", cpu="4")], [terminating_victim("t", "n1")], stores={PODS: [fresh]})
    _, status = await plugin_for(handle).post_filter(CycleState(), stale, unschedulable_everywhere(handle))
    assert status is not None and status.message == \
        "preemption: not eligible due to a terminating pod on the nominated node."


# Asynchronous preemption -----------------------------------------------------------------------

async def test_async_preemption_holds_the_pod_back_until_the_last_deletion_started() -> None:
    victims = [running(f"low{i}", "n1", cpu="2", priority=1) for i in range(2)]
    handle = FilteringHandle([node("n1", cpu="4")], victims, stores={PODS: victims})
    plugin = plugin_for(handle, features={})  # the gate's 1.36 default: on
    high = pod("high", requests={"cpu": "4"}, priority=10)
    result, status = await plugin.post_filter(CycleState(), high, unschedulable_everywhere(handle))
    assert status is None and result is not None and result.nominated_node_name == "n1"
    assert handle.client.calls == []  # nothing sent yet: it runs in the background
    assert plugin.pre_enqueue(high) is not None
    assert plugin.pre_enqueue(high).reasons == ["waiting for the preemption for this pod to be finished"]
    await plugin.executor.drain()
    assert sorted(c[3] for c in handle.client.calls if c[0] == "delete") == ["low0", "low1"]
    assert plugin.pre_enqueue(high) is None and handle.activated == []
    assert [e[2] for e in handle.events.events] == ["Preempted", "Preempted"]


async def test_async_preemption_is_done_once_the_last_victims_deletion_is_seen() -> None:
    victims = [running(f"low{i}", "n1", cpu="2", priority=1) for i in range(2)]
    handle = FilteringHandle([node("n1", cpu="4")], victims, stores={PODS: victims})
    plugin = plugin_for(handle, features={})
    uid = "uid-default-high"
    plugin.executor._preempting.add(uid)
    plugin.executor._last_victim[uid] = ("default", "low1")
    assert plugin.executor.is_running(uid)
    gone = {**victims[1], "metadata": {**victims[1]["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}
    handle.store(PODS).add(gone)
    assert not plugin.executor.is_running(uid)


async def test_a_preemptor_whose_last_victims_deletion_was_already_seen_is_activated() -> None:
    # The informer lost the last victim before it was recorded as the one to wait for (someone
    # else deleted it): no deletion event is left to lift the preemptor's gate, so it is activated.
    victims = [running(f"low{i}", "n1", cpu="2", priority=2 - i) for i in range(2)]
    handle = FilteringHandle([node("n1", cpu="4")], victims, stores={PODS: victims[:1]})
    plugin = plugin_for(handle, features={})
    high = pod("high", requests={"cpu": "4"}, priority=10)
    await plugin.post_filter(CycleState(), high, unschedulable_everywhere(handle))
    await plugin.executor.drain()
    assert sorted(c[3] for c in handle.client.calls if c[0] == "delete") == ["low0", "low1"]
    assert handle.activated == [high] and plugin.pre_enqueue(high) is None


async def test_a_failed_async_preemption_activates_the_preemptor() -> None:
    victims = [running(f"low{i}", "n1", cpu="2", priority=3 - i) for i in range(3)]
    handle = FilteringHandle([node("n1", cpu="6")], victims)
    handle.client.failing.add("low0")  # the most important victim: among the first ones
    plugin = plugin_for(handle, features={"SchedulerAsyncPreemption": True})
    high = pod("high", requests={"cpu": "6"}, priority=10)
    await plugin.post_filter(CycleState(), high, unschedulable_everywhere(handle))
    await plugin.executor.drain()
    assert handle.activated == [high] and plugin.pre_enqueue(high) is None
    deleted = [c[3] for c in handle.client.calls if c[0] == "delete"]
    assert deleted == ["low1"]  # the last (least important) victim is skipped after a failure


def test_events_and_pre_enqueue_follow_the_gate() -> None:
    on = plugin_for(FilteringHandle(), features={})
    off = plugin_for(FilteringHandle(), features=SYNC)
    (registered,) = on.events_to_register()
    assert registered.event.resource.value == "AssignedPod" and registered.event.action.name == "DELETE"
    assert registered.hint is not None and registered.hint({}, None, None).value == "QueueSkip"
    assert off.events_to_register() == [] and off.pre_enqueue(pod("p")) is None


def test_the_registry_builds_it_by_its_upstream_name() -> None:
    plugin = registry.REGISTRY[names.DEFAULT_PREEMPTION]({}, FilteringHandle(), {})
    assert plugin.name == "DefaultPreemption"
    assert (plugin.min_percentage, plugin.min_absolute, plugin.async_preemption) == (10, 100, True)


@pytest.mark.parametrize("args,message", [
    ({"minCandidateNodesPercentage": 101},
     "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"),
    ({"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, "
     "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]"),
], ids=["a percentage over 100", "a negative absolute", "both zero"])
def test_bad_args_are_refused_with_upstreams_field_errors(args: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        registry.REGISTRY[names.DEFAULT_PREEMPTION](args, FilteringHandle(), {})
    assert str(caught.value) == message


async def test_a_nomination_that_cannot_be_cleared_still_lets_the_victims_go_and_reactivates() -> None:
    nominated_low = pod("nominated-low", priority=0)
    nominated_low["status"]["nominatedNodeName"] = "n1"
    handle = FilteringHandle([node("n1", cpu="4")], [running("low", "n1", cpu="4", priority=1)],
                             nominated={"n1": [nominated_low]})
    handle.client.failing.add("nominated-low")
    plugin = plugin_for(handle, features={})
    high = pod("high", requests={"cpu": "2"}, priority=10)
    await plugin.post_filter(CycleState(), high, unschedulable_everywhere(handle))
    await plugin.executor.drain()
    assert [c[3] for c in handle.client.calls if c[0] == "delete"] == ["low"]
    assert handle.activated == [high]  # upstream counts the failed clear as an error of the goroutine
