"""`Informer`: a `cache.Store` kept in step with one collection by a `reflector.Reflector`, and
handlers told of every change.

What an informer guarantees (client-go's guarantees, and what tests/client/test_informer.py checks):

* **Per-object order.** The handlers see one object's events in the order the server made them,
  each exactly once while the watch is unbroken. Nothing is promised about order across objects
  beyond that of the single stream.
* **Eventual consistency.** The store converges on the server's state. Intermediate states can be
  skipped: a relist after an expired watch (410) jumps straight to what exists now, turning what
  changed meanwhile into one ADDED, MODIFIED or DELETED per object.
* **Delete-then-recreate may look like an update.** If an object was deleted and created again
  under the same name while the informer was not watching, handlers see a single MODIFIED whose
  `old` and `obj` have different uids. A deletion learned only from a relist arrives as DELETED
  with `final_state_unknown=True`, carrying the last state this informer saw.

Handlers run synchronously, in the informer's task, after the store has been updated; they should
only note work (enqueue a key) and never block. A shard selector (KEP-5866) is sent to the server
and also applied here. Created directly or through `Informer.for_resource`; run with `start()`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client import cache, sharding
from client.listwatch import ListerWatcher, ListWatch
from client.reflector import Reflector
from client.resources import Resource
from client.rest import RestClient

log = logging.getLogger("haru.client.informer")
Obj = dict[str, Any]


@dataclass(frozen=True)
class Event:
    type: str  # "ADDED" | "MODIFIED" | "DELETED"
    obj: Obj  # the new state; for DELETED the last state known
    old: Obj | None = None  # MODIFIED: the state the store held before
    final_state_unknown: bool = False  # DELETED learned from a relist, not from a watch event
    initial: bool = False  # ADDED while filling the store for the first time

    @property
    def key(self) -> str:
        return cache.key_of(self.obj)


Handler = Callable[[Event], None]


class Informer:
    def __init__(self, lw: ListerWatcher, *, indexers: dict[str, cache.IndexFunc] | None = None,
                 shard_selector: str | None = None, use_watch_list: bool = True, watch_timeout: float = 300.0) -> None:
        self.lw = lw
        self.resource: Resource = lw.resource
        self.store = cache.Store(indexers)
        selector = shard_selector if shard_selector is not None else getattr(lw, "shard_selector", "")
        self.shard = sharding.parse(selector) if selector else None
        self.reflector = Reflector(lw, self, use_watch_list=use_watch_list, watch_timeout=watch_timeout)
        self._handlers: list[Handler] = []
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def for_resource(cls, client: RestClient, resource: Resource, namespace: str | None = None, *,
                     label_selector: str = "", field_selector: str = "", shard_selector: str = "",
                     metadata_only: bool = False, **options: Any) -> "Informer":
        lw = ListWatch(client, resource, namespace, label_selector=label_selector, field_selector=field_selector,
                       shard_selector=shard_selector, metadata_only=metadata_only)
        return cls(lw, **options)

    # -- reading -----------------------------------------------------------------------------

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    @property
    def last_sync_resource_version(self) -> str:
        """The newest resourceVersion this informer's store reflects (client-go's
        LastSyncResourceVersion): a write answered with a newer one is not in the store yet."""
        return self.reflector.last_resource_version

    async def wait_synced(self, timeout: float | None = None) -> None:
        await asyncio.wait_for(self._synced.wait(), timeout)

    def add_handler(self, handler: Handler) -> None:
        """Register a handler; if the store is already filled, it first sees every object as ADDED."""
        self._handlers.append(handler)
        if self.has_synced:
            for obj in self.store.list():
                self._call(handler, Event("ADDED", obj, initial=True))

    def remove_handler(self, handler: Handler) -> None:
        self._handlers.remove(handler)

    # -- running -----------------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.reflector.run(), name=f"informer {self.resource}")
        return self._task

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    # -- the reflector's sink ----------------------------------------------------------------

    def replace(self, objects: list[Obj], resource_version: str) -> None:
        """A full state (list or WatchList): emit the difference from what the store held."""
        first = not self.has_synced
        wanted = {cache.key_of(o): o for o in objects if self._in_shard(o)}
        events: list[Event] = []
        for key in self.store.keys():
            if key not in wanted:
                last = self.store.get(key)
                assert last is not None
                events.append(Event("DELETED", last, final_state_unknown=True))
        for key, obj in wanted.items():
            old = self.store.get(key)
            if old is None:
                events.append(Event("ADDED", obj, initial=first))
            elif _version(old) != _version(obj):
                events.append(Event("MODIFIED", obj, old))
        self.store.replace(wanted.values())
        self._synced.set()
        for event in events:
            self._dispatch(event)

    def apply(self, event_type: str, obj: Obj) -> None:
        if not self._in_shard(obj):
            return
        if event_type == "DELETED":
            self.store.delete(obj)
            self._dispatch(Event("DELETED", obj))  # the event carries the object's final state
            return
        old = self.store.add(obj)
        # The stream's own word for it can be stale after a relist raced it; the store decides.
        self._dispatch(Event("ADDED", obj) if old is None else Event("MODIFIED", obj, old))

    def _in_shard(self, obj: Obj) -> bool:
        return self.shard is None or self.shard.matches(obj)

    def _dispatch(self, event: Event) -> None:
        for handler in list(self._handlers):
            self._call(handler, event)

    def _call(self, handler: Handler, event: Event) -> None:
        try:
            handler(event)
        except Exception:  # a broken handler must not stop the informer or its siblings
            log.exception("%s: handler %r failed on %s %s", self.resource, handler, event.type, event.key)


def _version(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("uid") or "", meta.get("resourceVersion") or ""

