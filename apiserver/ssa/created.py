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

from typing import Any, NamedTuple

from apiserver import schemas
from apiserver.ssa import elements, fieldsets, go_types, shapes
from apiserver.ssa.compare import same
from apiserver.ssa.shapes import MISSING

SELF = fieldsets.SELF
Wire = dict[str, Any]  # FieldsV1 as it is stored: a member without children is `{}`


def fields_v1(new: dict[str, Any], node: shapes.Node, stripped: fieldsets.FieldSet,
              ignored: fieldsets.FieldSet, *, go_zeros: bool = True) -> Wire:
    """The creator's FieldsV1 for object `new`: `stripped` paths removed (exact members), and
    `ignored` ones with all below them. `go_zeros`: compare against the Go zero values of the
    built-in types (`go_types.zeros_at`), as the updater's `zero_of` does."""
    out, _ = _walk({}, new, node, go_zeros)
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


class _Plan(NamedTuple):
    """What the walk needs of one schema node, looked up once per node (`schemas.remembered`)."""

    properties: dict[str, Any] | None  # a struct's fields
    values: shapes.Node  # a map's value type (additionalProperties)
    zeros: dict[str, Any]  # the Go zero values of the struct's fields
    atomic_map: bool
    atomic_list: bool
    items: shapes.Node


_PLANS: dict[int, tuple[shapes.Node, _Plan]] = {}
_NO_SCHEMA = _Plan(None, None, {}, False, True, None)


def _plan(node: shapes.Node) -> _Plan:
    if node is None:
        return _NO_SCHEMA
    return schemas.remembered(_PLANS, node, id(node), lambda: _plan_of(node))


def _plan_of(node: dict[str, Any]) -> _Plan:
    struct = shapes.resolve(node) or {}
    properties = struct.get("properties")
    values = struct.get("additionalProperties")
    return _Plan(properties if isinstance(properties, dict) else None,
                 values if isinstance(values, dict) else None, go_types.zeros_at(node),
                 shapes.map_is_atomic(node), shapes.list_semantics(node)[0] == "atomic", shapes.items_node(node))


def _is_leaf(plan: _Plan, zero: Any, value: dict[str, Any] | list[Any]) -> bool:
    """`shapes.classify` for a map or list `value` against the old side `zero`: a leaf when the
    types differ, when both sides are empty or absent, or when the schema makes it atomic."""
    if zero is MISSING or zero is None:
        if not value:
            return True
    elif type(zero) is not type(value) or not (value or zero):
        return True
    return plan.atomic_map if isinstance(value, dict) else plan.atomic_list


def _walk(zero: Any, value: dict[str, Any] | list[Any], node: shapes.Node, go_zeros: bool) -> tuple[Wire, bool]:
    """(the FieldsV1 below `value`, whether its own path is a member); `zero` is what the old
    object held here: MISSING, or the Go zero value of a field of a struct that was there."""
    plan = _plan(node)
    if _is_leaf(plan, zero, value):
        return {}, zero is MISSING or not same(zero, value)
    out: Wire = {}
    if isinstance(value, dict):
        zeros = plan.zeros if go_zeros and isinstance(zero, dict) else {}
        properties, values = plan.properties, plan.values
        for key in sorted(value):  # every element here is `f:`, so this is FieldsV1's order
            child = value[key]
            before = zeros.get(key, MISSING)
            if child.__class__ is not dict and child.__class__ is not list:
                # A scalar or null is a leaf whatever the schema says: no need to look it up.
                if before is MISSING or not same(before, child):
                    out["f:" + key] = {}
                continue
            child_node = properties.get(key, values) if properties is not None else values
            sub, member = _walk(before, child, child_node, go_zeros)
            if member:
                out["f:" + key] = {SELF: {}, **sub} if sub else {}
            elif sub:
                out["f:" + key] = sub
        return out, zero is MISSING
    walked: dict[str, Wire] = {}
    for index, item in enumerate(value):
        element = elements.item(item, index, node, strict=False)
        if element in walked:
            continue  # a repeated element: compare walks its first item only
        if item.__class__ is dict or item.__class__ is list:
            sub, _ = _walk(MISSING, item, plan.items, go_zeros)
        else:
            sub = {}
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
