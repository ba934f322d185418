"""Server-side apply of one configuration by one manager: the merged object and its managedFields.

The steps of kube's field manager for an Apply, outermost first: a live object without any
managedFields first gets them as `before-first-apply` (an Update of everything it holds); the
updater merges, prunes and takes ownership (`updater.Engine.apply`), raising conflicts unless
forced; for the `kubectl` manager, conflicts the last-applied annotation accounts for are forgiven
and the annotation is kept current; server-owned metadata is never owned; Update entries are
capped. Called by the apply branch of `handlers/patch.py`, which then runs the usual update steps.
"""

from __future__ import annotations

from typing import Any

import msgspec

from apiserver import errors
from apiserver.ssa import elements, fieldsets, go_types, last_applied, managers, shapes
from apiserver.ssa.conflicts import Conflict, ConflictError
from apiserver.ssa.managers import Identity, Ownership
from apiserver.ssa.updater import Conflicts, Engine, Owned

__all__ = ["apply", "ConflictError", "Conflict", "engine_for", "STRIPPED"]

BEFORE_FIRST_APPLY = "before-first-apply"
_SELF: dict[str, Any] = {fieldsets.SELF: {}}
# What no manager ever owns: identity and server-kept metadata (kube's stripMetaManager, plus the
# deletion marks, which only the server sets).
STRIPPED: fieldsets.FieldSet = {
    "f:apiVersion": _SELF, "f:kind": _SELF,
    "f:metadata": {fieldsets.SELF: {}, **{f"f:{name}": _SELF for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation",
        "managedFields", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds")}},
}


def engine_for(schema: shapes.Node, subresource: str, objects: list[dict[str, Any]], *,
               track_status: bool = False) -> Engine:
    """The updater for one kind. On the main resource `status` belongs to the status subresource
    (unless the kind has none: `track_status`); on `status` only status and metadata count."""
    if subresource == "status":
        keys = {k for obj in objects for k in obj} - {"status", "metadata", "apiVersion", "kind"}
        ignored = {f"f:{k}": _SELF for k in keys}
    else:
        ignored = {} if track_status else {"f:status": _SELF}
    return Engine(shapes.for_object(schema), ignored, go_types.zero_of)


def copy(value: Any) -> Any:  # a deep copy of JSON data
    return msgspec.json.decode(msgspec.json.encode(value))


def apply(live: dict[str, Any] | None, config: dict[str, Any], manager: str, *, force: bool,
          schema: dict[str, Any] | None, api_version: str, subresource: str = "",
          track_status: bool = False) -> dict[str, Any]:
    """`live` (None to create) with `config` applied by `manager`; the result carries the new
    metadata.managedFields. Raises ConflictError (409) and APIError for unusable configurations."""
    if (config.get("metadata") or {}).get("managedFields"):
        raise errors.bad_request("metadata.managedFields must be nil")
    current: dict[str, Any] = copy(live) if live is not None else {}
    live_meta_keys = list(current.get("metadata") or {})
    entries = (current.get("metadata") or {}).pop("managedFields", None)
    try:
        ownership = managers.decode(entries)
    except ValueError as exc:
        raise errors.internal(f"failed to decode managed fields: {exc}") from None
    engine = engine_for(schema, subresource, [current, config], track_status=track_status)
    if live is not None and not ownership.managers:
        _record_before_first_apply(engine, current, ownership, api_version, subresource)
    applier = Identity.of(manager, "Apply", api_version, subresource)
    try:
        merged, owned, changed = _apply_with_last_applied(engine, current, config, ownership, applier,
                                                          api_version, force)
    except elements.ElementError as exc:
        raise errors.APIError(500, "", f"failed to create typed patch object ({_described(config)}): {exc}") from None
    mine = fieldsets.difference(owned[applier].fields, STRIPPED)
    if mine:
        owned[applier] = Owned(mine, api_version, True)
    else:
        owned.pop(applier, None)
    ownership.managers = owned
    if changed:
        ownership.times[applier] = managers.now()
    managers.cap_updates(ownership)
    result: dict[str, Any] = _without_applied_nulls(merged, config)
    if manager == last_applied.KUBECTL:
        last_applied.refresh(result, config)
    encoded = managers.encode(ownership)
    meta = result.setdefault("metadata", {})
    if encoded:
        meta["managedFields"] = encoded
        result["metadata"] = _in_live_order(meta, live_meta_keys)
    else:
        meta.pop("managedFields", None)
    return result


def _in_live_order(meta: dict[str, Any], live_keys: list[str]) -> dict[str, Any]:
    """Put managedFields back where the live object had it, so an apply that changes nothing
    encodes to the stored bytes and the store writes nothing (no new resourceVersion)."""
    if "managedFields" not in live_keys:
        return meta
    ordered = {k: meta[k] for k in live_keys if k in meta}
    ordered.update((k, v) for k, v in meta.items() if k not in ordered)
    return ordered


def _apply_with_last_applied(engine: Engine, current: dict[str, Any], config: dict[str, Any],
                             ownership: Ownership, applier: Identity, api_version: str,
                             force: bool) -> tuple[Any, dict[Any, Owned], bool]:
    try:
        return engine.apply(current, config, ownership.managers, applier, api_version, force)
    except Conflicts as found:
        conflicts = _listed(found)
        if applier.manager == last_applied.KUBECTL:
            allowed = last_applied.allowed_conflicts(current, engine)
            if allowed is not None:
                remaining = [c for c in conflicts if not fieldsets.has(allowed, c[0])]
                if not remaining:
                    return engine.apply(current, config, ownership.managers, applier, api_version, True)
                conflicts = remaining
        raise ConflictError([conflict for _, conflict in conflicts]) from None


def _listed(found: Conflicts) -> list[tuple[tuple[str, ...], Conflict]]:
    out = []
    for identity in sorted(found.by_manager):
        owned = found.by_manager[identity]
        for path in fieldsets.paths(owned.fields):
            out.append((path, Conflict(elements.render_path(path), identity.manager, owned.api_version,
                                       identity.operation, identity.subresource)))
    return out


def _record_before_first_apply(engine: Engine, current: dict[str, Any], ownership: Ownership,
                               api_version: str, subresource: str) -> None:
    """An object nobody owns yet (created before managedFields, or reset): its fields go to
    `before-first-apply`, so an apply that changes them conflicts as in kube."""
    identity = Identity.of(BEFORE_FIRST_APPLY, "Update", api_version, subresource)
    owned = engine.update({}, current, {}, identity, api_version)
    if identity in owned:
        fields = fieldsets.difference(owned[identity].fields, STRIPPED)
        if fields:
            ownership.managers[identity] = Owned(fields, api_version, False)
            ownership.times[identity] = managers.now()


def _described(config: dict[str, Any]) -> str:
    meta = config.get("metadata") or {}
    group, _, version = (config.get("apiVersion") or "").rpartition("/")
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}; {group}/{version}, Kind={config.get('kind', '')}"


def _without_applied_nulls(merged: Any, config: Any) -> Any:
    """Drop the fields the configuration set to null: an applied null leaves the field unset, as
    Go's decoding and the structural pruning of custom resources do."""
    if not isinstance(merged, dict) or not isinstance(config, dict):
        return merged
    out = {}
    for key, value in merged.items():
        if key in config:
            if config[key] is None and value is None:
                continue
            value = _without_applied_nulls(value, config[key])
        out[key] = value
    return out
