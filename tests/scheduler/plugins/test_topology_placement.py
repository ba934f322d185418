"""TopologyPlacementGenerator: one placement per value of the group's topology label, selectors
narrowed from the parent's, the domain of already-placed pods, and the no-label / no-constraint
answers (upstream's texts)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.pod_group import Placement, PodGroupInfo
from scheduler.framework.status import Code
from scheduler.plugins import topology_placement
from tests.scheduler import fakes

NODES = [fakes.node("a1", labels={"rack": "a"}), fakes.node("a2", labels={"rack": "a"}),
         fakes.node("b1", labels={"rack": "b"}), fakes.node("x1")]


def group(topology: list[dict[str, Any]] | None = None, *, name: str = "pg", min_count: int = 2) -> PodGroupInfo:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if topology is not None:
        spec["schedulingConstraints"] = {"topology": topology}
    return PodGroupInfo({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def member(name: str, node_name: str = "", group_name: str = "pg") -> dict[str, Any]:
    return fakes.pod(name, node_name=node_name, spec={"schedulingGroup": {"podGroupName": group_name}})


def generate(handle: fakes.FakeHandle, info: PodGroupInfo, parents: list[Placement] | None = None) -> Any:
    plugin = topology_placement.new({}, handle, {})
    root = Placement("", list(handle.snapshot.node_infos))
    return plugin.generate_placements(CycleState(), info, parents if parents is not None else [root])


def by_name(placements: list[Placement]) -> dict[str, list[str]]:
    return {p.name: [n.name for n in p.nodes] for p in placements}


def test_one_placement_per_label_value_in_sorted_order_and_unlabelled_nodes_left_out() -> None:
    placements, status = generate(fakes.FakeHandle(NODES), group([{"key": "rack"}]))
    assert status is None
    assert by_name(placements) == {"rack=a": ["a1", "a2"], "rack=b": ["b1"]}
    assert [p.name for p in placements] == ["rack=a", "rack=b"]
    assert placements[0].node_selector == {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]}]}


@pytest.mark.parametrize("topology", [None, []], ids=["no schedulingConstraints", "an empty topology list"])
def test_a_group_without_a_constraint_gets_nothing_said(topology: Any) -> None:
    assert generate(fakes.FakeHandle(NODES), group(topology)) == (None, None)


def test_no_node_with_the_label_is_unschedulable_with_upstreams_message() -> None:
    placements, status = generate(fakes.FakeHandle(NODES), group([{"key": "zone"}]))
    assert placements is None
    assert status.code == Code.UNSCHEDULABLE
    assert status.message == "no nodes found with topology label 'zone'"


def test_an_empty_key_is_an_error() -> None:
    _, status = generate(fakes.FakeHandle(NODES), group([{"key": ""}]))
    assert status.code == Code.ERROR


def test_a_parent_selector_is_kept_and_every_term_gets_the_requirement() -> None:
    handle = fakes.FakeHandle(NODES)
    parent_selector = {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b1"]}]}]}
    parent = Placement("zone=z1", [handle.snapshot.get("b1")], parent_selector)
    placements, status = generate(handle, group([{"key": "rack"}]), [parent])
    assert status is None
    [child] = placements
    assert child.name == "zone=z1/rack=b"
    requirement = {"key": "rack", "operator": "In", "values": ["b"]}
    assert child.node_selector == {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}, requirement]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b1"]}],
         "matchExpressions": [requirement]}]}
    assert parent_selector["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "zone", "operator": "In", "values": ["z1"]}]  # the parent's is not touched


def test_pods_of_the_group_already_on_a_node_keep_the_rest_in_their_domain() -> None:
    handle = fakes.FakeHandle(NODES, [member("p0", "b1"), member("other", "a1", group_name="pg2")])
    placements, status = generate(handle, group([{"key": "rack"}]))
    assert status is None
    assert by_name(placements) == {"rack=b": ["b1"]}


def test_already_placed_pods_in_two_domains_are_an_error() -> None:
    handle = fakes.FakeHandle(NODES, [member("p0", "b1"), member("p1", "a2")])
    _, status = generate(handle, group([{"key": "rack"}]))
    assert status.code == Code.ERROR
    assert status.message == ("cannot determine domain for already scheduled pods: "
                              "more than 1 domain found for pod group: a, b")  # node order


def test_a_same_named_group_in_another_namespace_does_not_count() -> None:
    elsewhere = fakes.pod("p0", namespace="other", node_name="b1", spec={"schedulingGroup": {"podGroupName": "pg"}})
    placements, _ = generate(fakes.FakeHandle(NODES, [elsewhere]), group([{"key": "rack"}]))
    assert sorted(by_name(placements)) == ["rack=a", "rack=b"]
