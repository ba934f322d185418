"""What changed between two versions of an object, as three field sets (added, modified, removed).

Leaves (scalars, atomic lists and maps, empty containers) are added, removed or modified; a map,
struct or granular list is itself added or removed when it appears or disappears, and its contents
are walked either way (structured-merge-diff's Compare). `zero_of` supplies what a Go-typed object
holds for a field its JSON leaves out (`spec: {}`, see `go_types`), so that is no addition. Called by the
updater for ownership and conflicts, and by `last_applied` for kubectl's migration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import msgspec

from apiserver.ssa import elements, fieldsets, shapes
from apiserver.ssa.shapes import MISSING

ZeroOf = Callable[[shapes.Node, str], Any]


@dataclass
class Comparison:
    added: fieldsets.FieldSet = field(default_factory=dict)
    modified: fieldsets.FieldSet = field(default_factory=dict)
    removed: fieldsets.FieldSet = field(default_factory=dict)

    def excluding(self, ignored: fieldsets.FieldSet) -> Comparison:
        return Comparison(fieldsets.recursive_difference(self.added, ignored),
                          fieldsets.recursive_difference(self.modified, ignored),
                          fieldsets.recursive_difference(self.removed, ignored))

    def changed(self) -> fieldsets.FieldSet:
        return fieldsets.union(self.modified, self.added)


def compare(old: Any, new: Any, node: shapes.Node, zero_of: ZeroOf | None = None) -> Comparison:
    result = Comparison()
    _walk(old, new, node, [], result, zero_of)
    return result


def same(a: Any, b: Any) -> bool:
    """JSON equality: maps unordered, numbers by value, booleans never equal to numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _unchanged(lhs: Any, rhs: Any) -> bool:
    """An equal map or list holds no change at any depth, so the walk may skip it. Python's `==`
    (C speed) rules most subtrees in or out; it takes True for 1 and 1.0 and the encodings then
    tell, which `same` would also refuse to call equal for `true` against `1`. Encodings that
    differ (key order, 1 against 1.0) only mean the walk looks, and finds what `same` finds."""
    if type(lhs) is not type(rhs) or type(lhs) not in (dict, list):
        return False
    if lhs is rhs:
        return True
    if lhs != rhs:
        return False
    try:
        return msgspec.json.encode(lhs) == msgspec.json.encode(rhs)
    except (msgspec.EncodeError, TypeError, OverflowError):
        return False


def _walk(lhs: Any, rhs: Any, node: shapes.Node, path: list[str], result: Comparison,
          zero_of: ZeroOf | None) -> None:
    # A status patch leaves spec alone, a label patch both spec and status: most of a write's
    # object is unchanged, and walking it node by node was most of the field manager's cost.
    if _unchanged(lhs, rhs):
        return
    kind = shapes.classify(node, lhs, rhs)
    if kind == "leaf":
        if lhs is MISSING:
            fieldsets.insert(result.added, path)
        elif rhs is MISSING:
            fieldsets.insert(result.removed, path)
        elif not same(lhs, rhs):
            fieldsets.insert(result.modified, path)
        return
    if kind == "map":
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        for key in list(left) + [k for k in right if k not in left]:
            before, after = left.get(key, MISSING), right.get(key, MISSING)
            if zero_of is not None and (before is MISSING or after is MISSING):
                # Only a struct that is there holds its Go zero fields; a new list item has none.
                zero = zero_of(node, key)
                if zero is not MISSING:
                    before = zero if before is MISSING and isinstance(lhs, dict) else before
                    after = zero if after is MISSING and isinstance(rhs, dict) else after
            path.append(elements.field(key))
            _walk(before, after, shapes.field_node(node, key), path, result, zero_of)
            path.pop()
    else:
        items = shapes.items_node(node)
        left_items = _index(lhs, node)
        right_items = _index(rhs, node)
        for element in list(left_items) + [e for e in right_items if e not in left_items]:
            path.append(element)
            _walk(left_items.get(element, MISSING), right_items.get(element, MISSING), items, path, result,
                  zero_of)
            path.pop()
    if path:
        if lhs is MISSING:
            fieldsets.insert(result.added, path)
        elif rhs is MISSING:
            fieldsets.insert(result.removed, path)


def _index(value: Any, node: shapes.Node) -> dict[str, Any]:
    """List items by element; a repeated element keeps its first item."""
    out: dict[str, Any] = {}
    if isinstance(value, list):
        for index, item in enumerate(value):
            out.setdefault(elements.item(item, index, node, strict=False), item)
    return out
