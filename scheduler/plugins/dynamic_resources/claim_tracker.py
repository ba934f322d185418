"""The claims as this scheduler knows them: the informer's, our own newer writes, and in-flight ones.

Upstream's DRA manager and assume cache, in small. Between Reserve and the end of PreBind a claim's
allocation lives only here (`in_flight`, keyed by uid), so the next pod's allocator counts those
devices as taken and a second pod sharing the claim waits for it. After PreBind writes a claim
status, `assume` keeps that copy until the informer delivers it or something newer (compared by
resourceVersion), so the next cycle does not see the claim unallocated. `allocated_state()` keeps
one `scheduler.dra` AllocatedState up to date: after a first full count it redoes only the claims
the store reports changed (`Store.subscribe`), the assumed ones and those whose in-flight copy
came or went, instead of walking every claim per pod.
Built by the plugin from `Handle.store(RESOURCECLAIMS)`.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from client import cache
from scheduler.dra.allocated import AllocatedState

Obj = dict[str, Any]
OWNER_INDEX = "by_owner_uid"
UNSEEN_GRACE = 30.0  # seconds an assumed claim the informer never delivered is kept


def _uid(claim: Obj, key: str) -> str:
    return (claim.get("metadata") or {}).get("uid") or key


def _rv(obj: Obj) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class ClaimTracker:
    def __init__(self, store: cache.Store) -> None:
        self._store = store
        store.add_indexer(OWNER_INDEX, cache.by_owner_uid)
        self._state = AllocatedState()
        self._counted: dict[str, Obj] = {}  # claim uid -> the version of it `_state` counts
        self._in_flight: dict[str, Obj] = {}
        self._assumed: dict[str, tuple[Obj, float]] = {}  # namespace/name -> (what PreBind wrote, when)
        # What `allocated_state` must look at again, and how store keys and uids map to each other.
        self._primed = False  # the first call counts everything
        self._touched: set[str] = set()  # store keys changed since the last count
        store.subscribe(self._touched.add)
        store.subscribe(self._informer_changed)
        self._flight_changed: set[str] = set()  # uids whose in-flight copy came or went
        self._assumed_counted: set[str] = set()  # keys assumed at the last count
        self._uid_of: dict[str, str] = {}  # store (or assumed) key -> the uid counted for it
        self._key_of: dict[str, str] = {}  # uid -> its key

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

    def _informer_changed(self, key: str) -> None:
        """Drop our copy of `key` once the informer has passed it: it delivered that version or a
        newer one, or deleted the claim. Waiting for the next `get` is not enough, since a claim
        the informer updates and then deletes in between would otherwise stay allocated here."""
        entry = self._assumed.get(key)
        if entry is None:
            return
        stored = self._store.get(key)
        if stored is None or _rv(stored) >= _rv(entry[0]):
            del self._assumed[key]

    def list(self) -> list[Obj]:
        """Every claim, with our own writes where the informer lags."""
        if not self._assumed:
            return self._store.list()
        # Per pod over every claim: only the few we wrote ourselves need the comparison in `get`.
        assumed, store = self._assumed, self._store
        out = []
        for key, claim in zip(store.keys(), store.list()):
            if key not in assumed:
                out.append(claim)
                continue
            current = self.get(claim["metadata"].get("namespace", ""), claim["metadata"]["name"])
            if current is not None:
                out.append(current)
        for key in [k for k in assumed if k not in store]:
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

    def allocated_state(self) -> AllocatedState:
        """What every claim holds, in-flight allocations included, as of now. The same object is
        updated in place on the next call: use it within one scheduling cycle (which does not
        yield to the informers between PreFilter and Reserve)."""
        if not self._primed:
            self._count_all()
            self._primed = True
            return self._state
        keys = set(self._touched)
        self._touched.clear()  # in place: the store holds this set's `add`
        assumed_now = set(self._assumed)
        keys |= assumed_now | self._assumed_counted
        self._assumed_counted = assumed_now
        in_flight = self._in_flight
        for key in keys:
            namespace, _, name = key.partition("/")
            claim = self.get(namespace, name)  # the store's, or our newer write
            old_uid = self._uid_of.pop(key, None)
            if old_uid is not None and (claim is None or _uid(claim, key) != old_uid):
                self._key_of.pop(old_uid, None)
                if old_uid not in in_flight:
                    self._uncount(old_uid)  # deleted (or recreated under a new uid)
            if claim is None:
                continue
            uid = _uid(claim, key)
            self._uid_of[key], self._key_of[uid] = uid, key
            self._count(uid, in_flight.get(uid, claim))
        changed = self._flight_changed
        self._flight_changed = set()
        for uid in changed:
            if uid in in_flight:
                self._count(uid, in_flight[uid])
                continue
            key = self._key_of.get(uid)
            claim = self.get(*key.split("/", 1)) if key is not None else None
            if claim is None:
                self._uncount(uid)  # never stored (the extended-resource claim), or gone
            else:
                self._count(uid, claim)
        return self._state

    def _count(self, uid: str, claim: Obj) -> None:
        old = self._counted.get(uid)
        if old is not claim:
            if old is not None:
                self._state.remove(old)
            self._state.add(claim)
            self._counted[uid] = claim

    def _uncount(self, uid: str) -> None:
        old = self._counted.pop(uid, None)
        if old is not None:
            self._state.remove(old)

    def _count_all(self) -> None:
        """Count every claim, comparing each with the object counted for it before."""
        self._touched.clear()
        self._flight_changed.clear()
        self._assumed_counted = set(self._assumed)
        self._uid_of, self._key_of = {}, {}
        state, in_flight, previous = self._state, self._in_flight, self._counted
        current: dict[str, Obj] = {}
        take = previous.pop
        # One pass per pod over every claim, so no call per claim beyond the dict operations.
        for claim in self.list():
            key = cache.key_of(claim)
            uid = _uid(claim, key)
            self._uid_of[key], self._key_of[uid] = uid, key
            if in_flight:
                claim = in_flight.get(uid, claim)
            current[uid] = claim
            old = take(uid, None)
            if old is not claim:
                if old is not None:
                    state.remove(old)
                state.add(claim)
        # In flight but not stored: the extended-resource claim before PreBind creates it.
        for uid, claim in in_flight.items():
            if uid not in current:
                current[uid] = claim
                old = take(uid, None)
                if old is not claim:
                    if old is not None:
                        state.remove(old)
                    state.add(claim)
        for gone in previous.values():
            state.remove(gone)
        self._counted = current

    def signal_pending(self, uid: str, claim: Obj) -> None:
        self._in_flight[uid] = claim
        self._flight_changed.add(uid)

    def has_pending(self, uid: str) -> bool:
        return uid in self._in_flight

    def pending(self, uid: str) -> Obj | None:
        """The in-flight copy (with the allocation Reserve chose), if there is one."""
        return self._in_flight.get(uid)

    def remove_pending(self, uid: str) -> bool:
        if self._in_flight.pop(uid, None) is None:
            return False
        self._flight_changed.add(uid)
        return True

    def assume(self, claim: Obj) -> None:
        self._assumed[cache.key_of(claim)] = (copy.deepcopy(claim), time.monotonic())

    def forget(self, claim: Obj) -> None:
        self._assumed.pop(cache.key_of(claim), None)
