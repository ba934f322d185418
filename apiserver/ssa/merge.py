"""Merging an applied configuration into the live object (structured-merge-diff's Merge).

Leaves take the applied value; maps and structs merge key by key (live keys first, in live order);
sets and keyed lists merge item by item, keeping the live-only items where they were and the applied
items in applied order. Atomic lists and maps are replaced whole. Nothing is removed here: that is
`remove` driven by ownership in the updater, which is the only caller.
"""

from __future__ import annotations

from typing import Any

from apiserver.ssa import elements, shapes
from apiserver.ssa.shapes import MISSING


def merge(live: Any, applied: Any, node: shapes.Node) -> Any:
    if applied is MISSING:
        return live
    if live is MISSING:
        return applied
    kind = shapes.classify(node, live, applied)
    if kind == "leaf":
        return applied
    if kind == "map":
        left = live if isinstance(live, dict) else {}
        right = applied if isinstance(applied, dict) else {}
        out = {key: merge(value, right.get(key, MISSING), shapes.field_node(node, key)) for key, value in left.items()}
        for key, value in right.items():
            if key not in left:
                out[key] = value
        return out
    return _merge_list(live if isinstance(live, list) else [], applied if isinstance(applied, list) else [], node)


def _index(items: list[Any], node: shapes.Node, *, strict: bool) -> tuple[list[str], dict[str, Any]]:
    order: list[str] = []
    found: dict[str, Any] = {}
    for index, item in enumerate(items):
        element = elements.item(item, index, node, strict=strict)
        if element in found:
            if strict:
                raise elements.ElementError(f"duplicate entries for key {elements.render(element)}")
            continue
        found[element] = item
        order.append(element)
    return order, found


def _merge_list(live: list[Any], applied: list[Any], node: shapes.Node) -> list[Any]:
    items = shapes.items_node(node)
    left, left_items = _index(live, node, strict=False)
    right, right_items = _index(applied, node, strict=True)
    shared = [e for e in right if e in left_items]
    next_shared = 0
    out: list[Any] = []
    done: set[str] = set()

    def take(element: str) -> None:
        nonlocal next_shared
        out.append(merge(left_items.get(element, MISSING), right_items.get(element, MISSING), items))
        done.add(element)
        if next_shared < len(shared) and shared[next_shared] == element:
            next_shared += 1

    li = ri = 0
    while li < len(left) or ri < len(right):
        if li < len(left) and ri < len(right):
            if left[li] == right[ri]:
                take(left[li])
                li += 1
                ri += 1
                continue
            if left[li] in right_items and next_shared < len(shared) and shared[next_shared] != left[li]:
                li += 1  # a shared item whose turn (in applied order) has not come yet
                continue
        if li < len(left):
            if left[li] not in right_items:
                take(left[li])
                li += 1
                continue
            if left[li] in done:
                li += 1
                continue
        if ri < len(right):
            take(right[ri])
            ri += 1
    return out
