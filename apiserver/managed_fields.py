"""managedFields for Update operations (create, update, non-apply patch): who set which fields.

A write gives its manager the fields it added or changed and takes them from every other manager
(Apply managers too, without conflicts); fields it removed leave all owners. The request may carry
managedFields itself (kubectl's client-side→server-side migration sends a JSON patch of them): a
non-empty list replaces the live one, `[]` or `[{}]` resets it; subresource writes always keep the
live list. The FieldsV1 set algebra and the ownership engine are `apiserver/ssa/`; Apply operations
are `ssa/apply.py`, so these hooks leave an Apply's managedFields alone. Called by `writing.py`.
"""

from __future__ import annotations

import time
from typing import Any

from apiserver.ssa import apply as ssa_apply
from apiserver.ssa import created, fieldsets, managers
from apiserver.ssa.managers import Identity, Ownership
from apiserver.ssa.updater import Owned

_CURRENT = Identity("current-operation", "Update", "", "")  # kube's placeholder for this write


def now_rfc3339() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def on_create(obj: dict[str, Any], manager: str, schema: dict[str, Any] | None, subresource: str = "",
              operation: str = "Update", *, track_status: bool = False) -> None:
    if operation == "Apply":
        return
    _record(None, obj, manager, schema, subresource, track_status)


def on_update(old: dict[str, Any], new: dict[str, Any], manager: str, schema: dict[str, Any] | None,
              subresource: str = "", operation: str = "Update", *, track_status: bool = False) -> None:
    """Give `manager` the fields this update changed, taking them from every other manager."""
    if operation == "Apply":
        return
    _record(old, new, manager, schema, subresource, track_status)


def _is_reset(entries: Any) -> bool:
    return isinstance(entries, list) and (not entries or entries == [{}])


def _base(old: dict[str, Any] | None, new: dict[str, Any], subresource: str) -> Ownership:
    """The ownership this write starts from: the request's own entries when it sends some."""
    live_entries = ((old or {}).get("metadata") or {}).get("managedFields")
    sent = (new.get("metadata") or {}).get("managedFields")
    if not subresource and old is not None and sent is not live_entries:
        if _is_reset(sent):
            return Ownership()
        if sent:
            try:
                decoded = managers.decode(sent)
                if decoded.managers:
                    return decoded
            except ValueError:
                pass
    elif old is None and sent and not _is_reset(sent):
        try:
            return managers.decode(sent)
        except ValueError:
            pass
    try:
        return managers.decode(live_entries)
    except ValueError:
        return Ownership()


def _without_managed_fields(obj: dict[str, Any] | None) -> dict[str, Any]:
    if obj is None:
        return {}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def _record(old: dict[str, Any] | None, new: dict[str, Any], manager: str, schema: dict[str, Any] | None,
            subresource: str, track_status: bool) -> None:
    ownership = _base(old, new, subresource)
    before, after = _without_managed_fields(old), _without_managed_fields(new)
    engine = ssa_apply.engine_for(schema, subresource, [before, after], track_status=track_status)
    api_version = new.get("apiVersion", "")
    if old is None and not subresource and not ownership.managers:
        _record_create(new, after, manager, engine, api_version)
        return
    owned = engine.update(before, after, ownership.managers, _CURRENT, api_version)
    taken = owned.pop(_CURRENT, None)
    fields = fieldsets.difference(taken.fields, ssa_apply.STRIPPED) if taken else {}
    if fields:
        writer = Identity.of(manager, "Update", api_version, subresource)
        if writer in owned:
            fields = fieldsets.union(fields, owned[writer].fields)
        owned[writer] = Owned(fields, api_version, False)
        ownership.times[writer] = now_rfc3339()
    ownership.managers = owned
    managers.cap_updates(ownership)
    encoded = managers.encode(ownership)
    meta = new.setdefault("metadata", {})
    if encoded:
        meta["managedFields"] = encoded
    else:
        meta.pop("managedFields", None)


def _record_create(new: dict[str, Any], after: dict[str, Any], manager: str, engine: Any, api_version: str) -> None:
    """A plain create: the writer owns all it sets and there is no one to take fields from, so
    its one entry is written straight from the object (`ssa/created.py`, the fast path)."""
    fields = created.fields_v1(after, engine.node, ssa_apply.STRIPPED, engine.ignored,
                               go_zeros=engine.zero_of is not None)
    meta = new.setdefault("metadata", {})
    if not fields:
        meta.pop("managedFields", None)
        return
    meta["managedFields"] = [{"manager": manager, "operation": "Update", "apiVersion": api_version,
                              "time": now_rfc3339(), "fieldsType": "FieldsV1", "fieldsV1": fields}]


def manager_name(query: dict[str, str], user_agent: str) -> str:
    """fieldManager from the query, else the user agent's program name (as upstream defaults it)."""
    name = query.get("fieldManager")
    if name:
        return name
    return (user_agent.split("/", 1)[0] or "unknown")[:128]
