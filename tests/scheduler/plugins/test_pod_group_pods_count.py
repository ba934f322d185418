"""PodGroupPodsCount: the raw score counts the group's placed pods plus the assignment, and
normalizing scales by the largest raw score (not by minCount), as upstream's."""

from __future__ import annotations

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.pod_group import Placement, PodGroupAssignment, PodGroupInfo
from scheduler.framework.status import Code
from scheduler.plugins import pod_group_pods_count
from tests.scheduler import fakes

GROUP = PodGroupInfo({"metadata": {"name": "pg", "namespace": "default"},
                      "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})


def member(name: str, node_name: str) -> dict:
    return fakes.pod(name, node_name=node_name, spec={"schedulingGroup": {"podGroupName": "pg"}})


def assignment(*pods: str) -> PodGroupAssignment:
    return PodGroupAssignment({f"default/{p}": "n1" for p in pods})


def test_the_score_is_placed_members_plus_the_assignment() -> None:
    handle = fakes.FakeHandle([fakes.node("n1"), fakes.node("n2")],
                              [member("p0", "n2"), fakes.pod("stranger", node_name="n1")])
    plugin = pod_group_pods_count.new({}, handle, {})
    state = CycleState()
    placement = Placement("rack=a", list(handle.snapshot.node_infos))
    assert plugin.score_placement(state, GROUP, placement, assignment("p1", "p2")) == (3, None)
    assert plugin.score_placement(state, GROUP, placement, assignment()) == (1, None)


def test_normalizing_scales_by_the_largest_count() -> None:
    plugin = pod_group_pods_count.new({}, fakes.FakeHandle(), {})
    scores = [3, 4, 1]
    assert plugin.normalize_placement_scores(CycleState(), GROUP, scores) is None
    assert scores == [75, 100, 25]


def test_normalizing_with_no_pod_anywhere_is_an_error() -> None:
    plugin = pod_group_pods_count.new({}, fakes.FakeHandle(), {})
    status = plugin.normalize_placement_scores(CycleState(), GROUP, [0, 0])
    assert status.code == Code.ERROR
    assert status.message == "no pods from pod group are assigned to any of the candidate placements"
