"""ControllerRef rules: who controls an object, and the patches that adopt and release it.

As upstream's ControllerRefManager: an object is owned by at most one controller (the
ownerReference with `controller: true`). `claim(owner, candidates, selector)` sorts candidates
into what the owner keeps, what it should adopt (orphans its selector matches, while neither is
being deleted) and what it should release (its own, no longer matched). The patches are
strategic-merge patches keyed on the owner's uid and guarded by the object's uid, so they never
touch a different object of the same name. `owner_keys` maps an event on a dependent to the
owners to reconcile. `can_adopt` rechecks the owner with a live read and `patch` sends an adopt or
release patch, as both are done by every claimer. Used by `replica_set.py` and `job.py` (pods),
`deployment.py` (ReplicaSets), `stateful_set.py` and `daemon_set.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collections.abc import Hashable

from client import cache, errors
from client.resources import Resource
from client.rest import RestClient
from controllers import label_selectors

Obj = dict[str, Any]


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def controller_of(obj: Obj) -> Obj | None:
    for ref in _meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def owner_keys(obj: Obj, old: Obj | None, deleted: bool, kind: str, owners: cache.Store | None,
               namespace_index: str) -> list[Hashable]:
    """The `kind` owner that controls the object (or did, before this change), or else the owners in
    its namespace whose selector matches it and so may adopt it (not for a deletion)."""
    namespace = _meta(obj).get("namespace") or ""
    keys: list[Hashable] = []
    for state in (obj, old):
        ref = controller_of(state) if state is not None else None
        if ref is not None and ref.get("kind") == kind:
            keys.append(f"{namespace}/{ref.get('name')}")
    if not keys and not deleted and owners is not None:
        labels = _meta(obj).get("labels")
        for owner in owners.by_index(namespace_index, namespace):
            if label_selectors.matches((owner.get("spec") or {}).get("selector"), labels):
                keys.append(cache.key_of(owner))
    return list(dict.fromkeys(keys))


def controller_uid(obj: Obj) -> list[str]:
    """An index function: the uid of the object's controller (informers file dependents under it)."""
    ref = controller_of(obj)
    return [ref["uid"]] if ref and ref.get("uid") else []


def owner_reference(owner: Obj, api_version: str, kind: str) -> Obj:
    meta = _meta(owner)
    return {"apiVersion": api_version, "kind": kind, "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}


def adopt_patch(owner: Obj, api_version: str, kind: str, obj: Obj) -> Obj:
    return {"metadata": {"ownerReferences": [owner_reference(owner, api_version, kind)], "uid": _meta(obj)["uid"]}}


def release_patch(owner: Obj, obj: Obj) -> Obj:
    return {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": _meta(owner)["uid"]}],
                         "uid": _meta(obj)["uid"]}}


@dataclass
class Claim:
    owned: list[Obj] = field(default_factory=list)    # ours and matched: what the owner counts
    adopt: list[Obj] = field(default_factory=list)    # orphans to take (count once adopted)
    release: list[Obj] = field(default_factory=list)  # ours but no longer matched


def claim(owner: Obj, candidates: list[Obj], selector: dict[str, Any] | None) -> Claim:
    result = Claim()
    owner_uid = _meta(owner).get("uid")
    owner_deleting = bool(_meta(owner).get("deletionTimestamp"))
    for obj in candidates:
        ref = controller_of(obj)
        matched = label_selectors.matches(selector, _meta(obj).get("labels"))
        if ref is not None:
            if ref.get("uid") != owner_uid:
                continue  # another controller's
            if matched:
                result.owned.append(obj)
            elif not owner_deleting:
                result.release.append(obj)
            continue
        if matched and not owner_deleting and not _meta(obj).get("deletionTimestamp"):
            result.adopt.append(obj)
    return result


async def can_adopt(client: RestClient, resource: Resource, owner: Obj) -> bool:
    """Upstream rechecks the owner with a live read before adopting: a cached owner may be gone,
    replaced by a new object of that name, or being deleted."""
    meta = _meta(owner)
    try:
        fresh = await client.get(resource, meta["name"], meta.get("namespace"))
    except errors.APIError as exc:
        if errors.is_not_found(exc):
            return False
        raise
    return _meta(fresh).get("uid") == meta.get("uid") and not _meta(fresh).get("deletionTimestamp")


async def patch(client: RestClient, resource: Resource, obj: Obj, body: Obj) -> Obj | None:
    """Send an adopt or release patch; None when the object is gone or its uid changed (422)."""
    meta = _meta(obj)
    try:
        return await client.patch(resource, meta["name"], body, meta.get("namespace"), patch_type="strategic")  # type: ignore[no-any-return]
    except errors.APIError as exc:
        if errors.is_not_found(exc) or exc.code == 422:
            return None
        raise
