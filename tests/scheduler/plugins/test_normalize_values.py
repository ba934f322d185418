"""`normalize_values`, NormalizeScore over plain ints, gives what `normalize_score` gives on NodeScores.

The framework prefers it when a plugin has it (scheduler/runtime.py), so each plugin that offers
it is checked against its own NodeScore path on score lists with zeros, ties and large counts.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import NodeScore
from scheduler.plugins import node_affinity, taint_toleration
from scheduler.plugins.dynamic_resources import new as dynamic_resources
from tests.scheduler import fakes

VALUES = {
    "every node scores zero": [0, 0, 0, 0],
    "one node scores": [0, 3, 0, 0],
    "ties and a spread": [5, 5, 1, 0, 9, 9, 2],
    "large counts": [1000, 1, 333, 999, 0],
    "no nodes": [],
}


def plugins() -> dict[str, Any]:
    handle = fakes.FakeHandle([fakes.node("a")])
    return {"TaintToleration": taint_toleration.new({}, handle, {}),
            "NodeAffinity": node_affinity.new({}, handle, {}),
            "DynamicResources": dynamic_resources({}, handle, {})}


@pytest.mark.parametrize("plugin", ["TaintToleration", "NodeAffinity", "DynamicResources"])
@pytest.mark.parametrize("values", VALUES.values(), ids=VALUES.keys())
def test_normalize_values_matches_normalize_score(plugin: str, values: list[int]) -> None:
    chosen = plugins()[plugin]
    pod = fakes.pod("p")
    scores = [NodeScore(f"n{i}", v) for i, v in enumerate(values)]
    assert chosen.normalize_score(CycleState(), pod, scores) is None
    assert chosen.normalize_values(CycleState(), pod, list(values)) == [s.score for s in scores]
