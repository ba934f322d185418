"""`WorkQueue`: keys waiting to be reconciled — client-go's rate-limited workqueue on asyncio.

A key is queued at most once however often it is added; a key added while a worker holds it is
queued again when that worker calls `done`, so one key is never processed twice at the same time
and no change is lost. `add_after` delays a key (the earliest request wins); `add_rate_limited`
delays it by a per-key exponential backoff that `forget` resets. Used by `controllers/manager.py`
(informer handlers add keys, workers `get` and `done` them).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable


class ShutDown(Exception):
    """`get` on a queue that was shut down."""


class ExponentialBackoff:
    """Per-key delay: base × 2^(failures so far), capped; `forget` starts the key over."""

    def __init__(self, base: float = 0.05, cap: float = 60.0) -> None:
        self.base, self.cap = base, cap
        self._failures: dict[Hashable, int] = {}

    def when(self, key: Hashable) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        return min(self.base * float(2 ** failures), self.cap)

    def failures(self, key: Hashable) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)


class WorkQueue:
    def __init__(self, backoff: ExponentialBackoff | None = None) -> None:
        self.backoff = backoff or ExponentialBackoff()
        self._queue: deque[Hashable] = deque()
        self._dirty: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._delayed: dict[Hashable, tuple[float, asyncio.TimerHandle]] = {}
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: Hashable) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return  # `done` queues it again
        self._queue.append(key)
        self._wake_one()

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def add_after(self, key: Hashable, delay: float) -> None:
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        ready_at = loop.time() + delay
        pending = self._delayed.get(key)
        if pending is not None:
            if pending[0] <= ready_at:
                return
            pending[1].cancel()
        self._delayed[key] = (ready_at, loop.call_at(ready_at, self._fire, key))

    def _fire(self, key: Hashable) -> None:
        self._delayed.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: Hashable) -> None:
        self.add_after(key, self.backoff.when(key))

    def forget(self, key: Hashable) -> None:
        self.backoff.forget(key)

    async def get(self) -> Hashable:
        while not self._queue:
            if self._shutting_down:
                raise ShutDown()
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled() and self._queue:
                    self._wake_one()  # we were handed a key we will not take: pass the wakeup on
                raise
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: Hashable) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._wake_one()

    def shut_down(self) -> None:
        self._shutting_down = True
        for _, handle in self._delayed.values():
            handle.cancel()
        self._delayed.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
