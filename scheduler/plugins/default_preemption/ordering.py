"""Which pods and which nodes preemption prefers: upstream's MoreImportantPod and node ranking.

`importance_key` orders victims (higher priority first, then the one running longer), so the
plugin reprieves the most important ones first. `pick_one_node` chooses among candidate nodes by
upstream's five criteria in turn (pickOneNodeForPreemption). Both are pure functions of pod dicts;
the evaluator (`evaluator.py`) calls them. Each takes the priority to read (`priority_of`): a pod's
own by default, its PodGroup's under workload-aware preemption (`framework/pod_priority.py`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

Obj = dict[str, Any]
PriorityOf = Callable[[Obj], int]
_INT32_MAX = 2**31 - 1


def priority(pod: Obj) -> int:
    """spec.priority; a pod without one resolves to the static default 0 (corev1helpers.PodPriority)."""
    value = (pod.get("spec") or {}).get("priority")
    return int(value) if value is not None else 0


@functools.lru_cache(maxsize=4096)
def _seconds(stamp: str) -> float:
    # Pods started in the same second share a stamp; a dry run over 500 nodes asks for each many times.
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def start_time(pod: Obj) -> float:
    """status.startTime in seconds; a pod not started yet counts as starting now, as upstream's does."""
    stamp = (pod.get("status") or {}).get("startTime")
    if not stamp:
        return time.time()
    return _seconds(str(stamp))


def importance_key(pod: Obj, priority_of: PriorityOf = priority) -> tuple[int, float]:
    """Sorts the most important first: higher priority, then the one that started earlier
    (util.MoreImportantPod as a key)."""
    return (-priority_of(pod), start_time(pod))


class Victims:
    """The pods to evict on one node (most important first) and how many of them break a PDB."""

    __slots__ = ("pods", "num_pdb_violations")

    def __init__(self, pods: list[Obj], num_pdb_violations: int = 0) -> None:
        self.pods = pods
        self.num_pdb_violations = num_pdb_violations

    def __repr__(self) -> str:
        names = [(p.get("metadata") or {}).get("name") for p in self.pods]
        return f"Victims({names}, pdb_violations={self.num_pdb_violations})"


ScoreFn = Callable[[str], float]


def default_score_functions(nodes: Mapping[str, Victims], priority_of: PriorityOf = priority) -> list[ScoreFn]:
    """Upstream's criteria, each a score where higher wins, in the order they break ties."""
    # Hundreds of candidates tie on the first criteria as often as not: each node's victim
    # priorities are read once for all of them, not once per criterion.
    priorities: dict[str, list[int]] = {}

    def priorities_of(node: str) -> list[int]:
        found = priorities.get(node)
        if found is None:
            found = priorities[node] = [priority_of(p) for p in nodes[node].pods]
        return found

    def fewest_pdb_violations(node: str) -> float:
        return -nodes[node].num_pdb_violations

    def lowest_highest_priority(node: str) -> float:
        return -priorities_of(node)[0]

    def smallest_priority_sum(node: str) -> float:
        # Shift every priority to be non-negative, so that a node with a few negative-priority
        # victims does not beat one with fewer victims of the same priority.
        return -sum(p + _INT32_MAX + 1 for p in priorities_of(node))

    def fewest_victims(node: str) -> float:
        return -len(nodes[node].pods)

    def latest_start_time(node: str) -> float:
        # Among the victims of the highest priority, the earliest start (util.GetEarliestPodStartTime).
        values = priorities_of(node)
        if not values:
            return float("-inf")
        top = max(values)
        return min(start_time(p) for p, value in zip(nodes[node].pods, values) if value == top)

    return [fewest_pdb_violations, lowest_highest_priority, smallest_priority_sum, fewest_victims,
            latest_start_time]


def pick_one_node(nodes: Mapping[str, Victims], score_functions: list[ScoreFn] | None = None) -> str:
    """The node whose victims hurt least; "" when there is none. Ties after every criterion go to
    the first node in `nodes`' order."""
    if not nodes:
        return ""
    remaining = list(nodes)
    for score in score_functions or default_score_functions(nodes):
        scores = {node: score(node) for node in remaining}
        best = max(scores.values())
        remaining = [node for node in remaining if scores[node] == best]
        if len(remaining) == 1:
            return remaining[0]
    return remaining[0]
