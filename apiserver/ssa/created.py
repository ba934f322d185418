"""The FieldsV1 a create gives its manager when nobody owns anything yet: the fast path of `compare`.

A create by an Update operation owns what `compare(<empty object>, new)` calls added or modified
(the object's Go zero fields — `spec: {}`, a null slice — are no change), less the fields no
manager owns (`apply.STRIPPED`) and those of another subresource (`status`). That general walk
keeps a path list and three result sets for both sides of every node, and the sets are then
turned into sorted FieldsV1; here one walk writes the sorted FieldsV1 directly, which is most of a
create's managedFields cost. `managed_fields.on_create` uses it for a plain create and the updater
for everything else; tests/apiserver/ssa/test_created.py checks the two agree on every kind.
"""

from __future__ import annotations

from typing import Any

from apiserver.ssa import elements, fieldsets, shapes
from apiserver.ssa.compare import ZeroOf, same
from apiserver.ssa.shapes import MISSING

SELF = fieldsets.SELF
Wire = dict[str, Any]  # FieldsV1 as it is stored: a member without children is `{}`


def fields_v1(new: dict[str, Any], node: shapes.Node, zero_of: ZeroOf | None,
              stripped: fieldsets.FieldSet, ignored: fieldsets.FieldSet) -> Wire:
    """The creator's FieldsV1 for object `new`: `stripped` paths removed (exact members), and
    `ignored` ones with all below them."""
    out, _ = _walk({}, new, node, zero_of)
    for key, below in ignored.items():
        if SELF in below:
            out.pop(key, None)
    return _without(out, stripped)


def _without(wire: Wire, stripped: fieldsets.FieldSet) -> Wire:
    """`fieldsets.difference` on the wire form (the few stripped paths are near the top)."""
    for key, below in stripped.items():
        if key == SELF or key not in wire:
            continue
        current = wire[key]
        member = (not current or SELF in current) and SELF not in below
        children = _without({k: v for k, v in current.items() if k != SELF}, below)
        if children:
            wire[key] = {SELF: {}, **children} if member else children
        elif member:
            wire[key] = {}
        else:
            del wire[key]
    return wire


def _walk(zero: Any, value: Any, node: shapes.Node, zero_of: ZeroOf | None) -> tuple[Wire, bool]:
    """(the FieldsV1 below `value`, whether its own path is a member); `zero` is what the old
    object held here: MISSING, or the Go zero value of a field of a struct that was there."""
    kind = shapes.classify(node, zero, value)
    if kind == "leaf":
        return {}, zero is MISSING or not same(zero, value)
    out: Wire = {}
    if kind == "map":
        zeros_apply = zero_of is not None and isinstance(zero, dict)
        for key in sorted(value):  # every element here is `f:`, so this is FieldsV1's order
            child = value[key]
            before = zero_of(node, key) if zeros_apply else MISSING  # type: ignore[misc]
            if child.__class__ is not dict and child.__class__ is not list:
                # A scalar or null is a leaf whatever the schema says: no need to look it up.
                if before is MISSING or not same(before, child):
                    out["f:" + key] = {}
                continue
            sub, member = _walk(before, child, shapes.field_node(node, key), zero_of)
            if member:
                out["f:" + key] = {SELF: {}, **sub} if sub else {}
            elif sub:
                out["f:" + key] = sub
        return out, zero is MISSING
    items = shapes.items_node(node)
    walked: dict[str, Wire] = {}
    for index, item in enumerate(value):
        element = elements.item(item, index, node, strict=False)
        if element in walked:
            continue  # a repeated element: compare walks its first item only
        sub, _ = _walk(MISSING, item, items, zero_of)
        walked[element] = {SELF: {}, **sub} if sub else {}
    for element in _ordered(list(walked)):
        out[element] = walked[element]
    return out, zero is MISSING


def _ordered(keys: list[str]) -> list[str]:
    """List elements in FieldsV1's order; indexes come out of the walk in order already."""
    if len(keys) > 1:
        kinds = {k[:2] for k in keys}
        if len(kinds) > 1:
            keys.sort(key=elements.sort_key)
        elif kinds != {"i:"}:
            keys.sort()
    return keys
