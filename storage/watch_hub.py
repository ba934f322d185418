"""Watch fan-out: one shared ring of recent events, one "new commit" future, cursors per watcher.

`storage/group_commit.py` calls `WatchHub.publish` after each durable commit; `Store.watch` creates a
`Watcher`. A watcher is a prefix and a cursor (the last revision it has passed), nothing more: it
takes every event after its cursor from the ring in one go, and when there is nothing new it awaits
the commit future of its prefix, which every watcher of that prefix shares. A commit resolves only
the futures of prefixes it touched, so it costs one wake-up per watcher that has something to
read (1,000 watchers over 100 namespaces: ~10 per event, not 1,000), and memory never grows per
watcher. A watcher
whose cursor fell off the ring reads on from the LMDB log (`storage/log_reader.py`) in bounded
chunks; if compaction removed its position, it is closed with `WatchClosed`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from storage import errors
from storage.records import Event

# How many events a behind-the-ring watcher reads from the LMDB log per step.
LOG_CHUNK = 1024


class WatchHub:
    """The ring of recently published events and the future that announces the next commit."""

    def __init__(
        self,
        revision: int,
        capacity: int,
        read_log: Callable[[int, int, str, int], tuple[list[Event], int]],
    ) -> None:
        if capacity < 1:
            raise ValueError("the watch ring needs a capacity of at least 1")
        self.capacity = capacity
        self._ring: list[Event] = []
        self._first = revision + 1  # revision of _ring[0] (revisions in the ring are contiguous)
        self._last = revision  # last published revision
        self._read_log = read_log
        self._loop = asyncio.get_running_loop()
        # prefix → the future of the next commit that touches it, shared by that prefix's watchers
        self._commits: dict[str, asyncio.Future[None]] = {}
        # The prefixes of `_commits` that do not end in "/" (nor are ""): a commit cannot find them
        # among its keys' ancestors (`_ancestors`), so they are matched key by key.
        self._unaligned: set[str] = set()
        # prefix → the last published revision that wrote under it, for prefixes someone asked about
        self._last_change: dict[str, int] = {}
        self._closed = False

    @property
    def ring_size(self) -> int:
        return len(self._ring)

    @property
    def last_published(self) -> int:
        return self._last

    def publish(self, events: list[Event]) -> None:
        """Append one commit's events (contiguous revisions, in order) and wake waiting watchers."""
        if events[0].revision != self._last + 1:
            raise RuntimeError(f"event {events[0].revision} published after {self._last}")
        self._ring.extend(events)
        self._last = events[-1].revision
        # Trim in halves so the list copy is amortized: the ring holds capacity..2×capacity events.
        excess = len(self._ring) - 2 * self.capacity
        if excess > 0:
            drop = excess + self.capacity
            del self._ring[:drop]
            self._first += drop
        self._wake_touched(events)
        for prefix in self._last_change:
            for event in reversed(events):
                if event.key.startswith(prefix):
                    self._last_change[prefix] = event.revision
                    break

    def last_change(self, prefix: str) -> int:
        """The last published revision that wrote a key under `prefix`. A prefix is followed from
        its first question on; until then nothing is known, so that first answer is the current
        revision (a safe "it may have changed")."""
        found = self._last_change.get(prefix)
        if found is None:
            found = self._last_change[prefix] = self._last
        return found

    def _wake_touched(self, events: list[Event]) -> None:
        commits = self._commits
        if not commits:
            return
        # Watch prefixes are "/"-ended (a resource, a namespace, /registry/) or "": each one a commit
        # touches is among its keys' ancestors, so the cost follows the commit's keys, not the
        # number of prefixes being watched (the garbage collector alone watches every resource).
        touched = _ancestors(events)
        if self._unaligned:
            touched.update(p for p in self._unaligned if any(event.key.startswith(p) for event in events))
        for prefix in touched:
            future = commits.pop(prefix, None)
            if future is not None:
                self._unaligned.discard(prefix)
                if not future.done():
                    future.set_result(None)

    def wake(self) -> None:
        """Wake every waiting watcher, whatever it watches (store closing, a watcher closed)."""
        commits, self._commits = self._commits, {}
        self._unaligned.clear()
        for future in commits.values():
            if not future.done():
                future.set_result(None)

    def commit_future(self, prefix: str = "") -> asyncio.Future[None]:
        # A waiter that was cancelled cancels the shared future with it; hand out a fresh one.
        future = self._commits.get(prefix)
        if future is None or future.done():
            future = self._commits[prefix] = self._loop.create_future()
            if prefix and not prefix.endswith("/"):
                self._unaligned.add(prefix)
        return future

    def close(self) -> None:
        self._closed = True
        self.wake()

    def watch(self, prefix: str, from_revision: int) -> Watcher:
        return Watcher(self, prefix, from_revision)


def _ancestors(events: list[Event]) -> set[str]:
    """"" and every "/"-ended prefix of each event's key."""
    found = {""}
    for event in events:
        key = event.key
        end = key.find("/")
        while end >= 0:
            found.add(key[:end + 1])
            end = key.find("/", end + 1)
    return found


