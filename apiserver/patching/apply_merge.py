"""Server-side apply's merge of an applied configuration into the live object, by structure only.

This is what `application/apply-patch+yaml` does until field ownership (managedFields) exists:
maps merge key by key; lists follow the schema like structured-merge-diff does: `x-kubernetes-list-
type: map` lists merge item by item on `x-kubernetes-list-map-keys` (else the patch merge key),
`set` lists are unioned, `atomic` and untyped lists (and `x-kubernetes-map-type: atomic` maps) are
replaced whole. A merge-strategy list with no list type counts as map (with a merge key) or set,
as kube-openapi's conversion to structured-merge-diff schemas does.

KNOWN LIMIT, not a pretence: a field removed from the applied configuration is NOT removed from
the live object, because deciding that needs to know who owns the field (managedFields, a later
issue). Conflicts between managers are not detected either. An explicit null removes the field.
Called by the patch handler for apply patches; `live=None` (create) returns the applied object.
"""

from __future__ import annotations

from typing import Any

import msgspec

from apiserver.ssa import shapes

_LIST_TYPE = "x-kubernetes-list-type"
_MAP_KEYS = "x-kubernetes-list-map-keys"
_MERGE_KEY = "x-kubernetes-patch-merge-key"
_PATCH_STRATEGY = "x-kubernetes-patch-strategy"


def apply(live: dict[str, Any] | None, applied: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    """The live object with the applied configuration merged in: a new object that shares nothing
    with the inputs. `schema` is the kind's root definition (`schemas.for_kind`), or None."""
    result = _copy(applied)
    if live is None:
        return result
    return _merge_object(_copy(live), result, schema)


def merged(live: dict[str, Any], applied: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    """The same merge without the copies: neither input is changed, and the result shares every
    part the configuration does not touch with `live`, and what it adds with `applied`. For a
    caller that drops both inputs (a MutatingAdmissionPolicy's ApplyConfiguration), it saves
    copying the whole object twice."""
    return _merge_object(live, applied, schema)


def _copy(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


def _field_node(struct: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    """The schema of `key` inside an object's schema: a property, or a map's element type."""
    if struct is None:
        return None
    properties = struct.get("properties")
    if isinstance(properties, dict):
        return properties.get(key)
    values = struct.get("additionalProperties")
    return values if isinstance(values, dict) else None


def _merge_object(live: dict[str, Any], applied: dict[str, Any], node: dict[str, Any] | None) -> dict[str, Any]:
    """A new map: `live` with `applied` merged in (copied level by level; `live` stays as it was)."""
    struct = shapes.resolve(node)
    live = dict(live)
    for key, value in applied.items():
        if value is None:
            live.pop(key, None)
            continue
        current = live.get(key)
        field = _field_node(struct, key)
        if isinstance(value, dict) and isinstance(current, dict) and not shapes.map_is_atomic(field):
            live[key] = _merge_object(current, value, field)
        elif isinstance(value, list) and isinstance(current, list):
            live[key] = _merge_list(current, value, field)
        else:
            live[key] = value
    return live


def _list_semantics(node: dict[str, Any] | None) -> tuple[str, list[str]]:
    """('map', keys) | ('set', []) | ('atomic', []) for a list field's schema node."""
    if node is None:
        return "atomic", []
    list_type = node.get(_LIST_TYPE)
    merge_key = node.get(_MERGE_KEY)
    if list_type is None and "merge" in (node.get(_PATCH_STRATEGY) or "").split(","):
        list_type = "map" if merge_key else "set"
    if list_type == "map":
        keys = node.get(_MAP_KEYS) or ([merge_key] if merge_key else [])
        return ("map", list(keys)) if keys else ("atomic", [])
    if list_type == "set":
        return "set", []
    return "atomic", []


def _merge_list(live: list[Any], applied: list[Any], node: dict[str, Any] | None) -> list[Any]:
    semantics, keys = _list_semantics(node)
    if semantics == "set":
        # Live order first, then the applied values not yet present (structured-merge-diff order).
        seen = {_identity(v) for v in live}
        merged = list(live)
        for value in applied:
            if _identity(value) not in seen:
                seen.add(_identity(value))
                merged.append(value)
        return merged
    if semantics == "map" and all(isinstance(v, dict) for v in live + applied):
        items = node.get("items") if node else None
        merged = list(live)
        for value in applied:
            at = _find_item(merged, value, keys)
            if at is None:
                merged.append(value)
            else:
                merged[at] = _merge_object(merged[at], value, items)
        return merged
    return applied


def _find_item(items: list[dict[str, Any]], wanted: dict[str, Any], keys: list[str]) -> int | None:
    """The live item with the same map keys. Key fields the applied item leaves out are not
    compared (these schemas carry no defaults, e.g. a container port's `protocol: TCP`), but
    the match must then be unique."""
    present = [k for k in keys if k in wanted]
    if not present:
        return None
    matches = [i for i, item in enumerate(items)
               if all(k in item and _identity(item[k]) == _identity(wanted[k]) for k in present)]
    if len(matches) > 1:  # prefer the item that leaves out the same key fields
        matches = [i for i in matches if all((k in items[i]) == (k in wanted) for k in keys)]
    return matches[0] if len(matches) == 1 else None


def _identity(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return ("json", msgspec.json.encode(value, order="sorted"))
    return (type(value).__name__, value)
