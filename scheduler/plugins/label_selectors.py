"""metav1.LabelSelector as the scheduler plugins evaluate it (apimachinery's labels.Selector).

`label_selector(spec)` compiles a selector into a `Selector`: a missing selector selects nothing,
an empty one everything, as `LabelSelectorAsSelector` does; `from_set` is `SelectorFromSet`;
`adding` is `Selector.Add` (matchLabelKeys merges). Node selectors live in `node_selectors.py`.
Used by PodTopologySpread, InterPodAffinity (pod and namespace selectors) and VolumeBinding
(a claim's selector over PV labels).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        return False  # compiled requirements have one of the four operators


@dataclass(frozen=True)
class Selector:
    """Requirements ANDed together; `nothing` is labels.Nothing(), which matches no set at all."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        """Selects everything (no requirements); labels.Selector.Empty()."""
        return not self.nothing and not self.requirements

    def adding(self, *requirements: Requirement) -> "Selector":
        # Adding to Nothing yields Nothing, as apimachinery's nothingSelector.Add does.
        if self.nothing:
            return self
        return Selector(self.requirements + tuple(requirements))


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def from_set(labels: Mapping[str, str]) -> Selector:
    return Selector(tuple(Requirement(k, "In", frozenset([v])) for k, v in sorted(labels.items())))


def _requirements(expressions: Iterable[Obj] | None) -> tuple[Requirement, ...]:
    out = []
    for expr in expressions or []:
        op = expr.get("operator", "")
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise ValueError(f"{op!r} is not a valid label selector operator")
        values = frozenset(str(v) for v in expr.get("values") or [])
        if op in ("In", "NotIn") and not values:
            raise ValueError("for 'in', 'notin' operators, values set can't be empty")
        if op in ("Exists", "DoesNotExist") and values:
            raise ValueError("values set must be empty for exists and does not exist")
        out.append(Requirement(expr.get("key", ""), op, values))
    return tuple(out)


def label_selector(spec: Obj | None) -> Selector:
    """metav1.LabelSelectorAsSelector: None selects nothing, {} selects everything."""
    if spec is None:
        return NOTHING
    match_labels = spec.get("matchLabels") or {}
    expressions = spec.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    reqs = tuple(Requirement(k, "In", frozenset([str(v)])) for k, v in sorted(match_labels.items()))
    return Selector(reqs + _requirements(expressions))
