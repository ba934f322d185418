"""The framework runtime (scheduler/runtime.py), point by point, with tiny fake plugins.

Each fake answers what its test tells it to and writes down that it was called, so the cases
check upstream's rules: which plugins run, in which order, and which Status comes out.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from scheduler.config.types import POINTS, PluginRef, Profile
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import NodeScore, PostFilterResult, PreFilterResult
from scheduler.framework.node_info import PodInfo
from scheduler.framework.status import Code, Status
from scheduler.queue import Nominator
from scheduler.runtime import Framework, go_duration
from tests.scheduler.fakes import node, node_infos, pod

Obj = dict[str, Any]


class PreFilterFake:
    def __init__(self, name: str, calls: list[str], *, status: Status | None = None,
                 nodes: set[str] | None = None) -> None:
        self.name, self.calls, self.status, self.nodes = name, calls, status, nodes

    def pre_filter(self, state: CycleState, p: Obj, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        self.calls.append(f"{self.name}.pre_filter")
        return (PreFilterResult(set(self.nodes)) if self.nodes is not None else None), self.status


class FilterFake:
    def __init__(self, name: str, calls: list[str], reject: dict[str, Status] | None = None,
                 raises: bool = False) -> None:
        self.name, self.calls, self.reject, self.raises = name, calls, reject or {}, raises

    def filter(self, state: CycleState, p: Obj, n: Any) -> Status | None:
        self.calls.append(f"{self.name}.filter({n.name})")
        if self.raises:
            raise RuntimeError("boom")
        return self.reject.get(n.name)


class ScoreFake:
    def __init__(self, name: str, scores: dict[str, int], normalize: bool = False) -> None:
        self.name, self.scores, self.normalized = name, scores, normalize

    def score(self, state: CycleState, p: Obj, n: Any) -> tuple[int, Status | None]:
        return self.scores[n.name], None


class NormalizingScoreFake(ScoreFake):
    def normalize_score(self, state: CycleState, p: Obj, scores: list[NodeScore]) -> Status | None:
        top = max(s.score for s in scores) or 1
        for s in scores:
            s.score = s.score * 100 // top
        return None


class ReserveFake:
    def __init__(self, name: str, calls: list[str], status: Status | None = None) -> None:
        self.name, self.calls, self.status = name, calls, status

    def reserve(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
        self.calls.append(f"{self.name}.reserve")
        return self.status

    def unreserve(self, state: CycleState, p: Obj, node_name: str) -> None:
        self.calls.append(f"{self.name}.unreserve")


class PermitFake:
    def __init__(self, name: str, status: Status | None, timeout: float = 0.0) -> None:
        self.name, self.status, self.timeout = name, status, timeout

    def permit(self, state: CycleState, p: Obj, node_name: str) -> tuple[Status | None, float]:
        return self.status, self.timeout


class PreBindFake:
    def __init__(self, name: str, calls: list[str], *, skip: bool = False, parallel: bool = False,
                 status: Status | None = None, gate: asyncio.Event | None = None) -> None:
        self.name, self.calls, self.skip, self.status, self.gate = name, calls, skip, status, gate
        self.allow_parallel_pre_bind = parallel

    def pre_bind_pre_flight(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
        return Status.skip() if self.skip else None

    async def pre_bind(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
        self.calls.append(f"{self.name}.start")
        if self.gate is not None:
            await self.gate.wait()
        self.calls.append(f"{self.name}.end")
        return self.status


class BindFake:
    def __init__(self, name: str, calls: list[str], status: Status | None) -> None:
        self.name, self.calls, self.status = name, calls, status

    async def bind(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
        self.calls.append(f"{self.name}.bind")
        return self.status


def framework(*plugins: Any, weights: dict[str, int] | None = None, nominator: Any = None,
              observer: Any = None) -> Framework:
    """A profile listing every plugin at every point, as MultiPoint does."""
    refs = [PluginRef(p.name, (weights or {}).get(p.name, 0)) for p in plugins]
    profile = Profile("test-scheduler", points={point: list(refs) for point in POINTS})
    registry = {p.name: (lambda args, handle, features, p=p: p) for p in plugins}
    return Framework(profile, registry=registry, nominator=nominator, observer=observer)


NODES = node_infos([node("a"), node("b"), node("c")])


# -- PreFilter --------------------------------------------------------------------------------------

def test_prefilter_results_intersect_to_the_nodes_every_plugin_allows() -> None:
    calls: list[str] = []
    fw = framework(PreFilterFake("One", calls, nodes={"a", "b"}), PreFilterFake("Two", calls, nodes={"b", "c"}))
    result, status, plugins = fw.run_pre_filter_plugins(CycleState(), pod("p"), NODES)
    assert status is None
    assert result is not None and result.node_names == {"b"}
    assert plugins == {"One", "Two"}


def test_prefilter_results_without_a_common_node_are_unresolvable_naming_the_plugins() -> None:
    calls: list[str] = []
    fw = framework(PreFilterFake("One", calls, nodes={"a"}), PreFilterFake("Two", calls, nodes={"c"}))
    _, status, _ = fw.run_pre_filter_plugins(CycleState(), pod("p"), NODES)
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == "node(s) didn't satisfy plugin(s) [One Two] simultaneously"


def test_prefilter_skip_is_recorded_so_that_plugins_filter_is_not_called() -> None:
    calls: list[str] = []

    class Skipper(PreFilterFake, FilterFake):
        def __init__(self) -> None:
            PreFilterFake.__init__(self, "Skipper", calls, status=Status.skip())
            self.reject, self.raises = {}, False

    fw = framework(Skipper(), FilterFake("Other", calls))
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod("p"), NODES)
    fw.run_filter_plugins(state, pod("p"), NODES[0])
    assert state.skip_filter_plugins == {"Skipper"}
    assert calls == ["Skipper.pre_filter", "Other.filter(a)"]


def test_an_unresolvable_prefilter_stops_the_plugins_after_it() -> None:
    calls: list[str] = []
    fw = framework(PreFilterFake("First", calls, status=Status.unresolvable("no way")),
                   PreFilterFake("Second", calls))
    _, status, plugins = fw.run_pre_filter_plugins(CycleState(), pod("p"), NODES)
    assert calls == ["First.pre_filter"]
    assert status is not None and status.plugin == "First" and plugins == {"First"}


def test_an_unschedulable_prefilter_lets_the_others_run_for_preemption() -> None:
    calls: list[str] = []
    fw = framework(PreFilterFake("First", calls, status=Status.unschedulable("not now")),
                   PreFilterFake("Second", calls))
    _, status, plugins = fw.run_pre_filter_plugins(CycleState(), pod("p"), NODES)
    assert calls == ["First.pre_filter", "Second.pre_filter"]
    assert status is not None and status.code is Code.UNSCHEDULABLE and plugins == {"First"}


# -- Filter -----------------------------------------------------------------------------------------

def test_filter_stops_at_the_first_rejection_and_names_its_plugin() -> None:
    calls: list[str] = []
    fw = framework(FilterFake("First", calls, reject={"a": Status.unschedulable("Insufficient cpu")}),
                   FilterFake("Second", calls))
    status = fw.run_filter_plugins(CycleState(), pod("p"), NODES[0])
    assert calls == ["First.filter(a)"]
    assert status is not None and status.plugin == "First" and status.reasons == ["Insufficient cpu"]


def test_a_plugin_that_raises_answers_error_with_its_name() -> None:
    calls: list[str] = []
    fw = framework(FilterFake("Broken", calls, raises=True))
    status = fw.run_filter_plugins(CycleState(), pod("p"), NODES[0])
    assert status is not None and status.code is Code.ERROR and status.plugin == "Broken"
    assert 'running "Broken" filter plugin: boom' == status.message


def test_nominated_pods_of_higher_priority_count_on_their_node_in_the_first_pass() -> None:
    seen: list[int] = []

    class CountPods:
        name = "CountPods"

        def filter(self, state: CycleState, p: Obj, n: Any) -> Status | None:
            seen.append(len(n.pods))
            return Status.unschedulable("full") if n.pods else None

    nominator = Nominator()
    nominator.add(PodInfo.of(pod("vip", priority=100)), "a")
    fw = framework(CountPods(), nominator=nominator)
    status = fw.run_filter_plugins_with_nominated_pods(CycleState(), pod("p", priority=10), NODES[0])
    assert seen == [1]
    assert status is not None and status.reasons == ["full"]


def test_nominated_pods_of_lower_priority_are_ignored_and_one_pass_is_enough() -> None:
    seen: list[int] = []

    class CountPods:
        name = "CountPods"

        def filter(self, state: CycleState, p: Obj, n: Any) -> Status | None:
            seen.append(len(n.pods))
            return None

    nominator = Nominator()
    nominator.add(PodInfo.of(pod("low", priority=1)), "a")
    fw = framework(CountPods(), nominator=nominator)
    assert fw.run_filter_plugins_with_nominated_pods(CycleState(), pod("p", priority=10), NODES[0]) is None
    assert seen == [0]


def test_a_node_that_fits_with_the_nominated_pods_is_checked_again_without_them() -> None:
    seen: list[int] = []

    class CountPods:
        name = "CountPods"

        def filter(self, state: CycleState, p: Obj, n: Any) -> Status | None:
            seen.append(len(n.pods))
            return None

    nominator = Nominator()
    nominator.add(PodInfo.of(pod("vip", priority=100)), "a")
    fw = framework(CountPods(), nominator=nominator)
    assert fw.run_filter_plugins_with_nominated_pods(CycleState(), pod("p", priority=10), NODES[0]) is None
    assert seen == [1, 0]


def test_the_filter_runner_adds_nominated_pods_only_where_there_are_some() -> None:
    seen: list[tuple[str, int]] = []

    class CountPods:
        name = "CountPods"

        def filter(self, state: CycleState, p: Obj, n: Any) -> Status | None:
            seen.append((n.name, len(n.pods)))
            return None

    nominator = Nominator()
    nominator.add(PodInfo.of(pod("vip", priority=100)), "a")
    fw = framework(CountPods(), nominator=nominator)
    run = fw.filter_runner(CycleState(), pod("p", priority=10), nominated=True)
    assert [run(n) for n in NODES] == [None, None, None]
    assert seen == [("a", 1), ("a", 0), ("b", 0), ("c", 0)]


# -- Score ------------------------------------------------------------------------------------------

def test_scores_are_normalized_then_weighted_then_summed() -> None:
    fw = framework(NormalizingScoreFake("Norm", {"a": 5, "b": 10, "c": 0}), ScoreFake("Plain", {"a": 10, "b": 0, "c": 1}),
                   weights={"Norm": 2, "Plain": 3})
    totals, status = fw.run_score_plugins(CycleState(), pod("p"), NODES)
    assert status is None
    assert totals == {"a": 50 * 2 + 10 * 3, "b": 100 * 2, "c": 3}


def test_a_score_outside_zero_to_a_hundred_after_normalizing_is_an_error() -> None:
    fw = framework(ScoreFake("Wild", {"a": 101, "b": 0, "c": 0}))
    _, status = fw.run_score_plugins(CycleState(), pod("p"), NODES)
    assert status is not None and status.code is Code.ERROR
    assert status.message == ('plugin "Wild" returns an invalid score 101, it should in the range of [0, 100] '
                              'after normalizing')


def test_observer_sees_raw_and_final_scores() -> None:
    seen: list[tuple[str, str, str, Any]] = []

    class Observer:
        def observe(self, p: Obj, point: str, plugin: str, node_name: str, value: Any) -> None:
            seen.append((point, plugin, node_name, value))

        def attempt_done(self, p: Obj, selected: str) -> None:
            pass

    fw = framework(ScoreFake("S", {"a": 7, "b": 1, "c": 2}), weights={"S": 2}, observer=Observer())
    fw.run_score_plugins(CycleState(), pod("p"), NODES[:1])
    assert seen == [("Score", "S", "a", 7), ("FinalScore", "S", "a", 14)]


def test_a_plugin_that_scores_many_nodes_at_once_is_called_once_and_observed_per_node() -> None:
    seen: list[tuple[str, str, str, Any]] = []
    calls: list[list[str]] = []

    class Observer:
        def observe(self, p: Obj, point: str, plugin: str, node_name: str, value: Any) -> None:
            seen.append((point, plugin, node_name, value))

        def attempt_done(self, p: Obj, selected: str) -> None:
            pass

    class Batch(ScoreFake):
        def score_nodes(self, state: CycleState, p: Obj, nodes: list[Any]) -> list[int]:
            calls.append([n.name for n in nodes])
            return [self.scores[n.name] for n in nodes]

        def score(self, state: CycleState, p: Obj, n: Any) -> tuple[int, Status | None]:
            raise AssertionError("score_nodes answers for every node")

    fw = framework(Batch("B", {"a": 7, "b": 1, "c": 2}), weights={"B": 3}, observer=Observer())
    totals, status = fw.run_score_plugins(CycleState(), pod("p"), NODES)
    assert status is None and totals == {"a": 21, "b": 3, "c": 6}
    assert calls == [["a", "b", "c"]]
    assert [v for point, _, _, v in seen if point == "Score"] == [7, 1, 2]
    assert [v for point, _, _, v in seen if point == "FinalScore"] == [21, 3, 6]


def test_a_batch_scorer_that_raises_is_the_plugins_error() -> None:
    class Broken(ScoreFake):
        def score_nodes(self, state: CycleState, p: Obj, nodes: list[Any]) -> list[int]:
            raise RuntimeError("boom")

    _, status = framework(Broken("Broken", {})).run_score_plugins(CycleState(), pod("p"), NODES)
    assert status is not None and status.code is Code.ERROR and status.plugin == "Broken"
    assert status.message == 'running Score plugin "Broken": boom'


# -- Reserve and Permit -----------------------------------------------------------------------------

def test_reserve_runs_in_order_and_unreserve_in_reverse() -> None:
    calls: list[str] = []
    fw = framework(ReserveFake("One", calls), ReserveFake("Two", calls))
    assert fw.run_reserve_plugins_reserve(CycleState(), pod("p"), "a") is None
    fw.run_reserve_plugins_unreserve(CycleState(), pod("p"), "a")
    assert calls == ["One.reserve", "Two.reserve", "Two.unreserve", "One.unreserve"]


def test_a_reserve_rejection_stops_the_later_reserves() -> None:
    calls: list[str] = []
    fw = framework(ReserveFake("One", calls, Status.unschedulable("taken")), ReserveFake("Two", calls))
    status = fw.run_reserve_plugins_reserve(CycleState(), pod("p"), "a")
    assert calls == ["One.reserve"]
    assert status is not None and status.plugin == "One"


async def test_permit_wait_holds_the_pod_until_every_waiting_plugin_allows() -> None:
    fw = framework(PermitFake("Gang", Status.wait(), 30), PermitFake("Other", Status.wait(), 30))
    p = pod("p")
    status = fw.run_permit_plugins(CycleState(), p, "a")
    assert status is not None and status.code is Code.WAIT
    waiting = fw.waiting_pod(p["metadata"]["uid"])
    assert waiting is not None and waiting.pending_plugins() == ["Gang", "Other"]
    result = asyncio.ensure_future(fw.wait_on_permit(p))
    waiting.allow("Gang")
    await asyncio.sleep(0)
    assert not result.done()
    waiting.allow("Other")
    assert await result is None
    assert fw.waiting_pod(p["metadata"]["uid"]) is None


async def test_permit_reject_of_a_waiting_pod_is_unschedulable_with_the_plugins_name() -> None:
    fw = framework(PermitFake("Gang", Status.wait(), 30))
    p = pod("p")
    fw.run_permit_plugins(CycleState(), p, "a")
    waiting = fw.waiting_pod(p["metadata"]["uid"])
    assert waiting is not None
    waiting.reject("Gang", "group incomplete")
    status = await fw.wait_on_permit(p)
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.plugin == "Gang" and status.message == "group incomplete"


async def test_a_permit_wait_times_out_with_upstreams_message() -> None:
    fw = framework(PermitFake("Gang", Status.wait(), 0.01))
    p = pod("p")
    fw.run_permit_plugins(CycleState(), p, "a")
    status = await fw.wait_on_permit(p)
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.message == "rejected due to timeout after waiting 10ms at plugin Gang"


def test_permit_rejection_wins_without_creating_a_waiting_pod() -> None:
    fw = framework(PermitFake("Gang", Status.wait(), 30), PermitFake("No", Status.unschedulable("never")))
    p = pod("p")
    status = fw.run_permit_plugins(CycleState(), p, "a")
    assert status is not None and status.plugin == "No"
    assert fw.waiting_pod(p["metadata"]["uid"]) is None


def test_go_durations_read_as_go_prints_them() -> None:
    assert [go_duration(x) for x in (0.5, 10, 90, 3600)] == ["500ms", "10s", "1m30s", "1h0m0s"]


# -- PreBind and Bind -------------------------------------------------------------------------------

async def test_a_prebind_plugin_that_skips_its_pre_flight_is_not_called() -> None:
    calls: list[str] = []
    fw = framework(PreBindFake("Skips", calls, skip=True), PreBindFake("Works", calls))
    state = CycleState()
    assert fw.run_pre_bind_pre_flights(state, pod("p"), "a") is None
    assert await fw.run_pre_bind_plugins(state, pod("p"), "a") is None
    assert calls == ["Works.start", "Works.end"]


async def test_pre_flights_all_skipping_answer_skip() -> None:
    fw = framework(PreBindFake("Skips", [], skip=True))
    status = fw.run_pre_bind_pre_flights(CycleState(), pod("p"), "a")
    assert status is not None and status.code is Code.SKIP


async def test_adjacent_prebind_plugins_that_allow_it_run_in_parallel() -> None:
    calls: list[str] = []
    gate = asyncio.Event()
    fw = framework(PreBindFake("A", calls, parallel=True, gate=gate), PreBindFake("B", calls, parallel=True))
    state = CycleState()
    fw.run_pre_bind_pre_flights(state, pod("p"), "a")
    run = asyncio.ensure_future(fw.run_pre_bind_plugins(state, pod("p"), "a"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert calls == ["A.start", "B.start", "B.end"]  # B did not wait for A
    gate.set()
    assert await run is None


async def test_a_prebind_plugin_that_does_not_allow_parallel_runs_alone() -> None:
    calls: list[str] = []
    gate = asyncio.Event()
    fw = framework(PreBindFake("A", calls, gate=gate), PreBindFake("B", calls, parallel=True))
    state = CycleState()
    fw.run_pre_bind_pre_flights(state, pod("p"), "a")
    run = asyncio.ensure_future(fw.run_pre_bind_plugins(state, pod("p"), "a"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert calls == ["A.start"]
    gate.set()
    assert await run is None
    assert calls == ["A.start", "A.end", "B.start", "B.end"]


async def test_bind_goes_on_past_plugins_that_skip_and_stops_at_the_first_that_binds() -> None:
    calls: list[str] = []
    fw = framework(BindFake("Skips", calls, Status.skip()), BindFake("Binds", calls, None),
                   BindFake("Never", calls, None))
    assert await fw.run_bind_plugins(CycleState(), pod("p"), "a") is None
    assert calls == ["Skips.bind", "Binds.bind"]


async def test_a_bind_error_names_the_plugin() -> None:
    fw = framework(BindFake("Binds", [], Status.as_error("conflict")))
    status = await fw.run_bind_plugins(CycleState(), pod("p"), "a")
    assert status is not None and status.code is Code.ERROR and status.plugin == "Binds"
    assert status.message == 'running Bind plugin "Binds": conflict'


# -- PostFilter -------------------------------------------------------------------------------------

async def test_postfilter_stops_at_the_first_plugin_that_nominates() -> None:
    class Preempt:
        name = "Preempt"

        async def post_filter(self, state: CycleState, p: Obj, statuses: Any) -> tuple[Any, Status | None]:
            return PostFilterResult("b"), None

    fw = framework(Preempt())
    result, status = await fw.run_post_filter_plugins(CycleState(), pod("p"), None)  # type: ignore[arg-type]
    assert status is None and result is not None and result.nominated_node_name == "b"


async def test_observer_gets_prefilter_and_permit_answers_with_their_results() -> None:
    seen: list[tuple[str, Any]] = []

    class Observer:
        def observe(self, p: Obj, point: str, plugin: str, node_name: str, value: Any) -> None:
            seen.append((point, value))

        def attempt_done(self, p: Obj, selected: str) -> None:
            pass

    fw = framework(PreFilterFake("Narrow", [], nodes={"a"}), PermitFake("Gate", Status.wait(), 5), observer=Observer())
    fw.run_pre_filter_plugins(CycleState(), pod("p"), NODES)
    fw.run_permit_plugins(CycleState(), pod("p"), "a")
    (pre_point, (result, pre_status)), (permit_point, (permit_status, timeout)) = seen
    assert pre_point == "PreFilter" and result.node_names == {"a"} and pre_status is None
    assert permit_point == "Permit" and permit_status.code is Code.WAIT and timeout == 5


def test_an_unknown_plugin_name_is_refused_when_the_framework_is_built() -> None:
    profile = Profile("s", points={"filter": [PluginRef("Nope")]})
    with pytest.raises(ValueError, match='plugin "Nope" does not exist'):
        Framework(profile, registry={})
