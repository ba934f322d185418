"""The placement loop with the default TAS profile's real plugins (TopologyPlacementGenerator,
NodeResourcesFit's MostAllocated, PodGroupPodsCount): the domain choice of upstream's TAS
integration scenarios, the room pre-check, the no-domain message, and what --record-results sees.
The pod-by-pod attempt is a greedy first-fit on cpu, standing in for the cycle's simulation."""

from __future__ import annotations

from typing import Any

from scheduler import config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import NodeInfo, PodInfo, pod_key
from scheduler.framework.pod_group import Placement, PodGroupAssignment, PodGroupInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.status import Code, Status
from scheduler.podgroup import placement
from scheduler.record_results import Attempt as Recorded
from scheduler.runtime import Framework
from tests.scheduler import fakes

FEATURES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}


class Observer:
    def __init__(self) -> None:
        self.seen: dict[str, Recorded] = {}

    def observe(self, pod: dict, point: str, plugin: str, node: str, value: Any) -> None:
        self.seen.setdefault(pod["metadata"]["name"], Recorded()).add(point, plugin, node, value)

    def attempt_done(self, pod: dict, selected_node: str) -> None:
        pass


def rack_node(name: str, rack: str | None) -> dict:
    return fakes.node(name, cpu="2", memory="0", labels={"rack": rack} if rack else {})


def setup(racks: dict[str, list[str]], existing: list[dict] = (), topology: str = "rack",  # type: ignore[assignment]
          pods: int = 3, cpu: str = "1", min_count: int = 3) -> tuple[Framework, PodGroupInfo, Observer]:
    nodes = [rack_node(n, rack) for rack, names in racks.items() for n in names]
    snapshot = Snapshot(fakes.node_infos(nodes, list(existing)))
    observer = Observer()
    fw = Framework(config.default(FEATURES).profiles[0], features=FEATURES, snapshot=snapshot, observer=observer)
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    members = [fakes.pod(f"p{i}", requests={"cpu": cpu}, spec={"schedulingGroup": {"podGroupName": "pg"}})
               for i in range(pods)]
    return fw, PodGroupInfo({"metadata": {"name": "pg", "namespace": "default"}, "spec": spec}, members), observer


def first_fit(group: PodGroupInfo) -> Any:
    def attempt(where: Placement) -> placement.Attempt[None]:
        copies = {n.name: n.clone() for n in where.nodes}
        assignment = PodGroupAssignment()
        for pod in group.pods:
            for name, info in copies.items():
                if fakes.cpu_fit(pod, info) is None:
                    info.add_pod(PodInfo.of(pod))
                    assignment.pod_to_node[pod_key(pod)] = name
                    break
        if len(assignment.pod_to_node) < group.min_count:
            return placement.Attempt(Status.unschedulable(
                f"{len(assignment.pod_to_node)} of {group.min_count} pods fit"), assignment)
        return placement.Attempt(None, assignment)
    return attempt


def choose(fw: Framework, group: PodGroupInfo) -> placement.Choice[None]:
    return placement.choose(fw, CycleState(), group, fw.snapshot.node_infos, first_fit(group))


def test_the_most_allocated_feasible_rack_wins() -> None:
    # Upstream's scenario: rack1 (0+3)/4, rack2 (2+3)/6, rack3 (1+3)/6, rack4 cannot hold 3.
    racks = {"rack1": ["n1", "n2"], "rack2": ["n3", "n4", "n5"], "rack3": ["n6", "n7", "n8"], "rack4": ["n9"]}
    existing = [fakes.pod("e1", node_name="n3", requests={"cpu": "2"}),
                fakes.pod("e2", node_name="n8", requests={"cpu": "1"})]
    fw, group, observer = setup(racks, existing)
    choice = choose(fw, group)
    assert choice.status is None
    assert choice.placement is not None and choice.placement.name == "rack=rack2"
    assert set(choice.attempt.assignment.pod_to_node.values()) <= {"n4", "n5"}
    recorded = observer.seen["p0"]
    assert recorded.placement_generate == {"TopologyPlacementGenerator": ["rack=rack1", "rack=rack2", "rack=rack3",
                                                                          "rack=rack4"]}
    assert recorded.placement_score["rack=rack2"] == {"NodeResourcesFit": "83", "PodGroupPodsCount": "3"}
    assert recorded.placement_finalscore["rack=rack3"] == {"NodeResourcesFit": "66", "PodGroupPodsCount": "100"}
    assert "rack=rack4" not in recorded.placement_score  # rejected by the room pre-check, never simulated


