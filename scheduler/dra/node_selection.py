"""Which nodes a slice or a device is for: nodeName, allNodes, or a core/v1 NodeSelector.

A NodeSelector matches when any of its terms does; a term matches when all its matchExpressions
(on labels) and matchFields (only `metadata.name`) hold, and a term with neither matches nothing,
as component-helpers' nodeaffinity does. Used by `allocator.py` for slices with nodeSelector or
allNodes and for devices of perDeviceNodeSelection slices.
"""

from __future__ import annotations

from typing import Any


def _requirement(req: dict[str, Any], value: str | None) -> bool:
    operator = req.get("operator")
    values = req.get("values") or []
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt"):
        if value is None or len(values) != 1:
            return False
        try:
            have, limit = int(value), int(values[0])
        except ValueError:
            return False
        return have > limit if operator == "Gt" else have < limit
    return False


def _term(term: dict[str, Any], name: str, labels: dict[str, str]) -> bool:
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    for req in expressions:
        if not _requirement(req, labels.get(req.get("key", ""))):
            return False
    for req in fields:
        if req.get("key") != "metadata.name" or not _requirement(req, name):
            return False
    return True


def selector_matches(selector: dict[str, Any], node: dict[str, Any]) -> bool:
    meta = node.get("metadata") or {}
    name, labels = meta.get("name", ""), meta.get("labels") or {}
    return any(_term(term or {}, name, labels) for term in selector.get("nodeSelectorTerms") or [])


def matches(node: dict[str, Any], node_name: str, all_nodes: bool, selector: dict[str, Any] | None) -> bool:
    """upstream NodeMatches: the first of nodeName, allNodes, nodeSelector that is set decides."""
    if node_name:
        return (node.get("metadata") or {}).get("name") == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector_matches(selector, node)
    return False
