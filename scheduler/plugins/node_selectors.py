"""Node selector terms as upstream's component-helpers `nodeaffinity` evaluates them.

`RequiredNodeAffinity.of(pod)` is a pod's `spec.nodeSelector` plus its required node affinity;
`NodeSelector` is a list of ORed terms (matchExpressions on labels ANDed with matchFields on
`metadata.name`); `PreferredTerms` sums the weights of the preferred terms a node matches.
Terms are compiled once per pod (PreFilter/PreScore), then matched against each node. A term that
does not parse (a Gt with two values, an unknown operator) matches nothing, as upstream's lazy
selector ignores it. NodeAffinity uses these; the DRA allocator may match slice node selectors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]
Requirement = Callable[[Mapping[str, str], str], bool]  # (node labels, node name) -> matches
NAME_FIELD = "metadata.name"


class SelectorError(ValueError):
    """A requirement the API would have refused; the message names the path and the problem."""


def _int(value: str) -> int | None:
    try:
        return int(value, 10)
    except (TypeError, ValueError):
        return None


def _label_requirement(expr: Obj, path: str) -> Requirement:
    key = expr.get("key") or ""
    operator = expr.get("operator") or ""
    values = list(expr.get("values") or [])
    if not key:
        raise SelectorError(f"{path}.key: Invalid value: \"\": name part must be non-empty")
    if operator in ("In", "NotIn"):
        if not values:
            raise SelectorError(f"{path}.values: Required value: for 'in', 'notin' operators, values set can't be empty")
        wanted = frozenset(values)
        if operator == "In":
            return lambda labels, _name: key in labels and labels[key] in wanted
        return lambda labels, _name: key not in labels or labels[key] not in wanted
    if operator in ("Exists", "DoesNotExist"):
        if values:
            raise SelectorError(f"{path}.values: Forbidden: values set must be empty for exists and does not exist")
        if operator == "Exists":
            return lambda labels, _name: key in labels
        return lambda labels, _name: key not in labels
    if operator in ("Gt", "Lt"):
        bound = _int(values[0]) if len(values) == 1 else None
        if bound is None:
            raise SelectorError(f"{path}.values: Invalid value: {values!r}: for 'Gt', 'Lt' operators, "
                                f"exactly one value is required and it must be an integer")

        def compare(labels: Mapping[str, str], _name: str) -> bool:
            have = _int(labels[key]) if key in labels else None
            if have is None:
                return False
            return have > bound if operator == "Gt" else have < bound
        return compare
    raise SelectorError(f"{path}.operator: Unsupported value: {operator!r}: supported values: "
                        f"\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"")


def _field_requirement(expr: Obj, path: str) -> Requirement:
    key = expr.get("key") or ""
    operator = expr.get("operator") or ""
    values = list(expr.get("values") or [])
    if len(values) != 1:
        raise SelectorError(f"{path}.values: Invalid value: {values!r}: must have one element")
    if key != NAME_FIELD:
        raise SelectorError(f"{path}.key: Invalid value: {key!r}: not a valid field selector key")
    wanted = values[0]
    if operator == "In":
        return lambda _labels, name: name == wanted
    if operator == "NotIn":
        return lambda _labels, name: name != wanted
    raise SelectorError(f"{path}.operator: Unsupported value: {operator!r}: supported values: \"In\", \"NotIn\"")


@dataclass
class Term:
    requirements: list[Requirement]

    @classmethod
    def compile(cls, term: Obj, path: str) -> "Term":
        reqs = [_label_requirement(e, f"{path}.matchExpressions[{i}]")
                for i, e in enumerate(term.get("matchExpressions") or [])]
        reqs += [_field_requirement(e, f"{path}.matchFields[{i}]") for i, e in enumerate(term.get("matchFields") or [])]
        return cls(reqs)

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        # An empty term selects no node (upstream: "a null or empty term matches no objects").
        return bool(self.requirements) and all(r(labels, name) for r in self.requirements)


def _labels_and_name(node: Obj) -> tuple[Mapping[str, str], str]:
    meta = node.get("metadata") or {}
    return meta.get("labels") or {}, meta.get("name") or ""


@dataclass
class NodeSelector:
    """ORed terms. `lazy=True` drops terms that do not parse instead of raising (pod specs)."""

    terms: list[Term]
    errors: list[str] = field(default_factory=list)

    @classmethod
    def compile(cls, selector: Obj, path: str = "nodeSelectorTerms", lazy: bool = False) -> "NodeSelector":
        terms, errors = [], []
        for i, term in enumerate(selector.get("nodeSelectorTerms") or []):
            try:
                terms.append(Term.compile(term, f"{path}[{i}]"))
            except SelectorError as e:
                if not lazy:
                    raise
                errors.append(str(e))
        return cls(terms, errors)

    def matches(self, node: Obj) -> bool:
        labels, name = _labels_and_name(node)
        return any(t.matches(labels, name) for t in self.terms)


@dataclass
class RequiredNodeAffinity:
    """`spec.nodeSelector` (every pair must be a label) AND the required node affinity terms."""

    node_selector: dict[str, str]
    affinity: NodeSelector | None

    @classmethod
    def of(cls, pod: Obj) -> "RequiredNodeAffinity":
        spec = pod.get("spec") or {}
        required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                    .get("requiredDuringSchedulingIgnoredDuringExecution"))
        affinity = NodeSelector.compile(required, lazy=True) if required is not None else None
        return cls(dict(spec.get("nodeSelector") or {}), affinity)

    def matches(self, node: Obj) -> bool:
        labels, _ = _labels_and_name(node)
        for key, value in self.node_selector.items():
            if labels.get(key) != value:
                return False
        return self.affinity is None or self.affinity.matches(node)


@dataclass
class PreferredTerms:
    weighted: list[tuple[int, Term]]

    @classmethod
    def compile(cls, terms: list[Obj], path: str = "preferredDuringSchedulingIgnoredDuringExecution") -> "PreferredTerms":
        weighted = []
        for i, term in enumerate(terms or []):
            weight = int(term.get("weight") or 0)
            if weight == 0:
                continue  # upstream skips zero-weight terms
            weighted.append((weight, Term.compile(term.get("preference") or {}, f"{path}[{i}].preference")))
        return cls(weighted)

    def score(self, node: Obj) -> int:
        labels, name = _labels_and_name(node)
        return sum(w for w, t in self.weighted if t.matches(labels, name))
