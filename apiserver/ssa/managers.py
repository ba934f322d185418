"""metadata.managedFields on the wire ↔ ownership by manager identity, as kube's field manager keeps it.

An identity is (manager, operation, apiVersion, subresource), with apiVersion left out for Apply so
an applier stays one entry across versions. Entries are written Apply first, then by time, manager,
apiVersion and subresource; Update entries beyond ten are folded, oldest first, into one
`ancient-changes` entry per apiVersion. Used by `apply.apply` and `managed_fields`.

Every write decodes the live entries and encodes them again, and most of them (every manager but
the writer) come back unchanged. So a FieldsV1 already seen decodes to the same field set object,
and a set encoded before encodes from its remembered bytes: the set algebra never mutates a set
(`fieldsets`), so sharing them between writes is safe, and the entries written are exactly those
`fieldsets.to_fields_v1` would write.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec

from apiserver.ssa import fieldsets
from apiserver.ssa.updater import Owned

MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"


class Identity(NamedTuple):
    manager: str
    operation: str
    api_version: str  # "" for Apply
    subresource: str

    @classmethod
    def of(cls, manager: str, operation: str, api_version: str, subresource: str = "") -> Identity:
        return cls(manager, operation, "" if operation == "Apply" else api_version, subresource)


@dataclass
class Ownership:
    """Decoded managedFields: field sets by identity and the time each entry last changed."""
    managers: dict[Identity, Owned] = field(default_factory=dict)
    times: dict[Identity, str] = field(default_factory=dict)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def decode(entries: Any) -> Ownership:
    """Raises ValueError for entries that are not managedFields (kube then falls back to the live ones)."""
    ownership = Ownership()
    if entries is None:
        return ownership
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    for entry in entries:
        if not isinstance(entry, dict):
            raise ValueError("a managedFields entry must be an object")
        fields_type = entry.get("fieldsType")
        if fields_type not in (None, "FieldsV1"):
            raise ValueError(f"unsupported fieldsType {fields_type!r}")
        operation = entry.get("operation", "")
        identity = Identity.of(entry.get("manager", ""), operation, entry.get("apiVersion", ""),
                               entry.get("subresource", ""))
        fields = _decoded(entry.get("fieldsV1") or {})
        previous = ownership.managers.get(identity)
        if previous is not None:
            fields = fieldsets.union(previous.fields, fields)
        ownership.managers[identity] = Owned(fields, entry.get("apiVersion", ""), operation == "Apply")
        if entry.get("time"):
            ownership.times[identity] = entry["time"]
    return ownership


def encode(ownership: Ownership) -> list[dict[str, Any]]:
    entries = []
    for identity, owned in ownership.managers.items():
        if not owned.fields:
            continue
        entry: dict[str, Any] = {"manager": identity.manager, "operation": identity.operation,
                                 "apiVersion": owned.api_version}
        if identity in ownership.times:
            entry["time"] = ownership.times[identity]
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = _encoded(owned.fields)
        if identity.subresource:
            entry["subresource"] = identity.subresource
        entries.append(entry)
    entries.sort(key=lambda e: (e["operation"], e.get("time", ""), e["manager"], e["apiVersion"],
                                e.get("subresource", "")))
    return entries


# A bound on the remembered sets (each a few hundred bytes): writes in flight touch far fewer.
_REMEMBERED = 4096
_BY_WIRE: dict[bytes, fieldsets.FieldSet] = {}  # FieldsV1 bytes → its set
_WIRE_OF: dict[int, tuple[fieldsets.FieldSet, bytes]] = {}  # id(set) → (the set, its FieldsV1 bytes)


def _decoded(raw: Any) -> fieldsets.FieldSet:
    try:
        key = msgspec.json.encode(raw)
    except (msgspec.EncodeError, TypeError, OverflowError):
        return fieldsets.from_fields_v1(raw)
    fields = _BY_WIRE.get(key)
    if fields is None:
        fields = fieldsets.from_fields_v1(raw)  # ValueError: not FieldsV1, nothing remembered
        if len(_BY_WIRE) >= _REMEMBERED:
            _BY_WIRE.clear()
        _BY_WIRE[key] = fields
    return fields


def _encoded(fields: fieldsets.FieldSet) -> dict[str, Any]:
    known = _WIRE_OF.get(id(fields))
    if known is not None and known[0] is fields:  # the entry holds the set: its id is not reused
        return msgspec.json.decode(known[1])  # a private copy: the caller may change its object
    wire = fieldsets.to_fields_v1(fields)
    if len(_WIRE_OF) >= _REMEMBERED:
        _WIRE_OF.clear()
    _WIRE_OF[id(fields)] = (fields, msgspec.json.encode(wire))
    return wire


def cap_updates(ownership: Ownership, limit: int = MAX_UPDATE_MANAGERS) -> None:
    """Fold the oldest Update entries into `ancient-changes` until at most `limit` remain."""
    updaters = [i for i, owned in ownership.managers.items() if not owned.applied]
    if len(updaters) <= limit:
        return
    updaters.sort(key=lambda i: (ownership.times.get(i, ""), i.manager))
    remaining = len(updaters)
    first_by_version: dict[str, Identity] = {}
    for identity in updaters:
        if remaining <= limit:
            break
        owned = ownership.managers[identity]
        bucket = Identity.of(ANCIENT_CHANGES, "Update", owned.api_version)
        first = first_by_version.get(owned.api_version)
        if first is None:
            first_by_version[owned.api_version] = identity
            continue
        if bucket not in ownership.managers:
            ownership.managers[bucket] = ownership.managers.pop(first)
            ownership.times.pop(first, None)
        merged = fieldsets.union(ownership.managers[bucket].fields, owned.fields)
        ownership.managers[bucket] = Owned(merged, owned.api_version, False)
        del ownership.managers[identity]
        if identity in ownership.times:
            ownership.times[bucket] = ownership.times.pop(identity)
        remaining -= 1
