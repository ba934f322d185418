"""What `bench.nodes` watches: a LIST then a WATCH of one collection, tallying objects as they pass.

`Tally(base, path, done)` keeps the names whose latest copy satisfies `done(obj)` (a Node whose
Ready condition is True, a Pod whose phase is Running) and the time the count first reached a
target, taken in this process as each event line arrives. It also counts MODIFIED events, which
is how the steady-state window counts Lease renewals. A stream the server ends is resumed from the
last resourceVersion seen; an ERROR event (say 410 Gone) is a benchmark error, never hidden.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import msgspec

_JSON = {"Accept": "application/json"}
Obj = dict[str, Any]


def node_ready(node: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def pod_running(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running"


class Tally:
    def __init__(self, base: str, path: str, done: Callable[[Obj], bool]) -> None:
        self.base = base
        self.path = path
        self.done = done
        self.names: set[str] = set()  # objects whose latest copy is done
        self.seen: set[str] = set()  # every object listed or watched
        self.modified = 0
        self.revision = ""
        self._target = 0
        self._reached_at: float | None = None
        self._reached = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, session: aiohttp.ClientSession) -> None:
        """LIST, then open the WATCH; returns once the watch's response headers are in."""
        async with session.get(f"{self.base}{self.path}", headers=_JSON) as resp:
            if resp.status != 200:
                raise RuntimeError(f"LIST {self.path} answered {resp.status}: {(await resp.text())[:300]}")
            body = msgspec.json.decode(await resp.read())
        self.revision = body["metadata"]["resourceVersion"]
        for obj in body.get("items") or []:
            self._apply("ADDED", obj)
        opened = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._watch(session, opened))
        await opened

    async def _watch(self, session: aiohttp.ClientSession, opened: asyncio.Future[None]) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
        try:
            while True:
                sep = "&" if "?" in self.path else "?"
                url = (f"{self.base}{self.path}{sep}watch=true&resourceVersion={self.revision}"
                       f"&allowWatchBookmarks=true&timeoutSeconds=3600")
                async with session.get(url, headers=_JSON, timeout=timeout) as resp:
                    if resp.status != 200:
                        raise RuntimeError(f"WATCH {self.path} answered {resp.status}: {(await resp.text())[:300]}")
                    if not opened.done():
                        opened.set_result(None)
                    pending = b""
                    async for chunk in resp.content.iter_any():
                        pending += chunk
                        *lines, pending = pending.split(b"\n")
                        for line in lines:
                            if line:
                                self._event(msgspec.json.decode(line))
        except BaseException as exc:
            if not opened.done():
                opened.set_exception(exc)
            raise

    def _event(self, event: Obj) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            raise RuntimeError(f"WATCH {self.path} sent an ERROR: {obj}")
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if version:
            self.revision = version
        if kind != "BOOKMARK":
            self._apply(kind, obj)

    def _apply(self, kind: Any, obj: Obj) -> None:
        name = obj["metadata"]["name"]
        if kind == "MODIFIED":
            self.modified += 1
        if kind == "DELETED":
            self.names.discard(name)
            self.seen.discard(name)
        else:
            self.seen.add(name)
            if self.done(obj):
                self.names.add(name)
            else:
                self.names.discard(name)
        if self._target and self._reached_at is None and len(self.names) >= self._target:
            self._reached_at = time.perf_counter()
            self._reached.set()

    async def wait_for(self, target: int, timeout: float, unless: asyncio.Future[Any] | None = None) -> float | None:
        """perf_counter time at which `target` names were done, or None if not within `timeout` or
        once `unless` (say, the nodes process exiting) is done first."""
        self._target = target
        if self._reached_at is None and len(self.names) >= target:
            self._reached_at = time.perf_counter()
            self._reached.set()
        assert self._task is not None
        waiter = asyncio.ensure_future(self._reached.wait())
        try:
            await asyncio.wait({waiter, self._task} | ({unless} if unless is not None else set()), timeout=timeout,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if self._task.done() and self._reached_at is None:
            self._task.result()  # the watch failed: raise its error
        return self._reached_at

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
