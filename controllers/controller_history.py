"""ControllerRevisions: the template history of StatefulSets and DaemonSets (upstream's controller/history).

`patch_of(owner)` is the revision's data: `{"spec": {"template": {..., "$patch": "replace"}}}`, as
both upstream controllers' getPatch. `revision_hash(data, collision_count)` is FNV-32a over that
data's JSON then the collision count, SafeEncodeString'd; the revision is named `<owner>-<hash>`.
`template_of(revision)` reads the template back. `History` lists an owner's revisions, finds or
creates the update revision (bumping `collisionCount` on a name clash with different data) and
trims the history to `revisionHistoryLimit`. Used by `stateful_set.py` and `daemon_set.py`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client import errors
from client.resources import CONTROLLERREVISIONS
from client.rest import RestClient
from controllers import controller_refs
from controllers.template_hash import fnv32a, safe_encode

Obj = dict[str, Any]
HASH_LABEL = "controller.kubernetes.io/hash"


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _canonical(data: Obj) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def patch_of(owner: Obj) -> Obj:
    """What a revision stores: the owner's pod template, marked to replace the whole template."""
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def template_of(revision: Obj) -> Obj:
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def revision_hash(data: Obj, collision_count: int | None = None) -> str:
    value = fnv32a(_canonical(data))
    if collision_count is not None:
        value = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), value)
    return safe_encode(str(value))


def revision_name(owner_name: str, hash_: str) -> str:
    # Upstream trims the prefix so the whole name stays within 253 characters.
    return f"{owner_name[:223]}-{hash_}"


def number(revision: Obj) -> int:
    return int(revision.get("revision") or 0)


def same_data(a: Obj, b: Obj) -> bool:
    return _canonical(a.get("data") or {}) == _canonical(b.get("data") or {})


@dataclass
class Revisions:
    current: Obj
    update: Obj
    collision_count: int
    all: list[Obj]


class History:
    """One owner kind's revisions: `kind` and `api_version` name the owner in ownerReferences."""

    def __init__(self, client: RestClient, kind: str, api_version: str = "apps/v1", hash_label: str | None = None) -> None:
        self.client = client
        self.kind = kind
        self.api_version = api_version
        self.hash_label = hash_label  # the DaemonSet's revisions also carry the hash as controller-revision-hash

    async def owned(self, owner: Obj, candidates: list[Obj]) -> list[Obj]:
        """The owner's revisions among `candidates` (its namespace's), adopting matching orphans."""
        claimed = controller_refs.claim(owner, candidates, (owner.get("spec") or {}).get("selector"))
        owned = list(claimed.owned)
        for revision in claimed.adopt:
            patch = controller_refs.adopt_patch(owner, self.api_version, self.kind, revision)
            try:
                owned.append(await self.client.patch(CONTROLLERREVISIONS, _meta(revision)["name"], patch,
                                                     _meta(owner)["namespace"], patch_type="strategic"))
            except errors.APIError as exc:
                if not (errors.is_not_found(exc) or exc.code == 422):
                    raise
        return sorted(owned, key=lambda r: (number(r), _meta(r).get("name") or ""))

    def _new_revision(self, owner: Obj, collision_count: int, revision: int) -> Obj:
        data = patch_of(owner)
        meta = _meta(owner)
        labels = dict(((owner.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {})
        hash_ = revision_hash(data, collision_count)
        labels[HASH_LABEL] = hash_
        if self.hash_label:
            labels[self.hash_label] = hash_
        return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                "metadata": {"name": revision_name(meta["name"], hash_),
                             "namespace": meta["namespace"], "labels": labels,
                             "ownerReferences": [controller_refs.owner_reference(owner, self.api_version, self.kind)]},
                "data": data, "revision": revision}

    async def revisions(self, owner: Obj, owned: list[Obj]) -> Revisions:
        """Upstream's getStatefulSetRevisions / constructHistory: find or make the update revision."""
        status = owner.get("status") or {}
        collision_count = int(status.get("collisionCount") or 0)
        next_number = max((number(r) for r in owned), default=0) + 1
        wanted = self._new_revision(owner, collision_count, next_number)
        equal = [r for r in owned if same_data(r, wanted)]
        if equal:
            update = equal[-1]
            if number(update) != max(number(r) for r in owned):
                update = await self.client.patch(CONTROLLERREVISIONS, _meta(update)["name"], {"revision": next_number},
                                                 _meta(owner)["namespace"], patch_type="merge")
                owned = [update if _meta(r)["name"] == _meta(update)["name"] else r for r in owned]
        else:
            update, collision_count = await self._create(owner, wanted, collision_count, next_number)
            owned = owned + [update]
        current_name = status.get("currentRevision")
        current = next((r for r in owned if _meta(r)["name"] == current_name), update)
        return Revisions(current, update, collision_count, sorted(owned, key=number))

    async def _create(self, owner: Obj, wanted: Obj, collision_count: int, next_number: int) -> tuple[Obj, int]:
        """Create the revision; a same-named one with other data is a hash collision: count it and rehash."""
        namespace = _meta(owner)["namespace"]
        while True:
            try:
                return await self.client.create(CONTROLLERREVISIONS, wanted, namespace), collision_count
            except errors.APIError as exc:
                if exc.code != 409:
                    raise
            existing = await self.client.get(CONTROLLERREVISIONS, _meta(wanted)["name"], namespace)
            if same_data(existing, wanted) and (controller_refs.controller_of(existing) or {}).get("uid") == _meta(owner)["uid"]:
                return existing, collision_count
            collision_count += 1
            wanted = self._new_revision(owner, collision_count, next_number)

    async def truncate(self, owner: Obj, revisions: list[Obj], live: set[str], keep: Callable[[Obj], bool]) -> None:
        """Delete the oldest revisions beyond revisionHistoryLimit that no pod runs (`live` names) and `keep` spares."""
        limit = (owner.get("spec") or {}).get("revisionHistoryLimit")
        limit = 10 if limit is None else int(limit)
        history = [r for r in revisions if _meta(r)["name"] not in live and not keep(r)]
        for revision in sorted(history, key=number)[:max(len(history) - limit, 0)]:
            try:
                await self.client.delete(CONTROLLERREVISIONS, _meta(revision)["name"], _meta(owner)["namespace"])
            except errors.APIError as exc:
                if not errors.is_not_found(exc):
                    raise


def hash_of(revision: Obj) -> str:
    """The hash a revision was named with (its label, else the name's last part)."""
    labels = _meta(revision).get("labels") or {}
    return str(labels.get(HASH_LABEL) or (_meta(revision).get("name") or "").rsplit("-", 1)[-1])
