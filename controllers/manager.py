"""`Manager`: runs controllers — shared informers, one work queue per controller, workers.

Start order (client-go's): every controller's `prepare` (if any), then one informer per distinct
collection in all the `watches` (shared between controllers), handlers that turn events into
queue keys, wait until every informer has synced, then the workers and any background `run`.
A worker takes a key, awaits `reconcile(key)`, and follows `reconciling.py`'s rules for the
outcome. Controllers may add and drop watches while running through their `ControllerContext`
(the garbage collector does, as resources come and go). Used by `builtin.run` and the tests.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from client.errors import APIError
from client.informer import Event, Informer
from client.rest import RestClient
from client.workqueue import ExponentialBackoff, ShutDown, WorkQueue
from controllers.reconciling import Controller, Terminal, Watch

log = logging.getLogger("haru.controllers")


class ControllerContext:
    """What one controller may use from the manager: the manager's client (the shared informers'
    identity; a controller's own writes go through the client it was built with), its queue, and
    informers."""

    def __init__(self, manager: "Manager", controller: Controller, queue: WorkQueue) -> None:
        self.manager = manager
        self.controller = controller
        self.queue = queue
        self.client = manager.client
        self._handlers: dict[Watch, Any] = {}

    def add_watch(self, watch: Watch) -> Informer:
        """Start (or share) the informer for `watch` and feed its events' keys to our queue."""
        informer = self.manager.informer(watch)
        if watch not in self._handlers:
            queue = self.queue

            def enqueue(event: Event) -> None:
                for key in watch.keys(event):
                    queue.add(key)

            self._handlers[watch] = enqueue
            informer.add_handler(enqueue)
        return informer

    async def remove_watch(self, watch: Watch) -> None:
        handler = self._handlers.pop(watch, None)
        if handler is not None:
            await self.manager.release(watch, handler)

    def informer(self, watch: Watch) -> Informer | None:
        return self.manager.informers.get(watch.collection)


class Manager:
    def __init__(self, client: RestClient, controllers: Sequence[Controller], *, workers: int = 2,
                 workers_for: Mapping[str, int] | None = None,
                 backoff_base: float = 0.05, backoff_cap: float = 60.0, use_watch_list: bool = True,
                 informer_factory: Callable[[Watch], Informer] | None = None,
                 closing: Sequence[Callable[[], Awaitable[None]]] = ()) -> None:
        self.client = client
        self.closing = list(closing)  # what `stop` also ends (the controllers' own clients)
        self.informer_factory = informer_factory or self._informer_from_client
        self.controllers = list(controllers)
        self.workers = workers
        # Per controller, as kube-controller-manager's --concurrent-*-syncs flags; `workers` for the rest.
        self.workers_for = dict(workers_for or {})
        self.use_watch_list = use_watch_list
        self.informers: dict[tuple[Any, ...], Informer] = {}
        self._users: dict[tuple[Any, ...], int] = {}
        self.contexts = {c.name: ControllerContext(self, c, WorkQueue(ExponentialBackoff(backoff_base, backoff_cap)))
                         for c in self.controllers}
        self._tasks: list[asyncio.Task[None]] = []

    def informer(self, watch: Watch) -> Informer:
        key = watch.collection
        informer = self.informers.get(key)
        if informer is None:
            informer = self.informer_factory(watch)
            self.informers[key] = informer
            informer.start()
        for name, func in watch.indexers.items():
            informer.store.add_indexer(name, func)
        self._users[key] = self._users.get(key, 0) + 1
        return informer

    def _informer_from_client(self, watch: Watch) -> Informer:
        return Informer.for_resource(
            self.client, watch.resource, watch.namespace, label_selector=watch.label_selector,
            field_selector=watch.field_selector, shard_selector=watch.shard_selector,
            metadata_only=watch.metadata_only, use_watch_list=self.use_watch_list)

    async def release(self, watch: Watch, handler: Any) -> None:
        key = watch.collection
        informer = self.informers.get(key)
        if informer is None:
            return
        informer.remove_handler(handler)
        self._users[key] -= 1
        if self._users[key] <= 0:
            del self._users[key], self.informers[key]
            await informer.stop()

    async def start(self, sync_timeout: float = 60.0) -> None:
        for controller in self.controllers:
            prepare = getattr(controller, "prepare", None)
            if prepare is not None:
                await prepare(self.contexts[controller.name])
        for controller in self.controllers:
            ctx = self.contexts[controller.name]
            for watch in controller.watches:
                ctx.add_watch(watch)
        await self._wait_synced(sync_timeout)
        for controller in self.controllers:
            ctx = self.contexts[controller.name]
            for n in range(max(1, self.workers_for.get(controller.name, self.workers))):
                self._spawn(self._worker(controller, ctx.queue), f"{controller.name} worker {n}")
            background = getattr(controller, "run", None)
            if background is not None:
                self._spawn(background(ctx), f"{controller.name} background")
        log.info("controllers running: %s (%d informers)", ", ".join(c.name for c in self.controllers),
                 len(self.informers))

    async def _wait_synced(self, timeout: float) -> None:
        """Wait for every cache to fill; past `timeout`, start anyway (as kube's GC does) and say
        which are missing — a resource we may not list must not stop the others."""
        pending = [i.wait_synced() for i in self.informers.values()]
        try:
            await asyncio.wait_for(asyncio.gather(*pending), timeout)
        except asyncio.TimeoutError:
            missing = sorted(str(i.resource) for i in self.informers.values() if not i.has_synced)
            log.warning("starting before these caches filled (after %.0fs): %s", timeout, ", ".join(missing))

    def problems(self) -> list[str]:
        """What keeps the running controllers from working: ended workers, unfilled caches."""
        ended = [f"{task.get_name()} ended" for task in self._tasks if task.done()]
        return ended + sorted(f"cache of {i.resource} not filled" for i in self.informers.values() if not i.has_synced)

    def _spawn(self, coro: Any, name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        task.add_done_callback(_log_crash)
        self._tasks.append(task)

    async def stop(self) -> None:
        for ctx in self.contexts.values():
            ctx.queue.shut_down()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        for informer in list(self.informers.values()):
            await informer.stop()
        self.informers.clear()
        self._users.clear()
        for close in self.closing:
            await close()
        self.closing.clear()

    async def _worker(self, controller: Controller, queue: WorkQueue) -> None:
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            try:
                result = await controller.reconcile(key)
            except Terminal as exc:
                log.error("%s: %s: %s (not retried)", controller.name, key, exc)
                queue.forget(key)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - anything else is retried with backoff
                failures = queue.backoff.failures(key)
                level = logging.WARNING if failures < 5 else logging.ERROR
                log.log(level, "%s: %s failed (%d retries so far): %s", controller.name, key, failures, exc,
                        exc_info=failures == 0 and not _is_expected(exc))
                queue.add_rate_limited(key)
            else:
                queue.forget(key)
                if result is not None and result.requeue_after is not None:
                    queue.add_after(key, result.requeue_after)
            finally:
                queue.done(key)


def _is_expected(exc: BaseException) -> bool:
    # API errors are the server speaking; a traceback only helps for our own bugs.
    return isinstance(exc, APIError)


def _log_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("%s stopped: %r", task.get_name(), task.exception(), exc_info=task.exception())

