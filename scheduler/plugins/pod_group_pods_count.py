"""PodGroupPodsCount: favour the placement that fits more of the group's pods (KEP-5732).

A placementScore plugin. The raw score of a feasible placement is the group's pods already on
nodes (assumed, binding or bound) plus the pods the cycle placed inside it; normalizing scales
them by the largest raw score to [0, 100], not by minCount, so that one pod more or less moves
the score by little (upstream's NormalizePlacementScore). The already-placed count is the same
for every placement of one cycle and is read once into the CycleState. Called through the
placementScore point by the PodGroup cycle (`scheduler/podgroup/`).
"""

from __future__ import annotations

from typing import Any

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, Features, Handle
from scheduler.framework.pod_group import Placement, PodGroupAssignment, PodGroupInfo
from scheduler.framework.status import Status
from scheduler.plugins import names, pod_group_members

PLACED_KEY = "PlacementScore" + names.POD_GROUP_PODS_COUNT


class PodGroupPodsCount:
    name = names.POD_GROUP_PODS_COUNT

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def score_placement(self, state: CycleState, group: PodGroupInfo, placement: Placement,
                        assignment: PodGroupAssignment) -> tuple[int, Status | None]:
        placed = state.get(PLACED_KEY)
        if placed is None or placed[0] != group.key:
            meta = group.pod_group.get("metadata") or {}
            count = len(pod_group_members.placed(self.handle.snapshot, meta.get("namespace", ""),
                                                 meta.get("name", "")))
            placed = (group.key, count)
            state.write(PLACED_KEY, placed)
        return placed[1] + len(assignment.pod_to_node), None

    def normalize_placement_scores(self, state: CycleState, group: PodGroupInfo, scores: list[int]) -> Status | None:
        """Scale in place to [MIN_NODE_SCORE, MAX_NODE_SCORE] by the largest count."""
        top = max(scores, default=0)
        if top == 0:
            return Status.as_error("no pods from pod group are assigned to any of the candidate placements")
        for i, score in enumerate(scores):
            scores[i] = MIN_NODE_SCORE + score * (MAX_NODE_SCORE - MIN_NODE_SCORE) // top
        return None


def new(args: dict[str, Any], handle: Handle, features: Features) -> PodGroupPodsCount:
    return PodGroupPodsCount(handle)
