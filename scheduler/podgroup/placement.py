"""The placement loop of the PodGroup cycle (KEP-5732): generate domains, try the group in each,
score the feasible ones, keep the best.

`choose(fw, state, group, nodes, attempt)` runs the profile's placementGenerate plugins over the
root placement (all nodes; each plugin refines the previous one's answer, None keeping it), then
for each candidate: the aggregate room pre-check for the group's minCount (`placement_capacity`;
only when there are several candidates to choose between),
and `attempt(placement)`, the caller's pod-by-pod simulation restricted to the placement's nodes
(it assumes, and reverts before it returns). Feasible placements are scored by the placementScore
plugins (normalized where the plugin can, weighted, summed; a tie is broken at random) and the
best attempt is returned for the cycle to commit. No feasible placement: Unschedulable with
upstream's "0/N placements are available, first placement status: ...". Called by the PodGroup
cycle; `--record-results` sees the generate and score answers through the framework's observer.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.pod_group import GANG, Placement, PodGroupAssignment, PodGroupInfo
from scheduler.framework.status import Code, Status
from scheduler.plugins import placement_capacity, pod_group_members

T = TypeVar("T")
GROUP_UNSCHEDULABLE = "pod group is unschedulable"  # upstream's errPodGroupUnschedulable
GENERATE, SCORE = "placementGenerate", "placementScore"


@dataclass
class Attempt(Generic[T]):
    """What trying the group inside one placement gave: `status` None means feasible."""

    status: Status | None
    assignment: PodGroupAssignment = field(default_factory=PodGroupAssignment)
    result: T | None = None


@dataclass
class Choice(Generic[T]):
    """The loop's answer: the winning placement and its attempt, or the status that says why none."""

    status: Status | None
    placement: Placement | None = None
    attempt: Attempt[T] | None = None
    tried: list[tuple[Placement, Status | None]] = field(default_factory=list)


def _plugins(fw: Any, point: str) -> list[tuple[Any, int]]:
    return [(fw.plugins[ref.name], ref.weight or 1) for ref in fw.profile.plugins(point) if ref.name in fw.plugins]


def _observe(fw: Any, group: PodGroupInfo, point: str, plugin: str, node: str, value: Any) -> None:
    observer = getattr(fw, "observer", None)
    if observer is not None:
        for pod in group.pods:
            observer.observe(pod, point, plugin, node, value)


def generate(fw: Any, state: CycleState, group: PodGroupInfo,
             nodes: Sequence[NodeInfo]) -> tuple[list[Placement], Status | None]:
    """The candidate placements: the root one unless a plugin narrows it."""
    placements = [Placement("", list(nodes))]
    for plugin, _ in _plugins(fw, GENERATE):
        try:
            children, status = plugin.generate_placements(state, group, placements)
        except Exception as exc:  # noqa: BLE001 - a plugin bug is its Status ERROR, as everywhere
            children, status = None, Status.as_error(exc)
        _observe(fw, group, "PlacementGenerate", plugin.name, "",
                 status if status is not None else [p.name for p in (children or placements)])
        if status is not None:
            return [], status.with_plugin(plugin.name)
        if children is not None:
            placements = children
    return placements, None


def needed(group: PodGroupInfo, nodes: Sequence[NodeInfo]) -> int:
    """How many of the pending pods a gang still needs placed: minCount less those already on nodes."""
    if group.policy != GANG:
        return 0
    already = group.placed
    if already is None:
        meta = group.pod_group.get("metadata") or {}
        already = len(pod_group_members.placed(nodes, meta.get("namespace", ""), meta.get("name", "")))
    return max(group.min_count - already, 0)


def choose(fw: Any, state: CycleState, group: PodGroupInfo, nodes: Sequence[NodeInfo],
           attempt: Callable[[Placement], Attempt[T]]) -> Choice[T]:
    placements, status = generate(fw, state, group, nodes)
    if status is not None:
        return Choice(status)
    need = needed(group, nodes)
    feasible: list[tuple[Placement, Attempt[T]]] = []
    tried: list[tuple[Placement, Status | None]] = []
    for placement in placements:
        # The room pre-check is there to skip domains cheaply; with one placement the attempt decides.
        short = placement_capacity.shortfall(group.pods, need, placement.nodes) if len(placements) > 1 else None
        if short is not None:
            if need <= len(group.pods):  # say how far off it is, as the simulation's text does
                most = placement_capacity.most_that_fit(group.pods, placement.nodes)
                short = Status.unschedulable(f"{GROUP_UNSCHEDULABLE}: needs {need}, at most {most} fit: "
                                             f"{need - most} pods {short.message}")
            tried.append((placement, short))
            continue
        outcome = attempt(placement)
        if outcome.status is not None and outcome.status.code is Code.ERROR:
            return Choice(outcome.status, placement, outcome, tried + [(placement, outcome.status)])
        tried.append((placement, outcome.status))
        if outcome.status is None:
            feasible.append((placement, outcome))
    if not feasible:
        first = tried[0][1] if tried else None
        text = first.message if first is not None else "no placement was generated"
        return Choice(Status.unschedulable(f"0/{len(placements)} placements are available, "
                                           f"first placement status: {text}"), tried=tried)
    if len(feasible) == 1:
        placement, outcome = feasible[0]
        return Choice(None, placement, outcome, tried)
    index, status = best(fw, state, group, feasible)
    if status is not None:
        return Choice(status, tried=tried)
    placement, outcome = feasible[index]
    return Choice(None, placement, outcome, tried)


def best(fw: Any, state: CycleState, group: PodGroupInfo,
         feasible: Sequence[tuple[Placement, Attempt[Any]]]) -> tuple[int, Status | None]:
    """Which feasible placement scores highest over the placementScore plugins."""
    totals = [0] * len(feasible)
    for plugin, weight in _plugins(fw, SCORE):
        scores: list[int] = []
        for placement, outcome in feasible:
            try:
                value, status = plugin.score_placement(state, group, placement, outcome.assignment)
            except Exception as exc:  # noqa: BLE001
                value, status = 0, Status.as_error(exc)
            if status is not None:
                return 0, status.with_plugin(plugin.name)
            scores.append(int(value))
            _observe(fw, group, "PlacementScore", plugin.name, placement.name, int(value))
        normalize = getattr(plugin, "normalize_placement_scores", None)
        if normalize is not None:
            status = normalize(state, group, scores)
            if status is not None:
                return 0, status.with_plugin(plugin.name)
        for i, score in enumerate(scores):
            totals[i] += score * weight
            _observe(fw, group, "PlacementFinalScore", plugin.name, feasible[i][0].name, score * weight)
    top = max(totals)
    return random.choice([i for i, total in enumerate(totals) if total == top]), None
