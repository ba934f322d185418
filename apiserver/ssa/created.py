"""The fields a create gives its manager when nobody owns anything yet: the fast path of `compare`.

A create by an Update operation owns what `compare(<empty object>, new)` calls added or modified
(the object's Go zero fields — `spec: {}`, a null slice — are no change). That general walk keeps
a path list and three result sets for both sides of every node; here there is one side and one
set, built bottom-up, which is most of a create's managedFields cost. `managed_fields.on_create`
uses it for a plain create and the updater for everything else; tests/apiserver/ssa check that
the two agree on every kind.
"""

from __future__ import annotations

from typing import Any

from apiserver.ssa import elements, fieldsets, shapes
from apiserver.ssa.compare import ZeroOf, same
from apiserver.ssa.shapes import MISSING

SELF = fieldsets.SELF


def added_fields(new: dict[str, Any], node: shapes.Node, zero_of: ZeroOf | None) -> fieldsets.FieldSet:
    """compare({}, new).added ∪ .modified, for an object root (a map)."""
    out, _ = _walk({}, new, node, zero_of)
    return out


def _walk(zero: Any, value: Any, node: shapes.Node, zero_of: ZeroOf | None) -> tuple[fieldsets.FieldSet, bool]:
    """(the set below `value`, whether its own path is a member); `zero` is what the old object
    held here: MISSING, or the Go zero value of a field of a struct that was there."""
    kind = shapes.classify(node, zero, value)
    if kind == "leaf":
        return {}, zero is MISSING or not same(zero, value)
    out: fieldsets.FieldSet = {}
    if kind == "map":
        zeros_apply = zero_of is not None and isinstance(zero, dict)
        for key, child in value.items():
            before = zero_of(node, key) if zeros_apply else MISSING  # type: ignore[misc]
            if child.__class__ is not dict and child.__class__ is not list:
                # A scalar or null is a leaf whatever the schema says: no need to look it up.
                if before is MISSING or not same(before, child):
                    out["f:" + key] = {SELF: {}}
                continue
            sub, member = _walk(before, child, shapes.field_node(node, key), zero_of)
            if member:
                sub[SELF] = {}
            if sub:
                out["f:" + key] = sub
    else:
        items = shapes.items_node(node)
        for index, item in enumerate(value):
            element = elements.item(item, index, node, strict=False)
            if element in out:
                continue  # a repeated element: compare walks its first item only
            sub, _ = _walk(MISSING, item, items, zero_of)
            sub[SELF] = {}
            out[element] = sub
    return out, zero is MISSING
