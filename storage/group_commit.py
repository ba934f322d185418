"""Group commit: gathers concurrent writes into batches and commits each on the writer thread.

`Store` calls `submit` for every create/update/delete. While one batch is being committed, new
requests wait in `_pending`; when the commit returns, they all leave together as the next batch.
A batch goes to the single writer thread (`storage/writer.py`), and back on the event loop each
request is acknowledged only then, after the fsync'ed commit; after the acks the batch's events go
to the watch hub (`storage/watch_hub.py`). The next batch leaves on the loop's next turn, once the
acknowledged writers have run, so what they write next rides with it. Map growth on
`MapFullError`, disk-full failures and the scheduling of compaction steps
(`storage/compaction.py`) are handled here as well.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable

import lmdb

from storage import compaction, errors
from storage.compaction import CompactionPlan
from storage.records import Event
from storage.retention import Retention, plan_for
from storage.writer import BatchOutcome, Writer
from storage.writes import WriteRequest

log = logging.getLogger(__name__)

# A bound on one transaction's work (~15 µs per write), so that acks keep flowing under load.
MAX_BATCH = 512


class GroupCommitter:
    """Owns the pending queue, the in-flight batch, and the committed revision and compaction mark."""

    def __init__(
        self,
        env: lmdb.Environment,
        writer: Writer,
        *,
        revision: int,
        compacted: int,
        retention: Retention,
        max_map_size: int | None,
        publish: Callable[[list[Event]], None],
    ) -> None:
        self.revision = revision  # last durable revision
        self.compacted = compacted  # log entries at or below this are gone
        self.commits = 0  # transactions committed (for tests and the benchmark)
        self._env = env
        self._writer = writer
        self._retention = retention
        self._max_map_size = max_map_size
        self._publish = publish
        self._loop = asyncio.get_running_loop()
        self._thread = concurrent.futures.ThreadPoolExecutor(1, "haru-storage-writer")
        self._pending: list[WriteRequest] = []
        self._batch_limit = MAX_BATCH  # halved while LMDB reports a transaction too big
        self._in_flight = False
        self._start_due = False  # a start is queued on the loop behind the last batch's acks
        self._closing = False
        self._compact_target = compacted
        self._compaction_wanted = False
        self._compaction_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._idle_waiters: list[asyncio.Future[None]] = []

    # -- requests -------------------------------------------------------------------------------

    def submit(self, request: WriteRequest) -> None:
        """Queue a write; `request.future` resolves once its commit is durable (or fails)."""
        if self._closing:
            raise errors.StorageUnavailable("the store is closed")
        self._pending.append(request)
        if not self._in_flight and not self._start_due:
            self._start()

    async def compact(self, target: int) -> None:
        """Compact the log up to `target` in bounded steps; return when the mark has reached it."""
        if target <= self.compacted:
            return
        if target > self.revision:
            raise ValueError(f"cannot compact to {target}: the store is at revision {self.revision}")
        self._compact_target = max(self._compact_target, target)
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._compaction_waiters.append((target, waiter))
        self.nudge_compaction()
        await waiter

    def nudge_compaction(self) -> None:
        """Run standalone compaction steps (between batches) until nothing more is due."""
        self._compaction_wanted = True
        if not self._in_flight and not self._start_due and not self._closing:
            self._start()

    async def close(self) -> None:
        """Refuse new writes, let the queued ones commit, stop the writer thread."""
        self._closing = True
        while self._in_flight or self._pending:
            idle: asyncio.Future[None] = self._loop.create_future()
            self._idle_waiters.append(idle)
            await idle
        for _, waiter in self._compaction_waiters:
            if not waiter.done():
                waiter.set_exception(errors.StorageUnavailable("the store is closed"))
        self._compaction_waiters.clear()
        self._thread.shutdown(wait=True)

    # -- the commit cycle -----------------------------------------------------------------------

    def _start(self) -> None:
        pending = [request for request in self._pending if not request.future.cancelled()]
        limit = self._batch_limit
        batch, self._pending = pending[:limit], pending[limit:]
        if batch:
            size = compaction.PIGGYBACK_ENTRIES + len(batch)
        elif self._compaction_wanted and not self._closing:
            size = compaction.STANDALONE_ENTRIES
        else:
            self._wake_idle_waiters()
            return
        plan = plan_for(self._retention, self.revision, self._compact_target, size)
        self._in_flight = True
        done = self._thread.submit(self._writer.commit, batch, self.revision, plan)
        done.add_done_callback(lambda finished: self._back_on_loop(batch, plan, finished))

    def _back_on_loop(
        self,
        batch: list[WriteRequest],
        plan: CompactionPlan,
        finished: concurrent.futures.Future[BatchOutcome],
    ) -> None:
        try:
            self._loop.call_soon_threadsafe(self._finish, batch, plan, finished.result())
        except RuntimeError:  # the loop is gone; nobody is left to acknowledge
            pass

    def _finish(self, batch: list[WriteRequest], plan: CompactionPlan, outcome: BatchOutcome) -> None:
        self._in_flight = False
        if outcome.failure is None:
            self._committed(batch, plan, outcome)
            if batch:
                return  # _committed queued the next start behind the acks
        elif isinstance(outcome.failure, lmdb.MapFullError) and self._grow_map():
            self._pending[:0] = batch  # retry the same batch, in the same order, first
        elif isinstance(outcome.failure, lmdb.TxnFullError) and len(batch) > 1:
            # Too many dirty pages for one transaction (big objects): retry in smaller batches.
            self._batch_limit = max(1, len(batch) // 2)
            self._pending[:0] = batch
        else:
            self._failed(batch, outcome.failure)
        self._start()

    def _committed(self, batch: list[WriteRequest], plan: CompactionPlan, outcome: BatchOutcome) -> None:
        if batch:
            self._batch_limit = MAX_BATCH
        if outcome.revision != self.revision or outcome.compacted is not None:
            self.commits += 1
        self.revision = outcome.revision
        if outcome.compacted is not None:
            self.compacted = outcome.compacted
        if not batch:
            self._compaction_wanted = outcome.compaction_left
            if outcome.compacted is None:
                self._fail_stuck_compaction_waiters(plan.target)
        elif outcome.compaction_left:
            self._compaction_wanted = True
        for request, result in zip(batch, outcome.results):
            if request.future.done():  # the caller gave up waiting; the write stands
                continue
            if isinstance(result, BaseException):
                request.future.set_exception(result)
            else:
                request.future.set_result(result)
        self._resolve_compaction_waiters()
        if batch:
            # The next batch starts on the loop's next turn, after the tasks just acknowledged
            # (their wake-ups are queued above) and before the watchers woken below: a writer that
            # writes again right after its ack joins that batch instead of waiting a whole commit
            # for the one after. Starting at once split 64 writers into two alternating batches of
            # 32, halving what each fsync carried (bench.storage, 64 in flight).
            self._start_due = True
            self._loop.call_soon(self._start_when_due)
        if outcome.events:
            self._publish(outcome.events)

    def _start_when_due(self) -> None:
        self._start_due = False
        if not self._in_flight:
            self._start()

    def _failed(self, batch: list[WriteRequest], failure: BaseException) -> None:
        """The transaction was aborted: every write of the batch fails, the revision stays."""
        if isinstance(failure, lmdb.MapFullError):
            reason = f"the store's map is full and may not grow past {self._max_map_size} bytes"
        elif isinstance(failure, lmdb.Error):
            reason = f"the disk refused the commit: {failure}"
        else:
            log.error("storage commit failed unexpectedly", exc_info=failure)
            reason = f"the commit failed: {failure!r}"
        for request in batch:
            if not request.future.done():
                unavailable = errors.StorageUnavailable(reason)
                unavailable.__cause__ = failure
                request.future.set_exception(unavailable)
        if not batch:
            # A compaction step failed (e.g. disk full): stop trying until the next nudge.
            self._compaction_wanted = False
            for _, waiter in self._compaction_waiters:
                if not waiter.done():
                    waiter.set_exception(errors.StorageUnavailable(reason))
            self._compaction_waiters.clear()

    def _grow_map(self) -> bool:
        """Double the map (no transaction is open: the writer is idle, reads are synchronous)."""
        size = self._env.info()["map_size"]
        grown = size * 2
        if self._max_map_size is not None:
            grown = min(grown, self._max_map_size)
        if grown <= size:
            return False
        log.info("storage map full at %d bytes; growing to %d", size, grown)
        self._env.set_mapsize(grown)
        return True

    def _resolve_compaction_waiters(self) -> None:
        if not self._compaction_waiters:
            return
        still_waiting = []
        for target, waiter in self._compaction_waiters:
            if waiter.done():
                continue
            if target <= self.compacted:
                waiter.set_result(None)
            else:
                still_waiting.append((target, waiter))
                self._compaction_wanted = True
        self._compaction_waiters = still_waiting

    def _fail_stuck_compaction_waiters(self, step_target: int) -> None:
        # A standalone step planned for `step_target` found nothing to delete, yet a compact() that
        # this step should have served still waits: the log is not gap-free below the target. That
        # breaks an invariant; say so instead of looping. (Waiters for a higher target registered
        # after the step was planned are served by the next step.)
        still_waiting = []
        for target, waiter in self._compaction_waiters:
            if waiter.done():
                continue
            if target <= step_target:
                waiter.set_exception(
                    RuntimeError(f"compaction to {target} found no log entries past {self.compacted}")
                )
            else:
                still_waiting.append((target, waiter))
        self._compaction_waiters = still_waiting

    def _wake_idle_waiters(self) -> None:
        waiters, self._idle_waiters = self._idle_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
