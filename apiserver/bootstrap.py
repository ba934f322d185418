"""Keeps the objects every cluster has present: kube-apiserver's bootstrap controllers.

Upstream's API server (not the controller manager) recreates the system namespaces and the
`default/kubernetes` Service with its Endpoints and EndpointSlice when they disappear, and puts back
the ports and addresses they own. Here one watcher per storage prefix involved (namespaces, and the
default namespace's services, endpoints and slices) wakes only for writes there; a write to a kept
key is looked at at once, and a periodic look (a handful of key lookups) covers anything a watch
could miss. The objects, and how they are created and reconciled, are `seed.py`'s; `runner.start`
starts this before the server is announced, `Running.stop` ends it.
"""

from __future__ import annotations

import asyncio
import logging

from apiserver import seed
from apiserver.context import Server
from storage import errors as storage_errors

log = logging.getLogger("haru.apiserver.bootstrap")
RECHECK_SECONDS = 60.0  # upstream's system namespaces controller also looks once a minute


class Bootstrap:
    def __init__(self, server: Server, items: list[seed.Kept], *,
                 recheck_seconds: float = RECHECK_SECONDS) -> None:
        self.server = server
        self.items = items
        self.recheck_seconds = recheck_seconds
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Create what is missing now, then follow the prefixes the kept keys live under."""
        await seed.ensure(self.server, self.items)
        by_prefix: dict[str, list[seed.Kept]] = {}
        for item in self.items:
            by_prefix.setdefault(item.key.rsplit("/", 1)[0] + "/", []).append(item)
        revision = self.server.store.revision
        for prefix, items in by_prefix.items():
            self._tasks.append(asyncio.create_task(self._follow(prefix, items, revision),
                                                   name=f"haru-bootstrap{prefix}"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    async def _follow(self, prefix: str, items: list[seed.Kept], revision: int | None) -> None:
        kept = {item.key for item in items}
        while True:
            try:
                watcher = self.server.store.watch(prefix, revision)
            except storage_errors.TooOldResourceVersion:
                revision = None
                continue
            except storage_errors.StorageUnavailable:
                return  # the store closed: the server is stopping
            try:
                while True:
                    batch = await watcher.next_batch(timeout=self.recheck_seconds)
                    if batch:
                        revision = batch[-1].revision
                    # Any write to a kept key is looked at (our own rewrite then changes nothing).
                    if not batch or any(e.key in kept for e in batch):
                        await self._ensure(items)
            except storage_errors.WatchClosed:
                revision = None  # closed or compacted past us: watch again from now, after a look
                await self._ensure(items)
            finally:
                watcher.close()

    async def _ensure(self, items: list[seed.Kept]) -> None:
        try:
            for key in await seed.ensure(self.server, items):
                log.info("restored %s", key)
        except storage_errors.StorageError:
            log.exception("bootstrap could not restore %s", ", ".join(item.key for item in items))
