"""The garbage collector: objects whose owners are gone go too, and the `orphan` and
`foregroundDeletion` finalizers are honoured.

It watches (metadata only) every resource that supports list, watch and delete, indexes each
object by its owners' uids, and reconciles one object at a time, upstream's way
(pkg/controller/garbagecollector):
* an object with owners: an owner is *solid* (exists, same uid), *waiting* (exists, being
  deleted in the foreground) or *dangling* (404, or another uid). No solid owner → delete it
  (Foreground if it waits for a foreground owner and has dependents of its own, else Background);
  solid and other owners → drop the references to the other ones;
* an owner being deleted with `orphan`: remove its reference from every dependent, then the finalizer;
* an owner being deleted with `foregroundDeletion`: have every dependent deleted; once none with
  `blockOwnerDeletion: true` is left, remove the finalizer (the API server then deletes the owner).
Decisions use the informer caches; writes re-read the live object and carry its resourceVersion
(a delete carries the cached one as a precondition, and on a conflict decides again on a live read).
Owners the server said are gone, and owners with dependents whose DELETED event came in, are
remembered by uid (upstream's absentOwnerCache), so the dependents of one deleted owner cost at
most one owner lookup, not one each.
New resources (CRDs) are found by re-discovery, at once when a CRD changes, else every 30 s.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from client import cache, errors
from client.discovery import Discovered, Discovery
from client.informer import Event, Informer
from client.resources import Resource
from client.rest import RestClient
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.gc")
ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
OWNER_INDEX = "owner-uid"
# Events come and go by the thousand and never own anything (upstream ignores them too).
IGNORED = frozenset({("", "events"), ("events.k8s.io", "events")})
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
ABSENT_OWNERS = 500  # upstream's absentOwnerCache size
Obj = dict[str, Any]


@dataclass(frozen=True)
class ObjectKey:
    resource: Resource
    namespace: str
    name: str

    @property
    def cache_key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def __str__(self) -> str:
        return f"{self.resource.group_resource} {self.cache_key}"


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _refs(obj: Obj | None) -> list[Obj]:
    return _meta(obj).get("ownerReferences") or []


class GarbageCollector:
    name = "garbage-collector"

    def __init__(self, client: RestClient, *, rediscover_every: float = 30.0) -> None:
        self.client = client
        self.discovery = Discovery(client)
        self.rediscover_every = rediscover_every
        self.discovered = Discovered([])
        self.watches: list[Watch] = []
        self._watch_by_resource: dict[Resource, Watch] = {}
        self._informer_map: dict[Resource, Informer] | None = None  # `_informers`, until the watches change
        self._ctx: Any = None
        self._rediscover_now = asyncio.Event()
        # (owner namespace, owner uid) the server answered 404 or another uid for: a uid is never
        # reused, so an owner seen gone stays gone. Most recently confirmed last.
        self._absent: OrderedDict[tuple[str, str], None] = OrderedDict()

    # -- what to watch -----------------------------------------------------------------------

    def _watchable(self, discovered: Discovered) -> list[Resource]:
        return [r for r in discovered.resources
                if r.supports("list", "watch", "delete") and (r.group, r.resource) not in IGNORED]

    def _watch_for(self, resource: Resource) -> Watch:
        return Watch(resource, self._keys_for(resource), metadata_only=True,
                     indexers={OWNER_INDEX: cache.by_owner_uid})

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx
        self.discovered = await self.discovery.preferred()
        for resource in self._watchable(self.discovered):
            self._watch_by_resource[resource] = self._watch_for(resource)
        self.watches = list(self._watch_by_resource.values())

    async def run(self, ctx: Any) -> None:
        """Re-discover now and then: watch resources that appeared, drop those that went away."""
        while True:
            try:
                await asyncio.wait_for(self._rediscover_now.wait(), self.rediscover_every)
            except asyncio.TimeoutError:
                pass
            self._rediscover_now.clear()
            try:
                discovered = await self.discovery.preferred()
            except (errors.APIError, OSError, asyncio.TimeoutError) as exc:
                log.warning("re-discovery failed: %s", exc)
                continue
            await self._rewatch(ctx, discovered)

    async def _rewatch(self, ctx: Any, discovered: Discovered) -> None:
        self.discovered = discovered
        wanted = set(self._watchable(discovered))
        failed_groups = {gv.rpartition("/")[0] for gv in discovered.failed}
        for resource in wanted - set(self._watch_by_resource):
            log.info("watching %s for ownerReferences", resource)
            self._watch_by_resource[resource] = watch = self._watch_for(resource)
            ctx.add_watch(watch)
        for resource in set(self._watch_by_resource) - wanted:
            if resource.group in failed_groups:
                continue  # unknown is not gone
            await ctx.remove_watch(self._watch_by_resource.pop(resource))
        self.watches = list(self._watch_by_resource.values())
        self._informer_map = None

    # -- events → keys -----------------------------------------------------------------------

    def _keys_for(self, resource: Resource) -> Callable[[Event], list[Hashable]]:
        def keys(event: Event) -> list[Hashable]:
            if (resource.group, resource.resource) == CRDS:
                self._rediscover_now.set()
            meta = _meta(event.obj)
            me = ObjectKey(resource, meta.get("namespace") or "", meta.get("name") or "")
            found: list[Hashable] = []
            if event.type == "DELETED":
                found += [key for key, _ in self.dependents(meta.get("uid") or "")]
                if found:
                    # This uid is gone for good (uids are never reused): its dependents need not
                    # ask the server about it, as upstream's graph builder fills absentOwnerCache
                    # from the delete events of owners that have dependents.
                    self._remember_absent((me.namespace, meta.get("uid") or ""))
            else:
                finalizers = meta.get("finalizers") or []
                if _refs(event.obj) or (meta.get("deletionTimestamp") and (ORPHAN in finalizers or FOREGROUND in finalizers)):
                    found.append(me)
            # A dependent that changed or went away may free an owner waiting in the foreground.
            for ref in _refs(event.obj) + _refs(event.old):
                owner_key = self._owner_key(ref, me.namespace)
                owner = self._cached(owner_key) if owner_key else None
                if owner is not None and _deleting_in_foreground(owner):
                    found.append(owner_key)
            return list(dict.fromkeys(found))
        return keys

    # -- cache reads -------------------------------------------------------------------------

    def _informer(self, resource: Resource) -> Informer | None:
        return self._informers().get(resource)

    def _informers(self) -> dict[Resource, Informer]:
        """Each watched resource's informer. Every event asks for all of them (`dependents`), so the
        map is kept until the watches change, once the manager has started every one of them."""
        if self._informer_map is not None:
            return self._informer_map
        found = {}
        for resource, watch in self._watch_by_resource.items():
            informer = self._ctx.informer(watch) if self._ctx is not None else None
            if informer is not None:
                found[resource] = informer
        if len(found) == len(self._watch_by_resource):
            self._informer_map = found
        return found

    def _cached(self, key: ObjectKey) -> Obj | None:
        informer = self._informer(key.resource)
        return informer.store.get(key.cache_key) if informer else None

    def _owner_key(self, ref: Obj, namespace: str) -> ObjectKey | None:
        resource = self.discovered.for_kind(ref.get("apiVersion") or "", ref.get("kind") or "")
        if resource is None:
            return None
        return ObjectKey(resource, namespace if resource.namespaced else "", ref.get("name") or "")

    def dependents(self, uid: str) -> list[tuple[ObjectKey, Obj]]:
        found: list[tuple[ObjectKey, Obj]] = []
        if not uid:
            return found
        for resource, informer in self._informers().items():
            if not informer.store.index_count(OWNER_INDEX, uid):
                continue
            for obj in informer.store.by_index(OWNER_INDEX, uid):
                meta = _meta(obj)
                found.append((ObjectKey(resource, meta.get("namespace") or "", meta["name"]), obj))
        return found

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        assert isinstance(key, ObjectKey)
        obj = self._cached(key)
        if obj is None:
            return None  # gone: its DELETED event already queued whatever depended on it
        meta = _meta(obj)
        finalizers = meta.get("finalizers") or []
        if meta.get("deletionTimestamp"):
            if ORPHAN in finalizers:
                await self._orphan_dependents(key, obj)
            elif FOREGROUND in finalizers:
                return await self._delete_dependents_first(key, obj)
            return None
        if _refs(obj):
            await self._collect_if_owners_gone(key, obj)
        return None

    async def _owner_state(self, ref: Obj, namespace: str) -> str:
        """'solid', 'waiting' (being deleted in the foreground) or 'dangling'."""
        resource = self.discovered.for_kind(ref.get("apiVersion") or "", ref.get("kind") or "")
        if resource is None:
            self._rediscover_now.set()
            raise LookupError(f"no served resource for owner kind {ref.get('apiVersion')} {ref.get('kind')}")
        if resource.namespaced and not namespace:
            return "dangling"  # a cluster-scoped object cannot be owned by a namespaced one
        key = ObjectKey(resource, namespace if resource.namespaced else "", ref.get("name") or "")
        absent = (key.namespace, ref.get("uid") or "")
        if absent in self._absent:
            self._absent.move_to_end(absent)
            return "dangling"
        owner = self._cached(key)
        if owner is None or _meta(owner).get("uid") != ref.get("uid"):
            # The cache may lag behind a create: only the server can say the owner is gone.
            try:
                owner = await self.client.get(resource, key.name, key.namespace or None)
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    self._remember_absent(absent)
                    return "dangling"
                raise
            if _meta(owner).get("uid") != ref.get("uid"):
                self._remember_absent(absent)
                return "dangling"
        return "waiting" if _deleting_in_foreground(owner) else "solid"

    def _remember_absent(self, owner: tuple[str, str]) -> None:
        self._absent[owner] = None
        self._absent.move_to_end(owner)
        while len(self._absent) > ABSENT_OWNERS:
            self._absent.popitem(last=False)

    async def _collect_if_owners_gone(self, key: ObjectKey, cached: Obj) -> None:
        states = {ref.get("uid"): await self._owner_state(ref, key.namespace) for ref in _refs(cached)}
        if all(state == "solid" for state in states.values()):
            return
        if "solid" not in states.values() and await self._delete_as_cached(key, cached, states):
            return
        try:
            live = await self.client.get(key.resource, key.name, key.namespace or None)
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return
            raise
        meta = _meta(live)
        if meta.get("uid") != _meta(cached).get("uid") or meta.get("deletionTimestamp"):
            return
        for ref in _refs(live):
            if ref.get("uid") not in states:
                states[ref.get("uid")] = await self._owner_state(ref, key.namespace)
        live_states = [states[ref.get("uid")] for ref in _refs(live)]
        if not live_states:
            return
        if "solid" in live_states:
            drop = {ref.get("uid") for ref in _refs(live) if states[ref.get("uid")] != "solid"}
            log.info("%s: removing references to owners that are gone or going: %s", key, sorted(str(uid) for uid in drop))
            await self._remove_owner_refs(key, meta["uid"], drop)
            return
        policy = "Foreground" if "waiting" in live_states and self.dependents(meta["uid"]) else "Background"
        log.info("%s: every owner is gone or going; deleting (%s)", key, policy)
        try:
            await self.client.delete(key.resource, key.name, key.namespace or None,
                                     propagation_policy=policy, uid=meta["uid"])
        except errors.APIError as exc:
            if not (errors.is_not_found(exc) or exc.code == 409):  # gone, or replaced by a newer object
                raise

    async def _delete_as_cached(self, key: ObjectKey, cached: Obj, states: dict[Any, str]) -> bool:
        """Delete the object on what the cache says, with its uid and resourceVersion as
        preconditions: the server deletes only the very version the decision was made on. False
        when it changed since (a 409): the caller then decides again on a live read."""
        meta = _meta(cached)
        if not meta.get("uid") or not meta.get("resourceVersion"):
            return False
        policy = "Foreground" if "waiting" in states.values() and self.dependents(meta.get("uid") or "") else "Background"
        log.info("%s: every owner is gone or going; deleting (%s)", key, policy)
        try:
            await self.client.delete(key.resource, key.name, key.namespace or None, propagation_policy=policy,
                                     uid=meta.get("uid"), resource_version=meta.get("resourceVersion"))
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return True
            if exc.code == 409:
                return False
            raise
        return True

    async def _orphan_dependents(self, key: ObjectKey, owner: Obj) -> None:
        uid = _meta(owner)["uid"]
        for dep_key, _ in self.dependents(uid):
            await self._remove_owner_refs(dep_key, None, {uid})
        await self._remove_finalizer(key, uid, ORPHAN)
        log.info("%s: dependents orphaned", key)

    async def _delete_dependents_first(self, key: ObjectKey, owner: Obj) -> Result | None:
        uid = _meta(owner)["uid"]
        blocking = 0
        for dep_key, dep in self.dependents(uid):
            ref = next((r for r in _refs(dep) if r.get("uid") == uid), {})
            if ref.get("blockOwnerDeletion"):
                blocking += 1
            if not _meta(dep).get("deletionTimestamp"):
                self._ctx.queue.add(dep_key)  # its reconcile sees this owner waiting and deletes it
        if blocking:
            # Dependents' events bring us back; the recheck is only a safety net.
            return Result(requeue_after=5.0)
        await self._remove_finalizer(key, uid, FOREGROUND)
        log.info("%s: no blocking dependents left; foreground deletion finished", key)
        return None

    # -- writes ------------------------------------------------------------------------------

    async def _update_metadata(self, key: ObjectKey, uid: str | None, change: Callable[[Obj], Obj | None]) -> None:
        """Read the live object, compute a metadata change, write it with the read resourceVersion;
        again on conflict. Nothing happens when the object is gone or is another one now."""
        for _ in range(10):
            try:
                live = await self.client.get(key.resource, key.name, key.namespace or None)
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return
                raise
            meta = _meta(live)
            if uid is not None and meta.get("uid") != uid:
                return
            patch = change(meta)
            if patch is None:
                return
            patch["resourceVersion"] = meta.get("resourceVersion")
            try:
                await self.client.patch(key.resource, key.name, {"metadata": patch}, key.namespace or None)
                return
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return
                if not errors.is_conflict(exc):
                    raise
        raise RuntimeError(f"{key}: kept conflicting while updating metadata")

    async def _remove_owner_refs(self, key: ObjectKey, uid: str | None, owners: set[Any]) -> None:
        def change(meta: Obj) -> Obj | None:
            refs = meta.get("ownerReferences") or []
            kept = [r for r in refs if r.get("uid") not in owners]
            return None if len(kept) == len(refs) else {"ownerReferences": kept or None}
        await self._update_metadata(key, uid, change)

    async def _remove_finalizer(self, key: ObjectKey, uid: str, finalizer: str) -> None:
        def change(meta: Obj) -> Obj | None:
            finalizers = meta.get("finalizers") or []
            if finalizer not in finalizers:
                return None
            kept = [f for f in finalizers if f != finalizer]
            return {"finalizers": kept or None}
        await self._update_metadata(key, uid, change)


def _deleting_in_foreground(obj: Obj) -> bool:
    meta = _meta(obj)
    return bool(meta.get("deletionTimestamp")) and FOREGROUND in (meta.get("finalizers") or [])
