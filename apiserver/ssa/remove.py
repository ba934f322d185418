"""Removing the paths of a field set from an object (structured-merge-diff's RemoveItems).

A member path goes with everything below it; a path with only children below it is walked into.
Atomic values cannot be partly removed and stay as they are. A map or list that loses all its
entries this way is dropped from its parent (as Go's typed round trip does). The updater's
pruning is the caller.
"""

from __future__ import annotations

from typing import Any

from apiserver.ssa import elements, fieldsets, shapes

_EMPTIED = object()


def remove_items(value: Any, fields: fieldsets.FieldSet, node: shapes.Node) -> Any:
    if not fields:
        return value
    result = _remove(value, fields, node)
    if result is _EMPTIED:
        return {} if isinstance(value, dict) else []
    return result


def _remove(value: Any, fields: fieldsets.FieldSet, node: shapes.Node) -> Any:
    if isinstance(value, dict) and value and not shapes.map_is_atomic(node):
        out = {}
        for key, child in value.items():
            element = elements.field(key)
            if fieldsets.member(fields, element):
                continue
            below = fieldsets.under(fields, element)
            if below:
                child = _remove(child, below, shapes.field_node(node, key))
                if child is _EMPTIED:
                    continue
            out[key] = child
        return out if out else _EMPTIED
    if isinstance(value, list) and value and shapes.list_semantics(node)[0] != "atomic":
        items = shapes.items_node(node)
        kept = []
        for index, item in enumerate(value):
            element = elements.item(item, index, node, strict=False)
            if fieldsets.member(fields, element):
                continue
            below = fieldsets.under(fields, element)
            if below:
                item = _remove(item, below, items)
                if item is _EMPTIED:
                    continue
            kept.append(item)
        return kept if kept else _EMPTIED
    return value
