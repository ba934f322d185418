"""Schema defaults of a custom resource, applied on write and again when an object is read.

Upstream's structural defaulting: an absent property with a `default` gets a copy of it (a
`null` too, unless the property is nullable), then defaulting goes on inside the value, through
`properties`, `items` and `additionalProperties`. Called by `strategy.py` before validation and by
`output.py` on every read, so objects stored before a default was added come back defaulted.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

Node = Mapping[str, Any]


def apply(value: Any, node: Node) -> bool:
    """Default `value` in place under `node`; True when anything changed."""
    changed = False
    if isinstance(value, dict):
        props = node.get("properties") or {}
        for name, child in props.items():
            if not isinstance(child, Mapping):
                continue
            if "default" in child and (name not in value or (value[name] is None and not child.get("nullable"))):
                value[name] = copy.deepcopy(child["default"])
                changed = True
            if name in value:
                changed = apply(value[name], child) or changed
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):
            for name, item in value.items():
                if name not in props:
                    changed = apply(item, extra) or changed
    elif isinstance(value, list):
        items = node.get("items")
        if isinstance(items, Mapping):
            for item in value:
                changed = apply(item, items) or changed
    return changed


def has_defaults(node: Any) -> bool:
    """Whether any node of a schema declares a default (reads need no work otherwise)."""
    if not isinstance(node, Mapping):
        return False
    if "default" in node:
        return True
    children = list((node.get("properties") or {}).values())
    children += [node.get("items"), node.get("additionalProperties")]
    return any(has_defaults(child) for child in children)
