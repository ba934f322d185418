"""Label selectors as the workload controllers read them: `matches(selector, labels)`.

A `metav1.LabelSelector` (matchLabels plus matchExpressions with In, NotIn, Exists,
DoesNotExist) tested against an object's labels, as apimachinery's `LabelSelectorAsSelector`
does. An empty selector matches everything; a missing one (None) matches nothing, which is how
upstream's controllers treat a ReplicaSet without a selector. Used by `replica_set.py` and
`deployment.py` when they adopt and release what they own.
"""

from __future__ import annotations

from typing import Any


class InvalidSelector(ValueError):
    """An operator the API does not know, or values where none are allowed."""


def matches(selector: dict[str, Any] | None, labels: dict[str, str] | None) -> bool:
    if selector is None:
        return False
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        if not _expression_holds(expression, labels):
            return False
    return True


def _expression_holds(expression: dict[str, Any], labels: dict[str, str]) -> bool:
    key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    raise InvalidSelector(f"{operator!r} is not a valid label selector operator")


def is_empty(selector: dict[str, Any] | None) -> bool:
    return selector is not None and not selector.get("matchLabels") and not selector.get("matchExpressions")