class Watcher:
    """An async iterator of the events after `from_revision` under `prefix`, in revision order.

    `next_batch()` returns every available event at once (waiting if there is none). `close()`
    ends it: iteration stops and `next_batch` returns []. If the store closes it (store closed, or
    its position was compacted away), `next_batch` and iteration raise `errors.WatchClosed`.
    """

    __slots__ = (
        "_hub", "prefix", "cursor", "_closed", "_error", "_waiting", "_buffer", "_index",
        "_waiter", "_timer", "_timer_at", "__weakref__",
    )

    def __init__(self, hub: WatchHub, prefix: str, from_revision: int) -> None:
        self._hub = hub
        self.prefix = prefix
        self.cursor = from_revision  # every event at or below this has been handed out
        self._closed = False
        self._error: errors.WatchClosed | None = None
        self._waiting = False
        self._buffer: list[Event] = []
        self._index = 0
        self._waiter: asyncio.Future[None] | None = None  # only while waiting with a timeout
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

    async def next_batch(self, timeout: float | None = None) -> list[Event]:
        """Every event after the cursor that is available now; if none, wait for the next commit.

        Returns [] when the watcher was closed by `close()`, or when `timeout` seconds passed
        without an event (use this rather than `asyncio.wait_for`, which costs a task per call and
        whose timeout wakes every waiting watcher). Raises `WatchClosed` if the store closed it.
        """
        deadline = None if timeout is None else self._hub._loop.time() + timeout
        while True:
            if self._closed:
                return []
            hub = self._hub
            if hub._closed:
                self._fail(errors.WatchClosed("the store was closed"))
            if self._error is not None:
                raise self._error
            while self.cursor < hub._last:
                events = self._take()
                if events:
                    return events
            self._waiting = True
            shared = hub.commit_future(self.prefix)
            try:
                if deadline is None:
                    await self._wait(shared)
                elif not await self._wait_until(shared, deadline):
                    if not shared.done() and not self._closed and self._error is None:
                        # Nothing under our prefix was committed while we waited (it would have
                        # resolved `shared`): skip what others wrote instead of reading it later.
                        self.cursor = max(self.cursor, hub._last)
                    return []
            finally:
                self._waiting = False

    @staticmethod
    async def _wait(shared: asyncio.Future[None]) -> None:
        try:
            await shared
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            # Another watcher's task was cancelled while waiting and took the shared future
            # down with it; that is not our cancellation: return, the caller waits again.

    async def _wait_until(self, shared: asyncio.Future[None], deadline: float) -> bool:
        """Wait for the shared future without ever cancelling it; False once `deadline` passed.

        Callers such as the API server's watch loop pass the same deadline (its next bookmark)
        call after call, so the timer is kept while the deadline stays within a millisecond:
        arming a fresh loop timer per call would cost more than the whole wake-up.
        """
        loop = self._hub._loop
        if loop.time() >= deadline:
            return False
        if self._timer is not None and abs(self._timer_at - deadline) > 0.001:
            self._timer.cancel()
            self._timer = None
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._on_deadline)
            self._timer_at = deadline
        self._waiter = waiter = loop.create_future()
        shared.add_done_callback(self._wake)
        try:
            await waiter
        finally:
            self._waiter = None
            if not shared.done():
                shared.remove_done_callback(self._wake)
        return shared.done()

    def _wake(self, _: object = None) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _on_deadline(self) -> None:
        self._timer = None
        self._wake()

    def _take(self) -> list[Event]:
        hub = self._hub
        if self.cursor + 1 < hub._first:
            try:
                events, last = hub._read_log(
                    self.cursor, min(hub._first - 1, self.cursor + LOG_CHUNK), self.prefix, LOG_CHUNK
                )
            except errors.WatchClosed as closed:
                self._fail(closed)
                raise
            self.cursor = last
            return events
        events = hub._ring[self.cursor + 1 - hub._first :]
        if not events:
            return events
        self.cursor = events[-1].revision
        prefix = self.prefix
        if prefix:
            return [event for event in events if event.key.startswith(prefix)]
        return events

    def _fail(self, error: errors.WatchClosed) -> None:
        if self._error is None:
            self._error = error
            self._buffer = []

    def close(self) -> None:
        """Stop this watcher; a `next_batch` waiting in another task returns []."""
        if self._closed:
            return
        self._closed = True
        self._buffer = []
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._waiter is not None:
            self._wake()
        elif self._waiting:
            self._hub.wake()

    @property
    def closed(self) -> bool:
        return self._closed or self._error is not None

    def __aiter__(self) -> Watcher:
        return self

    async def __anext__(self) -> Event:
        if self._index >= len(self._buffer):
            self._buffer = await self.next_batch()
            self._index = 0
            if not self._buffer:
                raise StopAsyncIteration
        event = self._buffer[self._index]
        self._index += 1
        return event
