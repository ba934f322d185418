"""A whole group tried inside one placement on the real cache, with the default TAS profile:
pods assumed in turn (later pods see earlier ones), every assumption released afterwards, the
early stop, and the placement loop choosing a rack through it."""

from __future__ import annotations

from typing import Any

from scheduler import config
from scheduler.cache import Cache
from scheduler.cycle import Algorithm
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.pod_group import Placement, PodGroupInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.status import Code
from scheduler.podgroup import placement, simulation
from scheduler.runtime import Framework
from tests.scheduler import fakes

FEATURES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
RACKS = {"r1": ["a1", "a2", "a3"], "r2": ["b1", "b2"]}


def setup(existing: list[dict] = ()) -> tuple[Algorithm, Framework, Cache]:  # type: ignore[assignment]
    cache = Cache()
    for rack, names in RACKS.items():
        for name in names:
            cache.add_node(fakes.node(name, cpu="2", memory="4Gi", labels={"rack": rack}))
    for pod in existing:
        cache.add_pod(pod)
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    fw = Framework(config.default(FEATURES).profiles[0], features=FEATURES, snapshot=snapshot)
    return Algorithm(cache, snapshot), fw, cache


def gang(pods: int, min_count: int, cpu: str = "2", policy: str = "gang") -> PodGroupInfo:
    schedule: dict[str, Any] = {"gang": {"minCount": min_count}} if policy == "gang" else {"basic": {}}
    spec = {"schedulingPolicy": schedule, "schedulingConstraints": {"topology": [{"key": "rack"}]}}
    members = [fakes.pod(f"p{i}", requests={"cpu": cpu}, spec={"schedulingGroup": {"podGroupName": "pg"}})
               for i in range(pods)]
    return PodGroupInfo({"metadata": {"name": "pg", "namespace": "default"}, "spec": spec}, members)


def rack(algorithm: Algorithm, name: str) -> Placement:
    return Placement(f"rack={name}", [algorithm.snapshot.get(n) for n in RACKS[name]])


def test_each_pod_sees_the_ones_before_it_and_nothing_stays_assumed() -> None:
    algorithm, fw, cache = setup()
    outcome = simulation.attempt_in(algorithm, fw, gang(3, 3))(rack(algorithm, "r1"))
    assert outcome.status is None
    assert sorted(outcome.assignment.pod_to_node.values()) == ["a1", "a2", "a3"]  # one 2-CPU pod per node
    assert cache.pod_count() == 0
    assert all(not info.pods for info in algorithm.snapshot.node_infos)


def test_a_gang_that_does_not_reach_min_count_is_unschedulable_and_stops_early() -> None:
    algorithm, fw, cache = setup()
    outcome = simulation.attempt_in(algorithm, fw, gang(5, 4))(rack(algorithm, "r2"))
    assert outcome.status is not None and outcome.status.code is Code.UNSCHEDULABLE
    # b1, b2 take p0, p1; p2 and p3 fit nowhere; then 2 placed + 1 left < 4, so p4 is never tried.
    assert [r.pod["metadata"]["name"] for r in outcome.result] == ["p0", "p1", "p2", "p3"]
    assert sorted(r.host for r in outcome.result) == ["", "", "b1", "b2"]
    assert outcome.status.message == ("pod group is unschedulable: needs 4, 2 fit: 2 pods Insufficient cpu; "
                                      "0/2 nodes are available: 2 Insufficient cpu.")
    assert cache.pod_count() == 0


def test_a_basic_group_is_feasible_with_what_fits() -> None:
    algorithm, fw, _ = setup()
    outcome = simulation.attempt_in(algorithm, fw, gang(3, 0, policy="basic"))(rack(algorithm, "r2"))
    assert outcome.status is None and len(outcome.assignment.pod_to_node) == 2


def test_the_loop_puts_a_gang_in_the_one_rack_that_holds_it() -> None:
    algorithm, fw, cache = setup([fakes.pod("busy", node_name="b1", requests={"cpu": "1"})])
    group = gang(3, 3)
    choice = placement.choose(fw, CycleState(), group, algorithm.snapshot.node_infos,
                              simulation.attempt_in(algorithm, fw, group))
    assert choice.status is None and choice.placement.name == "rack=r1"
    assert sorted(choice.attempt.assignment.pod_to_node.values()) == ["a1", "a2", "a3"]
    assert cache.pod_count() == 1  # only "busy": the simulation released its assumptions


def test_of_two_racks_that_hold_the_gang_the_one_it_fills_wins() -> None:
    algorithm, fw, _ = setup()
    group = gang(2, 2)
    choice = placement.choose(fw, CycleState(), group, algorithm.snapshot.node_infos,
                              simulation.attempt_in(algorithm, fw, group))
    # cpu: r1 (4 of 6) scores 66, r2 (4 of 4) 100; PodGroupPodsCount ties at 2 pods each.
    assert choice.status is None and choice.placement.name == "rack=r2"


def test_the_loop_says_why_when_no_rack_holds_the_gang() -> None:
    algorithm, fw, _ = setup()
    group = gang(4, 4)
    choice = placement.choose(fw, CycleState(), group, algorithm.snapshot.node_infos,
                              simulation.attempt_in(algorithm, fw, group))
    assert choice.status.message == ("0/2 placements are available, first placement status: "
                                     "pod group is unschedulable: needs 4, at most 3 fit: 1 pods Insufficient cpu")
