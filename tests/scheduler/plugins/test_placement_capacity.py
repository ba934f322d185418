"""The aggregate room pre-check: a domain whose summed free capacity cannot hold the `need`
smallest requests is rejected with the shortfall; it never rejects what might fit."""

from __future__ import annotations

from scheduler.framework.status import Code
from scheduler.plugins import placement_capacity
from tests.scheduler import fakes


def nodes(*specs: dict, pods: list[dict] = ()) -> list:  # type: ignore[assignment]
    return fakes.node_infos([fakes.node(f"n{i}", **s) for i, s in enumerate(specs)], list(pods))


def pods(*cpus: str) -> list[dict]:
    return [fakes.pod(f"p{i}", requests={"cpu": c}) for i, c in enumerate(cpus)]


def test_room_summed_over_nodes_passes_even_if_no_single_node_could_hold_two() -> None:
    assert placement_capacity.shortfall(pods("2", "2"), 2, nodes({"cpu": "2"}, {"cpu": "2"})) is None


def test_too_little_cpu_in_the_whole_domain_is_insufficient_cpu() -> None:
    status = placement_capacity.shortfall(pods("2", "2", "2"), 3, nodes({"cpu": "2"}, {"cpu": "2"}))
    assert status.code == Code.UNSCHEDULABLE
    assert status.reasons == ["Insufficient cpu"]


def test_only_the_smallest_requests_up_to_need_are_summed() -> None:
    # minCount 2 of {1, 1, 8}: the two 1-CPU pods could fit in 2 CPUs.
    assert placement_capacity.shortfall(pods("1", "1", "8"), 2, nodes({"cpu": "2"})) is None


def test_used_capacity_and_pod_slots_count() -> None:
    busy = nodes({"cpu": "4", "pods": "2"}, pods=[fakes.pod("old", node_name="n0", requests={"cpu": "3"})])
    status = placement_capacity.shortfall(pods("1", "1"), 2, busy)
    assert status.reasons == ["Too many pods", "Insufficient cpu"]


def test_nothing_needed_is_never_short() -> None:
    assert placement_capacity.shortfall(pods("8"), 0, nodes({"cpu": "1"})) is None
