"""One scheduling attempt (scheduler/cycle.py) and the cache under it (scheduler/cache.py)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cache import Cache
from scheduler.config.types import POINTS, PluginRef, Profile
from scheduler.cycle import Algorithm, num_feasible_nodes_to_find
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import QueuedPodInfo
from scheduler.framework.node_info import PodInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.status import Code, Status
from scheduler.runtime import Framework
from tests.scheduler.fakes import node, pod

Obj = dict[str, Any]


class Reasons:
    """Filter: rejects each node with the reason the test gives it."""

    name = "Reasons"

    def __init__(self, reasons: dict[str, Status]) -> None:
        self.reasons = reasons
        self.seen: list[str] = []

    def filter(self, state: CycleState, p: Obj, n: Any) -> Status | None:
        self.seen.append(n.name)
        return self.reasons.get(n.name)


class Preemption:
    name = "DefaultPreemption"

    async def post_filter(self, state: CycleState, p: Obj, statuses: Any) -> tuple[Any, Status | None]:
        return None, Status.unschedulable("preemption: 0/8 nodes are available: 8 No preemption victims found "
                                          "for incoming pod.")


class Flat:
    name = "Flat"

    def score(self, state: CycleState, p: Obj, n: Any) -> tuple[int, Status | None]:
        return 50, None


class Reserver:
    name = "Reserver"

    def __init__(self, status: Status | None) -> None:
        self.status = status
        self.unreserved = False

    def reserve(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
        return self.status

    def unreserve(self, state: CycleState, p: Obj, node_name: str) -> None:
        self.unreserved = True


def setup(nodes: list[Obj], *plugins: Any) -> tuple[Algorithm, Framework, Cache]:
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    snapshot = Snapshot()
    refs = [PluginRef(p.name, 1) for p in plugins]
    profile = Profile("default-scheduler", points={point: list(refs) for point in POINTS})
    fw = Framework(profile, registry={p.name: (lambda a, h, f, p=p: p) for p in plugins}, snapshot=snapshot)
    return Algorithm(cache, snapshot), fw, cache


def queued(p: Obj) -> QueuedPodInfo:
    return QueuedPodInfo(pod_info=PodInfo.of(p), timestamp=0.0)


async def test_a_pod_that_fits_nowhere_gets_upstreams_counted_and_sorted_message() -> None:
    names = [f"n{i}" for i in range(8)]
    taint = Status.unresolvable("node(s) had untolerated taint(s)")
    reasons = {n: (Status.unschedulable("Insufficient cpu") if i < 3 else taint) for i, n in enumerate(names)}
    algorithm, fw, _ = setup([node(n) for n in names], Reasons(reasons), Preemption())
    outcome = await algorithm.scheduling_cycle(fw, CycleState(), queued(pod("big")))
    assert outcome.status is not None and outcome.status.code is Code.UNSCHEDULABLE
    assert outcome.message == ("0/8 nodes are available: 3 Insufficient cpu, 5 node(s) had untolerated taint(s). "
                               "preemption: 0/8 nodes are available: 8 No preemption victims found for incoming pod.")
    assert outcome.unschedulable_plugins == {"Reasons"}
    assert outcome.nominated_node is None  # PostFilter nominated nothing: leave the pod's nomination alone


async def test_without_postfilter_plugins_the_message_ends_after_the_reasons_and_clears_the_nomination() -> None:
    algorithm, fw, _ = setup([node("a"), node("b")], Reasons({"a": Status.unschedulable("Too many pods"),
                                                             "b": Status.unschedulable("Insufficient memory")}))
    outcome = await algorithm.scheduling_cycle(fw, CycleState(), queued(pod("p")))
    assert outcome.message == "0/2 nodes are available: 1 Insufficient memory, 1 Too many pods."
    assert outcome.nominated_node == ""


async def test_an_empty_cluster_says_no_nodes_are_available() -> None:
    algorithm, fw, _ = setup([], Reasons({}))
    outcome = await algorithm.scheduling_cycle(fw, CycleState(), queued(pod("p")))
    assert outcome.status is not None and outcome.status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert outcome.message == "no nodes available to schedule pods"


async def test_the_chosen_node_holds_the_assumed_pod_in_the_next_snapshot() -> None:
    algorithm, fw, cache = setup([node("a")], Reasons({}))
    outcome = await algorithm.scheduling_cycle(fw, CycleState(), queued(pod("p", requests={"cpu": "1"})))
    assert outcome.status is None and outcome.host == "a"
    assert cache.is_assumed(outcome.assumed_pod)  # type: ignore[arg-type]
    cache.update_snapshot(algorithm.snapshot)
    info = algorithm.snapshot.get("a")
    assert info is not None and info.requested.milli_cpu == 1000


async def test_a_reserve_rejection_undoes_the_assumption_and_reads_as_a_one_node_fit_error() -> None:
    reserver = Reserver(Status.unschedulable("device taken"))
    algorithm, fw, cache = setup([node("a")], reserver)
    outcome = await algorithm.scheduling_cycle(fw, CycleState(), queued(pod("p")))
    assert reserver.unreserved
    assert not cache.is_assumed({**pod("p"), "spec": {"nodeName": "a"}})
    assert outcome.message == "0/1 nodes are available: 1 device taken."
    assert outcome.unschedulable_plugins == {"Reserver"}


async def test_a_filter_error_is_a_scheduler_error_not_an_unschedulable_pod() -> None:
    class Broken:
        name = "Broken"

        def filter(self, state: CycleState, p: Obj, n: Any) -> Status | None:
            raise KeyError("state")

    algorithm, fw, _ = setup([node("a")], Broken())
    outcome = await algorithm.scheduling_cycle(fw, CycleState(), queued(pod("p")))
    assert outcome.status is not None and outcome.status.code is Code.ERROR
    assert outcome.message.startswith('running "Broken" filter plugin: ')


async def test_the_nominated_node_is_tried_first_and_alone_when_it_fits() -> None:
    filt = Reasons({})
    algorithm, fw, _ = setup([node(f"n{i}") for i in range(5)], filt, Flat())
    p = pod("p")
    p["status"]["nominatedNodeName"] = "n3"
    outcome = await algorithm.scheduling_cycle(fw, CycleState(), queued(p))
    assert outcome.host == "n3" and filt.seen == ["n3"]


async def test_nodes_a_prefilter_result_left_out_count_with_their_own_reason() -> None:
    class OnlyA:
        name = "OnlyA"

        def pre_filter(self, state: CycleState, p: Obj, nodes: Any) -> tuple[Any, Status | None]:
            from scheduler.framework.interfaces import PreFilterResult

            return PreFilterResult({"a"}), None

    algorithm, fw, _ = setup([node("a"), node("b"), node("c")], OnlyA(),
                             Reasons({"a": Status.unschedulable("Insufficient example.com/dummy")}))
    outcome = await algorithm.scheduling_cycle(fw, CycleState(), queued(pod("p")))
    assert outcome.message == ("0/3 nodes are available: 1 Insufficient example.com/dummy, "
                               "2 node(s) didn't satisfy plugin(s) [OnlyA].")
    assert outcome.unschedulable_plugins == {"OnlyA", "Reasons"}


@pytest.mark.parametrize("nodes, percentage, expected", [
    (50, 0, 50), (100, 0, 100), (1000, 0, 420), (5000, 0, 500), (10000, 0, 500), (1000, 30, 300), (200, 10, 100),
])
def test_how_many_feasible_nodes_are_enough_follows_upstreams_adaptive_rule(nodes: int, percentage: int,
                                                                             expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


async def test_the_search_starts_where_the_last_one_stopped() -> None:
    filt = Reasons({})
    algorithm, fw, _ = setup([node(f"n{i:03}") for i in range(300)], filt, Flat())
    await algorithm.scheduling_cycle(fw, CycleState(), queued(pod("one")))
    first = list(filt.seen)
    assert len(first) == 144  # 300 × (50 − 300/125)% of the nodes are enough
    filt.seen.clear()
    await algorithm.scheduling_cycle(fw, CycleState(), queued(pod("two")))
    assert filt.seen[0] == "n144"


def test_the_snapshot_copies_only_the_nodes_that_changed() -> None:
    cache = Cache()
    for name in ("a", "b"):
        cache.add_node(node(name))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    a, b = snapshot.get("a"), snapshot.get("b")
    cache.add_pod(pod("p", node_name="b"))
    cache.update_snapshot(snapshot)
    assert snapshot.get("a") is a and snapshot.get("b") is not b
    assert len(snapshot.get("b").pods) == 1  # type: ignore[union-attr]


def test_an_assumed_pod_is_confirmed_by_the_informer_and_a_forgotten_one_frees_its_node() -> None:
    cache = Cache()
    cache.add_node(node("a"))
    bound = pod("p", node_name="a", requests={"cpu": "1"})
    cache.assume_pod(bound)
    cache.add_pod(bound)  # the informer shows the binding
    assert not cache.is_assumed(bound)
    cache.forget_pod(bound)  # too late to forget: it is bound
    assert cache.node_info("a").requested.milli_cpu == 1000  # type: ignore[union-attr]
    other = pod("q", node_name="a", requests={"cpu": "2"})
    cache.assume_pod(other)
    cache.forget_pod(other)
    assert cache.node_info("a").requested.milli_cpu == 1000  # type: ignore[union-attr]


def test_terminal_pods_free_their_node() -> None:
    cache = Cache()
    cache.add_node(node("a"))
    running = pod("p", node_name="a", requests={"cpu": "1"})
    cache.add_pod(running)
    done = {**running, "status": {"phase": "Succeeded"}}
    cache.update_pod(done)
    assert cache.node_info("a").requested.milli_cpu == 0  # type: ignore[union-attr]


def test_image_states_count_the_nodes_that_have_the_image() -> None:
    cache = Cache()
    image = {"names": ["nginx:1.27"], "sizeBytes": 200_000_000}
    a, b = node("a"), node("b")
    a["status"]["images"] = [image]
    b["status"]["images"] = [image]
    cache.add_node(a)
    cache.add_node(b)
    state = cache.node_info("a").image_states["nginx:1.27"]  # type: ignore[union-attr]
    assert (state.size, state.num_nodes) == (200_000_000, 2)
    cache.remove_node(b)
    assert state.num_nodes == 1
