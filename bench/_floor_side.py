"""The least a store in CPython on py-lmdb can do: the third side of every `bench.storage` row.

Beside haru and etcd, `bench.storage` runs this bare side through the same harness, so each row
shows how far any store written like haru could go on this machine, and two targets are ratios
to it:
- `put`: asyncio futures handed to one committer thread, which writes each batch in one
  sync=True transaction with two puts per write: the object, and an event-log entry holding key
  and value (what a watch must replay). No revision in the object, no uid index, no
  preconditions: haru does all of these on top.
- `get`, `list_records`: one read transaction; a get copies one value, a list copies each value
  out with its key into a small tuple. No revision header, no paging, no snapshot check.
- `watch_into`: live only. Each commit appends its revisions to one list per watched prefix and
  resolves one future that the prefix's watchers share; a watcher takes what is new in one slice.
  No replay, no ring trimming, no event objects.
- `compact`: the oldest log entries deleted in the committer's transactions, 16 per write batch or
  32 alone (haru's step sizes), with the mark put beside them.
Used by `bench._storage_rows` and `bench._compaction_case`; it never decides a verdict itself.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

import lmdb
import msgspec

from bench._watch_case import DeliveryLog

PIGGYBACK_STEP, STANDALONE_STEP = 16, 32  # log entries deleted per transaction, as haru does


class FloorRecord(NamedTuple):
    key: bytes
    value: bytes


class _Commit(NamedTuple):
    keys: list[str]
    revisions: list[int]
    futures: list[asyncio.Future[int]]
    compacted: int | None


class _Prefix:
    """What the watchers of one prefix share: the revisions under it, the next commit's future."""

    __slots__ = ("revisions", "next_commit")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.revisions: list[int] = []
        self.next_commit: asyncio.Future[None] = loop.create_future()


class FloorSide:
    name = "floor"

    def __init__(self, path: Path, loop: asyncio.AbstractEventLoop):
        self._env = lmdb.open(str(path), map_size=1 << 32, max_dbs=3, sync=True, metasync=True)
        self._objects = self._env.open_db(b"objects")
        self._log = self._env.open_db(b"log")
        self._meta = self._env.open_db(b"meta")
        self._loop = loop
        self._pending: list[tuple[str, bytes, asyncio.Future[int]]] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closing = False
        self._thread_revision = 0  # the committer thread's; the loop reads `revision`
        self._thread_compacted = 0
        self._compact_target = 0  # set on the loop under _lock, read by the committer
        self.revision = 0
        self.compacted_revision = 0
        self.commit_count = 0  # write transactions committed, as `Store.commit_count` counts them
        self._compaction_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._prefixes: dict[str, _Prefix] = {}
        self._thread = threading.Thread(target=self._commit_batches, name="floor-committer", daemon=True)
        self._thread.start()

    @classmethod
    async def open(cls, path: Path) -> FloorSide:
        return cls(path, asyncio.get_running_loop())

    async def put(self, key: str, obj: dict[str, Any]) -> int:
        """Durable once the batch holding it is committed; returns its position in the log."""
        future: asyncio.Future[int] = self._loop.create_future()
        with self._lock:
            self._pending.append((key, msgspec.json.encode(obj), future))
        self._wake.set()
        return await future

    async def compact(self, target: int) -> None:
        """Delete log entries at or below `target`; return once the mark has reached it."""
        if target <= self.compacted_revision:
            return
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._compaction_waiters.append((target, waiter))
        with self._lock:
            self._compact_target = max(self._compact_target, target)
        self._wake.set()
        await waiter

    def _commit_batches(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            with self._lock:
                batch, self._pending = self._pending, []
                target = self._compact_target
            compacting = target > self._thread_compacted
            if not batch and not compacting:
                if self._closing:
                    return
                continue
            revisions = []
            compacted = None
            with self._env.begin(write=True) as txn:
                for key, value, _ in batch:
                    self._thread_revision += 1
                    key_bytes = key.encode()
                    txn.put(key_bytes, value, db=self._objects)
                    txn.put(self._thread_revision.to_bytes(8, "big"), key_bytes + b"\0" + value,
                            db=self._log, append=True)
                    revisions.append(self._thread_revision)
                if compacting:
                    compacted = self._compact_step(txn, target, PIGGYBACK_STEP if batch else STANDALONE_STEP)
            if compacted is not None and compacted < target:
                self._wake.set()  # more to delete: the next turn takes another step
            self._loop.call_soon_threadsafe(
                self._settle, _Commit([key for key, _, _ in batch], revisions, [f for _, _, f in batch], compacted)
            )

    def _compact_step(self, txn: lmdb.Transaction, target: int, most: int) -> int:
        cursor = txn.cursor(db=self._log)
        mark = self._thread_compacted
        if cursor.first():
            for _ in range(most):
                revision = int.from_bytes(cursor.key(), "big")
                if revision > target:
                    break
                cursor.delete()
                mark = revision
                if not cursor.key():
                    break
        if mark == self._thread_compacted:  # nothing left at or below the target
            mark = target
        txn.put(b"compacted", mark.to_bytes(8, "big"), db=self._meta)
        self._thread_compacted = mark
        return mark

    def _settle(self, commit: _Commit) -> None:
        for future, revision in zip(commit.futures, commit.revisions):
            if not future.done():
                future.set_result(revision)
        self.commit_count += 1
        if commit.revisions:
            self.revision = commit.revisions[-1]
            for prefix, shared in self._prefixes.items():
                touched = [r for k, r in zip(commit.keys, commit.revisions) if k.startswith(prefix)]
                if touched:
                    shared.revisions += touched
                    done, shared.next_commit = shared.next_commit, self._loop.create_future()
                    if not done.done():
                        done.set_result(None)
        if commit.compacted is not None:
            self.compacted_revision = commit.compacted
            waiting = []
            for target, waiter in self._compaction_waiters:
                if target <= commit.compacted:
                    waiter.set_result(None)
                else:
                    waiting.append((target, waiter))
            self._compaction_waiters = waiting

    def get(self, key: str) -> bytes | None:
        with self._env.begin(db=self._objects) as txn:
            return txn.get(key.encode())

    async def list_records(self, prefix: str) -> list[FloorRecord]:
        start = prefix.encode()
        build = tuple.__new__
        records: list[FloorRecord] = []
        with self._env.begin(db=self._objects) as txn:
            cursor = txn.cursor()
            if not cursor.set_range(start):
                return records
            for key, value in cursor:
                if not key.startswith(start):
                    break
                records.append(build(FloorRecord, (key, value)))
        return records

    async def watch_into(self, prefix: str, start_revision: int, log: DeliveryLog) -> None:
        """Live events under `prefix` after `start_revision`, until cancelled (see the docstring)."""
        shared = self._prefixes.get(prefix)
        if shared is None:
            shared = self._prefixes[prefix] = _Prefix(self._loop)
        perf = time.perf_counter
        position = len(shared.revisions)
        while True:
            if position == len(shared.revisions):
                try:
                    await shared.next_commit
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if task is not None and task.cancelling():
                        raise
                    # Another watcher was cancelled and took the shared future with it.
                    if shared.next_commit.cancelled():
                        shared.next_commit = self._loop.create_future()
                continue
            batch = shared.revisions[position:]
            position += len(batch)
            log.record(perf(), [r for r in batch if r > start_revision])

    async def close(self) -> None:
        self._closing = True
        self._wake.set()
        await asyncio.to_thread(self._thread.join)
        self._env.close()
