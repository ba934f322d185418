"""Label selectors and node selectors as the scheduler plugins evaluate them.

`label_selector(spec)` compiles a metav1.LabelSelector into a `Selector` with apimachinery's
meaning: a missing selector selects nothing, an empty one everything. `required_node_affinity(pod)`
is component-helpers' `GetRequiredNodeAffinity`: the pod's nodeSelector AND its required node
affinity terms. `node_selector_matches` evaluates a v1.NodeSelector (pod node affinity, PV node
affinity). Used by PodTopologySpread, InterPodAffinity and VolumeBinding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist (label selectors); Gt, Lt (node selectors)
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
        if op in ("Gt", "Lt"):
            # Both sides must parse as integers, or the requirement does not match (apimachinery).
            if self.key not in labels or len(self.values) != 1:
                return False
            try:
                have, want = int(labels[self.key]), int(next(iter(self.values)))
            except ValueError:
                return False
            return have > want if op == "Gt" else have < want
        raise ValueError(f"{op!r} is not a valid label selector operator")


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


def _term_matches(term: Obj, node: Obj) -> bool:
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False  # an empty term matches no node
    meta = node.get("metadata") or {}
    if not all(r.matches(meta.get("labels") or {}) for r in _requirements(expressions)):
        return False
    node_fields = {"metadata.name": meta.get("name", "")}
    for r in _requirements(fields):
        if r.key != "metadata.name" or r.operator not in ("In", "NotIn"):
            return False
        if not r.matches(node_fields):
            return False
    return True


def node_selector_matches(node_selector: Obj | None, node: Obj) -> bool:
    """A v1.NodeSelector: its terms are ORed; no selector at all matches every node."""
    if node_selector is None:
        return True
    try:
        return any(_term_matches(term, node) for term in node_selector.get("nodeSelectorTerms") or [])
    except ValueError:
        return False  # a term that does not parse matches nothing, as upstream's lazy errors do


def required_node_affinity(pod: Obj) -> "RequiredNodeAffinity":
    spec = pod.get("spec") or {}
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {})
    return RequiredNodeAffinity(spec.get("nodeSelector") or {},
                                affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))


@dataclass(frozen=True)
class RequiredNodeAffinity:
    node_selector: Mapping[str, str]
    terms: Obj | None

    def matches(self, node: Obj) -> bool:
        labels = (node.get("metadata") or {}).get("labels") or {}
        if any(labels.get(k) != v for k, v in self.node_selector.items()):
            return False
        return node_selector_matches(self.terms, node)
