"""NodeResourcesFit's placementScore: how tightly a whole placement would be packed (KEP-5732).

1.36's Fit also scores a PodGroup's placements, by MostAllocated whatever its node strategy: the
tightest fit wins and leaves other domains whole. Per configured resource (default cpu and memory,
weight 1) it sums over the placement's nodes their allocatable and their non-zero requests plus
the requests of the group's pods placed inside it, and takes MostAllocated's weighted mean; a
resource no node of the placement has is left out. `NodeResourcesFit.score_placement` calls this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler.framework.node_info import NodeInfo, pod_key
from scheduler.framework.pod_group import Placement, PodGroupAssignment
from scheduler.plugins import resource_allocation
from scheduler.plugins.resource_allocation import ResourceScorer, ResourceSpec

Obj = dict[str, Any]


def most_allocated_scorer(specs: Sequence[ResourceSpec]) -> ResourceScorer:
    """The scorer placements use: the node scorer's resources and weights, MostAllocated's shape."""
    return ResourceScorer(list(specs), resource_allocation.most_allocated(specs), use_requested=False)


def score(scorer: ResourceScorer, pods: Sequence[Obj], placement: Placement,
          assignment: PodGroupAssignment) -> int:
    in_placement = {node.name for node in placement.nodes}
    group_requests = [0] * len(scorer.specs)
    for pod in pods:
        # A pod the cycle put outside the placement would be a cycle bug; it is not counted here.
        if assignment.pod_to_node.get(pod_key(pod)) not in in_placement:
            continue
        for i, request in enumerate(scorer.pod_requests(pod)):
            group_requests[i] += request
    allocatable = [0] * len(scorer.specs)
    requested = list(group_requests)
    for node in placement.nodes:
        for i, spec in enumerate(scorer.specs):
            have, used = _node_totals(node, spec.name, group_requests[i], scorer)
            allocatable[i] += have
            requested[i] += used
    return scorer.strategy(requested, allocatable)


def _node_totals(node: NodeInfo, name: str, group_request: int, scorer: ResourceScorer) -> tuple[int, int]:
    """(allocatable, already requested) of one resource on one node, as Fit's node scoring reads them;
    an extended resource the group does not ask for takes no part, as in node scoring."""
    if not resource_allocation.is_scalar(name):
        return scorer.allocatable_and_requested(node, name, 0)
    if not group_request:
        return 0, 0
    have, total = scorer.allocatable_and_requested(node, name, group_request)
    return (have, total - group_request) if have else (0, 0)
