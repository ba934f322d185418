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


def prune(obj: Any, schema: dict[str, Any] | None) -> list[str]:
    """Remove fields the schema does not know from `obj` in place; return their paths."""
    if schema is None:
        return []
    unknown: list[str] = []
    _prune(obj, schema, "", unknown)
    return unknown


def _is_open(node: dict[str, Any]) -> bool:
    """A node that accepts any content: RawExtension, JSON, preserve-unknown-fields, untyped maps."""
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return True
    return "properties" not in node and "additionalProperties" not in node and "items" not in node


def _prune(value: Any, node: dict[str, Any], path: str, unknown: list[str]) -> None:
    node = schemas.resolve(node)
    if isinstance(value, dict):
        props = node.get("properties")
        if props is not None:
            for key in list(value):
                child = props.get(key)
                where = f"{path}.{key}" if path else key
                if child is None:
                    if node.get("x-kubernetes-preserve-unknown-fields"):
                        continue
                    unknown.append(where)
                    del value[key]
                else:
                    _prune(value[key], child, where, unknown)
            return
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and not _is_open(schemas.resolve(extra)):
            for key, item in value.items():
                _prune(item, extra, f"{path}[{key}]", unknown)
    elif isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                _prune(item, items, f"{path}[{index}]", unknown)


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
