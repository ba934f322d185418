"""Does a core `NodeSelector` match a node? The test a claim's `status.allocation.nodeSelector` gets.

An allocated claim may only be used on the nodes its allocation names (a node-local pool says
`metadata.name In [node]`, a network-attached one a label). This is upstream's
`nodeaffinity.NodeSelector.Match`: terms are ORed, the expressions and fields inside one term
ANDed, and an empty term matches nothing. Used by the plugin's Filter, once per claim and node.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


class InvalidSelector(ValueError):
    """A selector the API should not have admitted (an unknown operator, a non-integer Gt value)."""


def _requirement(req: Obj, values_of: dict[str, str]) -> bool:
    key, op, values = req.get("key", ""), req.get("operator", ""), req.get("values") or []
    present = key in values_of
    value = values_of.get(key, "")
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise InvalidSelector(f"for 'Gt', 'Lt' operators, exactly one value is required")
        try:
            bound = int(values[0])
        except ValueError:
            raise InvalidSelector(f"invalid value {values[0]!r} for operator {op}") from None
        if not present:
            return False
        try:
            mine = int(value)
        except ValueError:
            return False
        return mine > bound if op == "Gt" else mine < bound
    raise InvalidSelector(f"{op!r} is not a valid label selector operator")


def _term(term: Obj, labels: dict[str, str], fields: dict[str, str]) -> bool:
    expressions = term.get("matchExpressions") or []
    field_reqs = term.get("matchFields") or []
    if not expressions and not field_reqs:
        return False
    return (all(_requirement(r, labels) for r in expressions)
            and all(_requirement(r, fields) for r in field_reqs))


def matches(selector: Obj, node: Obj) -> bool:
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    fields = {"metadata.name": meta.get("name", "")}
    return any(_term(t, labels, fields) for t in selector.get("nodeSelectorTerms") or [])


def check(selector: Obj) -> None:
    """Raise InvalidSelector for a selector that cannot be evaluated (PreFilter turns it into an error)."""
    probe = {"metadata": {"name": "", "labels": {}}}
    for term in selector.get("nodeSelectorTerms") or []:
        for req in [*(term.get("matchExpressions") or []), *(term.get("matchFields") or [])]:
            _requirement(req, {req.get("key", ""): "0"})
            _requirement(req, probe["metadata"]["labels"])
