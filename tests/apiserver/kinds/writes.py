"""Drive a strategy the way `apiserver/writing.py` does, without a server.

create: default → prepare_for_create → validate; update: carry the old generation, then
default → prepare_for_update → validate_update (admission aside). Returns the causes; the object is
changed in place.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver import kinds
from apiserver.strategy import Strategy

Obj = dict[str, Any]


def strategy(group: str, resource: str, *, namespaced: bool = True, has_status: bool = True) -> Strategy:
    return kinds.strategy_for(group, resource, namespaced=namespaced, has_status=has_status)


def create(s: Strategy, obj: Obj) -> list[dict[str, str]]:
    meta = obj.setdefault("metadata", {})
    meta.setdefault("uid", "11111111-2222-3333-4444-555555555555")
    meta.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
    s.default(obj)
    s.prepare_for_create(obj)
    return s.validate(obj)


def created(s: Strategy, obj: Obj) -> Obj:
    causes = create(s, obj)
    assert causes == [], causes
    return obj


def update(s: Strategy, new: Obj, old: Obj) -> list[dict[str, str]]:
    meta, old_meta = new.setdefault("metadata", {}), old["metadata"]
    for key in ("uid", "creationTimestamp"):
        meta.setdefault(key, old_meta.get(key))
    meta.pop("generation", None)
    if "generation" in old_meta:
        meta["generation"] = old_meta["generation"]
    s.default(new)
    s.prepare_for_update(new, old)
    return s.validate_update(new, old)


def edited(obj: Obj) -> Obj:
    return copy.deepcopy(obj)


def messages(causes: list[dict[str, str]]) -> list[str]:
    return [f"{c['field']}: {c['message']}" if c["field"] else c["message"] for c in causes]
