"""The PodDisruptionBudget arithmetic as tables: int-or-percent scaling (rounded up), expected
and desired healthy counts, the two-minute life of disruptedPods entries, healthy counting, and
the DisruptionAllowed condition.
"""

from __future__ import annotations

from typing import Any

import pytest

from controllers import disruption_budgets as budgets
from controllers.disruption_budgets import BudgetError

NOW = 1_800_000_000.0

SCALED_CASES = [
    ("an integer is taken as it is", 2, 10, 2),
    ("a percentage of the total is rounded up", "30%", 5, 2),
    ("an exact percentage is not rounded", "50%", 4, 2),
    ("a percentage of nothing is nothing", "50%", 0, 0),
    ("a hundred percent is the total", "100%", 7, 7),
]


@pytest.mark.parametrize("value, total, want", [c[1:] for c in SCALED_CASES], ids=[c[0] for c in SCALED_CASES])
def test_scaled(value: int | str, total: int, want: int) -> None:
    assert budgets.scaled(value, total) == want


def test_a_string_that_is_not_a_percentage_is_an_error() -> None:
    with pytest.raises(BudgetError, match="not a percentage"):
        budgets.scaled("3", 10)


DESIRED_CASES = [
    ("an integer minAvailable counts the pods there are", {"minAvailable": 2}, 5, 9, (5, 2)),
    ("a percentage minAvailable is of the controllers' scale", {"minAvailable": "50%"}, 2, 5, (5, 3)),
    ("maxUnavailable is taken off the controllers' scale", {"maxUnavailable": 1}, 3, 4, (4, 3)),
    ("a percentage maxUnavailable rounds up, so fewer must stay", {"maxUnavailable": "30%"}, 5, 5, (5, 3)),
    ("maxUnavailable above the scale wants no healthy pods", {"maxUnavailable": 9}, 3, 3, (3, 0)),
    ("a budget with neither rule expects nothing", {}, 3, 3, (0, 0)),
]


@pytest.mark.parametrize("spec, pods, scale, want", [c[1:] for c in DESIRED_CASES], ids=[c[0] for c in DESIRED_CASES])
def test_desired_healthy(spec: dict[str, Any], pods: int, scale: int, want: tuple[int, int]) -> None:
    assert budgets.desired_healthy(spec, pods, lambda: scale) == want


def _pod(name: str, ready: bool = True, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = budgets.format_time(NOW)
    return {"metadata": meta, "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


DISRUPTED_CASES = [
    ("a fresh eviction is kept and rechecked when its two minutes end",
     {"a": budgets.format_time(NOW - 30)}, [_pod("a")], ({"a": budgets.format_time(NOW - 30)}, NOW + 90, [])),
    ("an eviction older than two minutes is dropped and its pod reported",
     {"a": budgets.format_time(NOW - 200)}, [_pod("a")], ({}, None, ["a"])),
    ("a pod already deleting is no longer disrupted",
     {"a": budgets.format_time(NOW - 30)}, [_pod("a", deleting=True)], ({}, None, [])),
    ("an entry for a pod that is gone is dropped", {"gone": budgets.format_time(NOW - 30)}, [_pod("a")], ({}, None, [])),
]


@pytest.mark.parametrize("recorded, pods, want", [c[1:] for c in DISRUPTED_CASES], ids=[c[0] for c in DISRUPTED_CASES])
def test_disrupted_pods(recorded: dict[str, str], pods: list[dict[str, Any]], want: tuple[Any, ...]) -> None:
    kept, recheck, overdue = budgets.disrupted_pods({"status": {"disruptedPods": recorded}}, pods, NOW)
    assert (kept, recheck, [p["metadata"]["name"] for p in overdue]) == want


def test_healthy_pods_are_ready_not_deleting_and_not_disrupted() -> None:
    pods = [_pod("ok"), _pod("unready", ready=False), _pod("going", deleting=True), _pod("evicted")]
    assert budgets.current_healthy(pods, {"evicted": "t"}) == 1


STATUS_CASES = [
    ("spare healthy pods allow disruptions", 4, 2, 4, 2, "True", "SufficientPods"),
    ("exactly the desired pods allow none", 2, 2, 4, 0, "False", "InsufficientPods"),
    ("fewer than desired never goes negative", 1, 3, 4, 0, "False", "InsufficientPods"),
    ("no expected pods allow nothing", 2, 0, 0, 0, "False", "InsufficientPods"),
]


@pytest.mark.parametrize("healthy, desired, expected, allowed, cond, reason", [c[1:] for c in STATUS_CASES],
                         ids=[c[0] for c in STATUS_CASES])
def test_status(healthy: int, desired: int, expected: int, allowed: int, cond: str, reason: str) -> None:
    pdb = {"metadata": {"generation": 3}, "status": {}}
    got = budgets.status(pdb, healthy, desired, expected, {}, "now")
    assert got == {"observedGeneration": 3, "disruptionsAllowed": allowed, "currentHealthy": healthy,
                   "desiredHealthy": desired, "expectedPods": expected,
                   "conditions": [{"type": "DisruptionAllowed", "status": cond, "observedGeneration": 3,
                                   "reason": reason, "message": "", "lastTransitionTime": "now"}]}


def test_the_transition_time_stays_while_the_condition_holds() -> None:
    old = [{"type": "DisruptionAllowed", "status": "True", "lastTransitionTime": "before", "reason": "SufficientPods"}]
    kept = budgets.set_condition(old, budgets.allowed_condition(1, 2), "now")
    flipped = budgets.set_condition(old, budgets.allowed_condition(0, 2), "now")
    assert kept[0]["lastTransitionTime"] == "before" and flipped[0]["lastTransitionTime"] == "now"


def test_a_failed_sync_allows_nothing_and_says_why() -> None:
    pdb = {"status": {"observedGeneration": 1, "disruptionsAllowed": 2, "conditions": []}}
    got = budgets.failed_status(pdb, 'found no controllers for pod "x"', "now")
    assert got["disruptionsAllowed"] == 0
    assert got["conditions"] == [{"type": "DisruptionAllowed", "status": "False", "observedGeneration": 1,
                                  "reason": "SyncFailed", "message": 'found no controllers for pod "x"',
                                  "lastTransitionTime": "now"}]
