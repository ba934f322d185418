"""The claims as this scheduler knows them: the informer's, our own newer writes, and in-flight ones.

Upstream's DRA manager and assume cache, in small. Between Reserve and the end of PreBind a claim's
allocation lives only here (`in_flight`, keyed by uid), so the next pod's allocator counts those
devices as taken and a second pod sharing the claim waits for it. After PreBind writes a claim
status, `assume` keeps that copy until the informer delivers it or something newer (compared by
resourceVersion), so the next cycle does not see the claim unallocated. Built by the plugin from
`Handle.store(RESOURCECLAIMS)`.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from client import cache

Obj = dict[str, Any]
OWNER_INDEX = "by_owner_uid"
UNSEEN_GRACE = 30.0  # seconds an assumed claim the informer never delivered is kept


def _rv(obj: Obj) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class ClaimTracker:
    def __init__(self, store: cache.Store) -> None:
        self._store = store
        store.add_indexer(OWNER_INDEX, cache.by_owner_uid)
        self._in_flight: dict[str, Obj] = {}
        self._assumed: dict[str, tuple[Obj, float]] = {}  # namespace/name -> (what PreBind wrote, when)

    def get(self, namespace: str, name: str) -> Obj | None:
        key = f"{namespace}/{name}"
        stored = self._store.get(key)
        entry = self._assumed.get(key)
        if entry is None:
            return stored
        assumed, at = entry
        if stored is not None and _rv(stored) >= _rv(assumed):
            del self._assumed[key]  # the informer caught up
            return stored
        if stored is None and time.monotonic() - at > UNSEEN_GRACE:
            # Never seen by the informer after all this time: deleted meanwhile, not merely late.
            del self._assumed[key]
            return None
        return assumed

    def list(self) -> list[Obj]:
        """Every claim, with our own writes where the informer lags."""
        if not self._assumed:
            return self._store.list()
        out = []
        seen = set()
        for claim in self._store:
            key = cache.key_of(claim)
            seen.add(key)
            current = self.get(claim["metadata"].get("namespace", ""), claim["metadata"]["name"])
            if current is not None:
                out.append(current)
        for key in [k for k in self._assumed if k not in seen]:
            namespace, _, name = key.partition("/")
            current = self.get(namespace, name)
            if current is not None:
                out.append(current)
        return out

    def owned_by(self, uid: str) -> list[Obj]:
        """The claims with an owner reference to `uid` (the pod's special claim is among them)."""
        out = []
        for claim in self._store.by_index(OWNER_INDEX, uid):
            current = self.get(claim["metadata"].get("namespace", ""), claim["metadata"]["name"])
            if current is not None:
                out.append(current)
        stored = {cache.key_of(c) for c in out}
        for key, (claim, _) in list(self._assumed.items()):
            if key not in stored and uid in cache.by_owner_uid(claim):
                current = self.get(*key.split("/", 1))
                if current is not None:
                    out.append(current)
        return out

    def allocated_view(self) -> list[Obj]:
        """What the allocator must treat as taken: every claim, in-flight allocations included."""
        claims = []
        for claim in self.list():
            uid = (claim.get("metadata") or {}).get("uid", "")
            claims.append(self._in_flight.get(uid, claim))
        known = {(c.get("metadata") or {}).get("uid") for c in claims}
        # In-flight claims the store does not hold: the extended-resource claim before PreBind creates it.
        claims.extend(c for uid, c in self._in_flight.items() if uid not in known)
        return claims

    def signal_pending(self, uid: str, claim: Obj) -> None:
        self._in_flight[uid] = claim

    def has_pending(self, uid: str) -> bool:
        return uid in self._in_flight

    def remove_pending(self, uid: str) -> bool:
        return self._in_flight.pop(uid, None) is not None

    def assume(self, claim: Obj) -> None:
        self._assumed[cache.key_of(claim)] = (copy.deepcopy(claim), time.monotonic())

    def forget(self, claim: Obj) -> None:
        self._assumed.pop(cache.key_of(claim), None)