def test_the_only_rack_with_room_is_chosen_without_scoring() -> None:
    racks = {"rack-1": ["a1", "a2", "a3"], "rack-2": ["b1", "b2"], "rack-3": ["c1"]}
    fw, group, observer = setup(racks, [fakes.pod("e1", node_name="b1", requests={"cpu": "2"})], cpu="2")
    choice = choose(fw, group)
    assert choice.status is None and choice.placement.name == "rack=rack-1"
    assert observer.seen["p0"].placement_score == {}


def test_no_rack_that_can_hold_the_gang_is_unschedulable_with_upstreams_text() -> None:
    racks = {"rack-1": ["a1", "a2"], "rack-2": ["b1"]}
    fw, group, _ = setup(racks, cpu="2")
    choice = choose(fw, group)
    assert choice.status.code == Code.UNSCHEDULABLE
    assert choice.status.message == ("0/2 placements are available, first placement status: "
                                     "pod group is unschedulable: needs 3, at most 2 fit: 1 pods Insufficient cpu")
    assert [p.name for p, _ in choice.tried] == ["rack=rack-1", "rack=rack-2"]


def test_a_rack_that_passes_the_pre_check_but_fails_the_simulation_reports_the_simulation() -> None:
    # 3 pods of 1.2 CPU: 3.6 of the rack's 4 CPUs pass the aggregate check, but each node holds one.
    fw, group, _ = setup({"rack-1": ["a1", "a2"]}, cpu="1200m")
    choice = choose(fw, group)
    assert choice.status.message == "0/1 placements are available, first placement status: 2 of 3 pods fit"


def test_nodes_without_the_label_are_unschedulable_from_the_generator() -> None:
    fw, group, observer = setup({"rack-1": ["a1"]}, topology="zone")
    choice = choose(fw, group)
    assert choice.status.code == Code.UNSCHEDULABLE
    assert choice.status.plugin == "TopologyPlacementGenerator"
    assert choice.status.message == "no nodes found with topology label 'zone'"
    assert observer.seen["p0"].placement_generate == {
        "TopologyPlacementGenerator": "no nodes found with topology label 'zone'"}


def test_a_group_without_a_constraint_is_tried_once_on_all_nodes() -> None:
    fw, group, _ = setup({"rack-1": ["a1", "a2"], "": ["x1"]}, topology="")
    choice = choose(fw, group)
    assert choice.status is None
    assert choice.placement.name == "" and len(choice.placement.nodes) == 3


def test_without_the_gate_the_default_profile_generates_nothing() -> None:
    features = {"GenericWorkload": True, "GangScheduling": True}
    snapshot = Snapshot(fakes.node_infos([rack_node("a1", "r1"), rack_node("b1", "r2")]))
    fw = Framework(config.default(features).profiles[0], features=features, snapshot=snapshot)
    _, group, _ = setup({"r1": ["a1"]}, pods=1, min_count=1)
    placements, status = placement.generate(fw, CycleState(), group, snapshot.node_infos)
    assert status is None and [p.name for p in placements] == [""]


def test_needed_counts_pods_already_placed_and_ignores_basic_groups() -> None:
    member = fakes.pod("old", node_name="a1", spec={"schedulingGroup": {"podGroupName": "pg"}})
    nodes: list[NodeInfo] = fakes.node_infos([rack_node("a1", "r1")], [member])
    _, gang, _ = setup({"r1": ["a1"]}, min_count=3)
    assert placement.needed(gang, nodes) == 2
    basic = PodGroupInfo({"metadata": gang.pod_group["metadata"], "spec": {"schedulingPolicy": {"basic": {}}}})
    assert placement.needed(basic, nodes) == 0
