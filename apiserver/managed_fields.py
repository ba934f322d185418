"""managedFields for Update operations: which manager last set which fields, in FieldsV1.

A field set is a tree of `f:<field>` / `k:<json key>` / `v:<json value>` / `i:<index>` nodes with
`".": {}` marking a node that is itself owned (FieldsV1, as the structured-merge-diff library
writes it). List items are keyed by the schema's list-map keys, sets by value. Called by the
create, update and patch handlers; server-side apply's ownership and conflicts build on this module.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from apiserver import schemas

# Metadata the server owns; never attributed to a manager (as upstream strips them).
_SERVER_OWNED_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "generation",
                      "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink")
_TOP_SKIP = ("apiVersion", "kind", "status")


def now_rfc3339() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _child(node: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    if node is None:
        return None
    node = schemas.resolve(node)
    props = node.get("properties")
    if props is not None:
        return props.get(key)
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _item_key(item: Any, index: int, node: dict[str, Any] | None) -> str:
    node = schemas.resolve(node) if node else {}
    keys = node.get("x-kubernetes-list-map-keys")
    if not keys and node.get("x-kubernetes-patch-merge-key"):
        keys = [node["x-kubernetes-patch-merge-key"]]
    if keys and isinstance(item, dict) and all(k in item for k in keys):
        return "k:" + msgspec.json.encode({k: item[k] for k in keys}).decode()
    if node.get("x-kubernetes-list-type") == "set" and not isinstance(item, (dict, list)):
        return "v:" + msgspec.json.encode(item).decode()
    return f"i:{index}"


def _marked(sub: dict[str, Any], node: dict[str, Any] | None) -> dict[str, Any]:
    """Add the "." self-marker, which FieldsV1 puts on maps and lists but not on structs."""
    if not sub:
        return {}
    if node is not None and "properties" in schemas.resolve(node):
        return sub
    return {".": {}, **sub}


def _fields(value: Any, node: dict[str, Any] | None) -> dict[str, Any]:
    """The set of every field under `value` (not including `value` itself)."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for key, child in value.items():
            child_node = _child(node, key)
            out[f"f:{key}"] = _marked(_fields(child, child_node), child_node)
    elif isinstance(value, list):
        items = schemas.resolve(node).get("items") if node else None
        list_type = schemas.resolve(node).get("x-kubernetes-list-type") if node else None
        if list_type == "atomic" or (node and not schemas.resolve(node).get("x-kubernetes-list-map-keys")
                                     and not schemas.resolve(node).get("x-kubernetes-patch-merge-key")
                                     and list_type != "set"):
            return out  # atomic lists are owned whole by their parent field
        for index, item in enumerate(value):
            sub = _fields(item, items)
            out[_item_key(item, index, node)] = {".": {}, **sub} if sub else {}
    return out


def _changed(old: Any, new: Any, node: dict[str, Any] | None) -> dict[str, Any]:
    """Fields of `new` whose value differs from `old` (added or modified)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: dict[str, Any] = {}
        for key, child in new.items():
            if key in old and old[key] == child:
                continue
            child_node = _child(node, key)
            if key in old:
                sub = _changed(old[key], child, child_node)
            else:
                sub = _fields(child, child_node)
            out[f"f:{key}"] = _marked(sub, child_node)
        return out
    return _fields(new, node) if old != new else {}


def _object_fields(obj: dict[str, Any], schema: dict[str, Any] | None, *, status: bool) -> dict[str, Any]:
    trimmed = _trim(obj, status=status)
    return _fields(trimmed, schema)


def _trim(obj: dict[str, Any], *, status: bool) -> dict[str, Any]:
    if status:
        return {"status": obj["status"]} if "status" in obj else {}
    out = {k: v for k, v in obj.items() if k not in _TOP_SKIP}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_OWNED_META}
    if meta:
        out["metadata"] = meta
    else:
        out.pop("metadata", None)
    return out


def _remove(owned: dict[str, Any], taken: dict[str, Any]) -> dict[str, Any]:
    """`owned` minus every leaf in `taken`."""
    out: dict[str, Any] = {}
    for key, sub in owned.items():
        if key == ".":
            continue
        if key in taken:
            if not taken[key] or set(taken[key]) <= {"."}:
                if sub and set(sub) - {"."}:
                    rest = _remove(sub, {})
                    if rest:
                        out[key] = rest
                continue
            rest = _remove(sub, taken[key])
            if rest:
                out[key] = rest
        else:
            out[key] = sub
    if "." in owned and out:
        out["."] = {}
    return out


def _union(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, sub in b.items():
        out[key] = _union(out[key], sub) if key in out else sub
    return out


def _entry(manager: str, api_version: str, fields: dict[str, Any], subresource: str,
           operation: str = "Update") -> dict[str, Any]:
    entry = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": now_rfc3339(),
             "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    return entry


def on_create(obj: dict[str, Any], manager: str, schema: dict[str, Any] | None, subresource: str = "",
              operation: str = "Update") -> None:
    fields = _object_fields(obj, schema, status=False)
    meta = obj.setdefault("metadata", {})
    meta["managedFields"] = [_entry(manager, obj.get("apiVersion", ""), fields, subresource, operation)] if fields else []
    if not meta["managedFields"]:
        del meta["managedFields"]


def on_update(old: dict[str, Any], new: dict[str, Any], manager: str, schema: dict[str, Any] | None,
              subresource: str = "", operation: str = "Update") -> None:
    """Give `manager` the fields this update changed, taking them from every other Update manager."""
    status = subresource == "status"
    changed = _changed(_trim(old, status=status), _trim(new, status=status), schema)
    managed = list((old.get("metadata") or {}).get("managedFields") or [])
    result: list[dict[str, Any]] = []
    mine: dict[str, Any] | None = None
    for entry in managed:
        same = entry.get("manager") == manager and entry.get("operation") == operation \
            and entry.get("subresource", "") == subresource
        if same:
            mine = entry
            continue
        fields = _remove(entry.get("fieldsV1") or {}, changed) if changed else entry.get("fieldsV1") or {}
        if fields:
            result.append({**entry, "fieldsV1": fields})
    if changed or mine is not None:
        fields = _union(mine.get("fieldsV1") or {}, changed) if mine else changed
        if fields:
            entry = _entry(manager, new.get("apiVersion", ""), fields, subresource, operation)
            if mine is not None and not changed:
                entry["time"] = mine.get("time", entry["time"])
            result.append(entry)
    meta = new.setdefault("metadata", {})
    if result:
        meta["managedFields"] = result
    else:
        meta.pop("managedFields", None)


def manager_name(query: dict[str, str], user_agent: str) -> str:
    """fieldManager from the query, else the user agent's program name (as upstream defaults it)."""
    name = query.get("fieldManager")
    if name:
        return name
    return (user_agent.split("/", 1)[0] or "unknown")[:128]
