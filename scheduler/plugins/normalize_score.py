"""Upstream's `helper.DefaultNormalizeScore`: scale raw scores in [0, max] onto [0, MAX_NODE_SCORE].

Score plugins whose raw score is a count (TaintToleration's intolerable taints, NodeAffinity's
matched weights) call it from `normalize_score`. `reverse` turns "more is worse" counts into
"fewer is better"; when every score is 0 the reversed result is the maximum for every node.
`default_normalize_values` is the same over plain ints, for the framework's batch path.
Integer division, as upstream's int64 arithmetic does (scores are never negative).
"""

from __future__ import annotations

from scheduler.framework.interfaces import MAX_NODE_SCORE, NodeScore


def default_normalize_values(values: list[int], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> list[int]:
    """`default_normalize` over plain ints by position (a plugin's `normalize_values`)."""
    highest = max(values, default=0)
    if highest == 0:
        return [max_priority] * len(values) if reverse else values
    if reverse:
        return [max_priority - max_priority * v // highest for v in values]
    return [max_priority * v // highest for v in values]


def default_normalize(scores: list[NodeScore], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> None:
    highest = max((s.score for s in scores), default=0)
    if highest == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        scaled = max_priority * s.score // highest
        s.score = max_priority - scaled if reverse else scaled
