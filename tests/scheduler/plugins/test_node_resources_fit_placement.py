"""NodeResourcesFit's placement score: MostAllocated over a whole placement, whatever strategy the
node scores use. The rack cases are upstream's TAS integration scenario (2-CPU nodes, 1-CPU pods:
rack1 (0+3)/4, rack2 (2+3)/6, rack3 (1+3)/6)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.pod_group import Placement, PodGroupAssignment, PodGroupInfo
from scheduler.plugins import node_resources_fit
from tests.scheduler import fakes


def cpu_node(name: str) -> dict[str, Any]:
    # Nodes with cpu alone, as upstream's test nodes: memory takes no part in the score.
    return fakes.node(name, cpu="2", memory="0")


RACKS = {"rack1": ["n1", "n2"], "rack2": ["n3", "n4", "n5"], "rack3": ["n6", "n7", "n8"]}
EXISTING = [fakes.pod("existing1", node_name="n3", requests={"cpu": "2"}),
            fakes.pod("existing2", node_name="n8", requests={"cpu": "1"})]
PODS = [fakes.pod(f"p{i}", requests={"cpu": "1"}) for i in range(3)]
GROUP = PodGroupInfo({"metadata": {"name": "pg", "namespace": "default"},
                      "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}}, PODS)


def score(args: dict[str, Any], rack: str, where: list[str]) -> int:
    nodes = [cpu_node(n) for names in RACKS.values() for n in names]
    handle = fakes.FakeHandle(nodes, EXISTING)
    plugin = node_resources_fit.new(args, handle, {})
    placement = Placement(f"rack={rack}", [handle.snapshot.get(n) for n in RACKS[rack]])
    assigned = PodGroupAssignment({f"default/p{i}": node for i, node in enumerate(where)})
    value, status = plugin.score_placement(CycleState(), GROUP, placement, assigned)
    assert status is None
    return value


@pytest.mark.parametrize("args", [{}, {"scoringStrategy": {"type": "LeastAllocated"}},
                                  {"scoringStrategy": {"type": "MostAllocated"}}],
                         ids=["default args", "LeastAllocated for nodes", "MostAllocated for nodes"])
def test_the_tightest_rack_scores_highest_whatever_the_node_strategy(args: dict[str, Any]) -> None:
    scores = {rack: score(args, rack, nodes * 2) for rack, nodes in RACKS.items()}
    assert scores == {"rack1": 75, "rack2": 83, "rack3": 66}


def test_pods_assigned_outside_the_placement_do_not_count() -> None:
    assert score({}, "rack1", ["n1", "n2", "n3"]) == 50  # (0 + 2) / 4


def test_configured_resource_weights_apply() -> None:
    # cpu weight 3, memory weight 1 with no memory on the nodes: memory is left out, cpu alone counts.
    args = {"scoringStrategy": {"type": "LeastAllocated",
                                "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]}}
    assert score(args, "rack2", ["n4", "n4", "n5"]) == 83


def test_memory_counts_when_the_nodes_have_it() -> None:
    handle = fakes.FakeHandle([fakes.node("m1", cpu="4", memory="4Gi")])
    plugin = node_resources_fit.new({}, handle, {})
    pods = [fakes.pod("p0", requests={"cpu": "1", "memory": "3Gi"})]
    group = PodGroupInfo(GROUP.pod_group, pods)
    value, _ = plugin.score_placement(CycleState(), group, Placement("all", [handle.snapshot.get("m1")]),
                                      PodGroupAssignment({"default/p0": "m1"}))
    assert value == (25 + 75) // 2
