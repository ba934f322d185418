"""Unknown fields: found, reported and dropped, as kube-apiserver's decoders do for built-in kinds.

A built-in object can never store a field its Go type lacks, so unknown fields are always
dropped; `fieldValidation` only decides what the client hears: Strict → 400 BadRequest, Warn (the
server default) → a `Warning` header per field, Ignore → nothing. Called by the write handlers
with the kind's schema from `apiserver/schemas.py`.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors, schemas

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"


def directive(query: dict[str, str]) -> str:
    value = query.get("fieldValidation", "") or WARN
    if value not in (STRICT, WARN, IGNORE):
        raise errors.bad_request(
            f'fieldValidation parameter unsupported value: "{value}"; supported values: "Ignore", "Strict", "Warn"'
        )
    return value


def prune(obj: Any, schema: dict[str, Any] | None, stored: Any = None) -> list[str]:
    """Remove fields the schema does not know from `obj` in place; return their paths.

    `stored`: for an update of a built-in kind, the object it replaces. That one was pruned when it
    was written and its schema never changes, so a subtree of `obj` equal to the one at the same
    place in `stored` has no unknown field and is not walked (equal dicts have equal keys at every
    depth). A status write or a label patch then walks only the part it changed."""
    if schema is None:
        return []
    unknown: list[str] = []
    _prune(obj, schema, [], unknown, stored)
    return unknown


def _is_open(node: dict[str, Any]) -> bool:
    """A node that accepts any content: RawExtension, JSON, preserve-unknown-fields, untyped maps."""
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return True
    return "properties" not in node and "additionalProperties" not in node and "items" not in node


def _where(path: list[str], last: str) -> str:
    """`spec.containers[0].name` from the pieces walked (`.spec`, `.containers`, `[0]`) and the last."""
    return ("".join(path) + last).lstrip(".")


_Plan = tuple[dict[str, Any] | None, bool, dict[str, Any] | None, dict[str, Any] | None]
_PLANS: dict[int, tuple[dict[str, Any], _Plan]] = {}  # schema node identity → (node, its plan)


def _plan(node: dict[str, Any]) -> _Plan:
    """(properties, preserves unknown fields, the map-value node to walk, the items node) of a
    schema node, worked out once per node (`schemas.remembered`)."""
    return schemas.remembered(_PLANS, node, id(node), lambda: _plan_of(node))


def _plan_of(node: dict[str, Any]) -> _Plan:
    resolved = schemas.resolve(node)
    extra = resolved.get("additionalProperties")
    if not isinstance(extra, dict) or _is_open(schemas.resolve(extra)):
        extra = None
    items = resolved.get("items")
    return (resolved.get("properties"), bool(resolved.get("x-kubernetes-preserve-unknown-fields")), extra,
            items if isinstance(items, dict) else None)


def _prune(value: Any, node: dict[str, Any], path: list[str], unknown: list[str], stored: Any) -> None:
    # Every write walks its whole object here (but what equals the stored object, see `prune`):
    # paths are built only for an unknown field, and scalars are never descended into.
    props, preserve, extra, items = _plan(node)
    if isinstance(value, dict):
        before = stored if isinstance(stored, dict) else _NOTHING
        if props is not None:
            for key in list(value):
                child = props.get(key)
                if child is None:
                    if not preserve:
                        unknown.append(_where(path, "." + key))
                        del value[key]
                    continue
                sub = value[key]
                if isinstance(sub, (dict, list)):
                    was = before.get(key)
                    if was is not None and sub == was:
                        continue
                    path.append("." + key)
                    _prune(sub, child, path, unknown, was)
                    path.pop()
            return
        if extra is not None:
            for key, item in value.items():
                if isinstance(item, (dict, list)):
                    was = before.get(key)
                    if was is not None and item == was:
                        continue
                    path.append(f"[{key}]")
                    _prune(item, extra, path, unknown, was)
                    path.pop()
    elif isinstance(value, list) and items is not None:
        before_items = stored if isinstance(stored, list) else []
        for index, item in enumerate(value):
            if isinstance(item, (dict, list)):
                was = before_items[index] if index < len(before_items) else None
                if was is not None and item == was:
                    continue
                path.append(f"[{index}]")
                _prune(item, items, path, unknown, was)
                path.pop()


_NOTHING: dict[str, Any] = {}


def report(unknown: list[str], how: str, kind: str, version: str) -> list[str]:
    """Raise for Strict; otherwise the Warning texts to send (none for Ignore)."""
    if not unknown or how == IGNORE:
        return []
    texts = [f'unknown field "{path}"' for path in unknown]
    if how == STRICT:
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: {", ".join(texts)}'
        )
    return texts
