"""The field set an applied configuration claims (structured-merge-diff's ToFieldSet).

Leaves are owned: scalars, nulls, atomic lists and maps. Every item of a granular list is owned
itself, and so is every map entry that is not a struct's declared field (labels, data…) or that
is null or an empty object. A struct's own field is owned only through what it contains. The
updater calls this for the applier's new set and for the pruning sets.
"""

from __future__ import annotations

from typing import Any

from apiserver.ssa import elements, fieldsets, shapes


def field_set(value: Any, node: shapes.Node, *, strict: bool = False) -> fieldsets.FieldSet:
    """Every path under `value` (the root itself is not a path). `strict` rejects list items that
    cannot be named (an applied configuration); otherwise they are named by index."""
    children, _ = _walk(value, node, strict)
    return children


def _walk(value: Any, node: shapes.Node, strict: bool) -> tuple[fieldsets.FieldSet, bool]:
    """(the set below `value`, whether `value`'s own path is owned)."""
    if isinstance(value, dict):
        if shapes.map_is_atomic(node):
            return {}, True
        out: fieldsets.FieldSet = {}
        for key, child in value.items():
            try:
                sub, owned = _walk(child, shapes.field_node(node, key), strict)
            except elements.ElementError as exc:
                raise exc.within(elements.field(key)) from None
            if child is None or child == {} or not shapes.is_named_field(node, key):
                owned = True
            if owned:
                sub = {fieldsets.SELF: {}, **sub}
            if sub:
                out[elements.field(key)] = sub
        return out, False
    if isinstance(value, list):
        if shapes.list_semantics(node)[0] == "atomic":
            return {}, True
        out = {}
        items = shapes.items_node(node)
        for index, item in enumerate(value):
            element = elements.item(item, index, node, strict=strict)
            if strict and element in out:
                raise elements.ElementError(f"duplicate entries for key {elements.render(element)}")
            try:
                sub, _ = _walk(item, items, strict)
            except elements.ElementError as exc:
                raise exc.within(element) from None
            out[element] = {fieldsets.SELF: {}, **sub}
        return out, False
    return {}, True
