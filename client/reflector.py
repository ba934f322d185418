"""`Reflector`: keeps a sink in step with one collection — list, then watch from that
resourceVersion; on an expired (410) answer, list again.

It prefers WatchList (one watch with `sendInitialEvents=true`: ADDED events up to the bookmark
annotated `k8s.io/initial-events-end`, then changes) and falls back to LIST + WATCH for good when
the server answers that request with a 4xx. What happens after a watch ends is one rule,
`next_step(error)`, tested on its own. The sink is `informer.Informer` (`replace` after a list,
`apply` per event); the collection is a `listwatch.ListerWatcher`.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import random
from contextlib import aclosing
from typing import Any, Protocol

import aiohttp

from client import errors
from client.listwatch import ListerWatcher

log = logging.getLogger("haru.client.reflector")
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class Sink(Protocol):
    def replace(self, objects: list[dict[str, Any]], resource_version: str) -> None: ...

    def apply(self, event_type: str, obj: dict[str, Any]) -> None: ...


class Step(enum.Enum):
    REWATCH = "watch again from the last resourceVersion"
    RELIST = "list again from scratch"
    BACKOFF_REWATCH = "wait, then watch again from the last resourceVersion"
    BACKOFF_RELIST = "wait, then list again"


def next_step(error: BaseException | None) -> Step:
    """What to do after a watch (or list) ends — client-go's reflector rule.

    A clean end (the server's timeoutSeconds) just re-watches. An expired or gone resourceVersion
    (410, reason Expired/Gone) or one the server has not reached yet means our position is
    useless: relist at once. Transient trouble (connection errors, 429, 5xx) keeps the position
    and retries after a backoff. Anything else backs off and relists.
    """
    if error is None:
        return Step.REWATCH
    if errors.is_expired(error) or errors.is_too_large_resource_version(error):
        return Step.RELIST
    if errors.is_retriable(error) or isinstance(error, (aiohttp.ClientError, asyncio.TimeoutError, ConnectionError)):
        return Step.BACKOFF_REWATCH
    return Step.BACKOFF_RELIST


def _fall_back_to_list(error: BaseException) -> bool:
    """A 4xx to a WatchList request means the server does not do WatchList (kube answers 422)."""
    return (isinstance(error, errors.APIError) and 400 <= error.code < 500
            and not errors.is_expired(error) and error.code != 429)


class Backoff:
    def __init__(self, initial: float, maximum: float) -> None:
        self.initial, self.maximum, self.current = initial, maximum, initial

    def next(self) -> float:
        delay = self.current * (0.5 + random.random() / 2)
        self.current = min(self.current * 2, self.maximum)
        return delay

    def reset(self) -> None:
        self.current = self.initial


def _key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


class Reflector:
    def __init__(self, lw: ListerWatcher, sink: Sink, *, use_watch_list: bool = True, page_size: int = 500,
                 watch_timeout: float = 300.0, backoff_initial: float = 0.2, backoff_max: float = 30.0) -> None:
        self.lw = lw
        self.sink = sink
        self.use_watch_list = use_watch_list
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.backoff = Backoff(backoff_initial, backoff_max)
        self.last_resource_version = ""
        self._quiet_short_watch = False  # the last watch ended at once without a single event

    def _timeout_seconds(self) -> int:
        # Spread re-watches out in time, as client-go does ([timeout, 2×timeout)).
        return max(1, int(self.watch_timeout * (1 + random.random())))

    async def run(self) -> None:
        """Until cancelled: list (or WatchList), then watch, following `next_step` after each end."""
        need_list = True
        while True:
            try:
                if need_list:
                    await self._list_and_watch()
                else:
                    await self._watch()
                error: BaseException | None = None
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every failure is classified by next_step
                error = exc
            step = next_step(error)
            if error is not None:
                log.info("%s: watch ended (%s): %s", self.lw.resource, error, step.value)
            if step is Step.RELIST:
                self.last_resource_version = ""
                need_list = True
            elif step is Step.REWATCH:
                need_list = not self.last_resource_version
                if self._quiet_short_watch:
                    # Something between us and the server closes streams at once: do not spin.
                    await asyncio.sleep(self.backoff.next())
            else:
                await asyncio.sleep(self.backoff.next())
                need_list = step is Step.BACKOFF_RELIST or not self.last_resource_version

    async def _list_and_watch(self) -> None:
        if self.use_watch_list:
            try:
                await self._watch_list()
                return
            except errors.APIError as exc:
                if not _fall_back_to_list(exc):
                    raise
                log.info("%s: server refused WatchList (%s); using list + watch", self.lw.resource, exc)
                self.use_watch_list = False
        await self._list()
        await self._watch()

    async def _list(self) -> None:
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            page = await self.lw.list(limit=self.page_size, continue_token=token)
            kind = (page.get("kind") or "").removesuffix("List")
            api_version = page.get("apiVersion") or ""
            for item in page.get("items") or []:
                # Lists may leave kind/apiVersion off their items; watch events carry them.
                if kind and "kind" not in item:
                    item["kind"] = kind
                if api_version and "apiVersion" not in item:
                    item["apiVersion"] = api_version
                items.append(item)
            meta = page.get("metadata") or {}
            token = meta.get("continue") or ""
            if not token:
                break
        self.last_resource_version = meta.get("resourceVersion") or ""
        self.sink.replace(items, self.last_resource_version)
        self.backoff.reset()

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        began, heard = loop.time(), False
        events = self.lw.watch(resource_version=self.last_resource_version, timeout_seconds=self._timeout_seconds())
        async with aclosing(events):
            async for event in events:
                self._handle(event)
                heard = True
                self.backoff.reset()
        self._quiet_short_watch = not heard and loop.time() - began < 1.0

    async def _watch_list(self) -> None:
        initial: dict[str, dict[str, Any]] = {}
        synced = False
        events = self.lw.watch(resource_version=self.last_resource_version, send_initial_events=True,
                               timeout_seconds=self._timeout_seconds())
        async with aclosing(events):
            async for event in events:
                if synced:
                    self._handle(event)
                    continue
                kind, obj = event.get("type"), event.get("object") or {}
                meta = obj.get("metadata") or {}
                if kind == "BOOKMARK":
                    if (meta.get("annotations") or {}).get(INITIAL_EVENTS_END) == "true":
                        self.last_resource_version = meta.get("resourceVersion") or ""
                        self.sink.replace(list(initial.values()), self.last_resource_version)
                        self.backoff.reset()
                        synced = True
                elif kind in ("ADDED", "MODIFIED"):
                    initial[_key(obj)] = obj
                elif kind == "DELETED":
                    initial.pop(_key(obj), None)
                else:
                    raise ValueError(f"unexpected watch event type {kind!r}")
        if not synced:
            # The stream ended before the initial state was complete: that state is unusable.
            self.last_resource_version = ""

    def _handle(self, event: dict[str, Any]) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        rv = (obj.get("metadata") or {}).get("resourceVersion") or ""
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            self.sink.apply(kind, obj)
        elif kind != "BOOKMARK":
            raise ValueError(f"unexpected watch event type {kind!r}")
        if rv:
            self.last_resource_version = rv
