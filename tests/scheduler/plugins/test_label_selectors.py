"""label_selectors: metav1.LabelSelector with apimachinery's meaning (nil selects nothing, {} all)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.plugins import label_selectors
from scheduler.plugins.label_selectors import Requirement

LABELS = {"app": "web", "tier": "front"}


@pytest.mark.parametrize("spec,want", [
    pytest.param(None, False, id="A missing selector selects nothing"),
    pytest.param({}, True, id="An empty selector selects everything"),
    pytest.param({"matchLabels": {"app": "web"}}, True, id="matchLabels that the labels hold select them"),
    pytest.param({"matchLabels": {"app": "db"}}, False, id="A different value does not"),
    pytest.param({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "back"]}]}, True,
                 id="In matches any listed value"),
    pytest.param({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}]}, False,
                 id="NotIn refuses a listed value"),
    pytest.param({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, True,
                 id="NotIn accepts a missing key"),
    pytest.param({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, True, id="Exists needs the key"),
    pytest.param({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, False,
                 id="DoesNotExist refuses the key"),
    pytest.param({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["x"]}]},
                 False, id="matchLabels and matchExpressions are ANDed"),
])
def test_matches(spec: dict[str, Any] | None, want: bool) -> None:
    assert label_selectors.label_selector(spec).matches(LABELS) is want


@pytest.mark.parametrize("spec,message", [
    pytest.param({"matchExpressions": [{"key": "a", "operator": "In"}]}, "values set can't be empty",
                 id="In without values is refused"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "must be empty",
                 id="Exists with values is refused"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, "not a valid",
                 id="Node selector operators are not label selector operators"),
])
def test_invalid(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        label_selectors.label_selector(spec)


def test_adding_to_nothing_stays_nothing() -> None:
    added = label_selectors.NOTHING.adding(Requirement("app", "In", frozenset(["web"])))
    assert added.nothing and not added.matches(LABELS)
    assert label_selectors.EVERYTHING.adding(Requirement("app", "In", frozenset(["db"]))).matches(LABELS) is False
    assert label_selectors.from_set({"app": "web"}).matches(LABELS) and label_selectors.EVERYTHING.empty
