"""The least a store in CPython on py-lmdb can do: a third side, for the storage rows' notes.

Issue #2's 64-in-flight and list targets are ratios to etcd. Beside haru and etcd, `bench.storage`
runs this bare side through the same harness (`_write_cases.measure_writes`,
`_read_cases.measure_list`), so the notes show how far any store written like haru could go
on this machine:
- `put`: asyncio futures handed to one committer thread, which writes each batch in one
  sync=True transaction with two puts per write: the object, and an event-log entry holding key
  and value (what a watch must replay). No revision in the object, no uid index, no watchers, no
  preconditions: haru does all of these on top.
- `list_records`: one read transaction and a cursor copying each value out with its key into a
  small tuple. No revision header, no paging, no snapshot check.
Used by `_storage_rows.write_rows` and `list_rows`; its rows are never judged.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, NamedTuple

import lmdb
import msgspec


class FloorRecord(NamedTuple):
    key: bytes
    value: bytes


class FloorSide:
    name = "floor"

    def __init__(self, path: Path, loop: asyncio.AbstractEventLoop):
        self._env = lmdb.open(str(path), map_size=1 << 32, max_dbs=2, sync=True, metasync=True)
        self._objects = self._env.open_db(b"objects")
        self._log = self._env.open_db(b"log")
        self._loop = loop
        self._pending: list[tuple[bytes, bytes, asyncio.Future[int]]] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closing = False
        self._revision = 0
        self._thread = threading.Thread(target=self._commit_batches, name="floor-committer", daemon=True)
        self._thread.start()

    @classmethod
    async def open(cls, path: Path) -> FloorSide:
        return cls(path, asyncio.get_running_loop())

    async def put(self, key: str, obj: dict[str, Any]) -> int:
        """Durable once the batch holding it is committed; returns its position in the log."""
        future: asyncio.Future[int] = self._loop.create_future()
        with self._lock:
            self._pending.append((key.encode(), msgspec.json.encode(obj), future))
        self._wake.set()
        return await future

    def _commit_batches(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            with self._lock:
                batch, self._pending = self._pending, []
            if not batch:
                if self._closing:
                    return
                continue
            revisions = []
            with self._env.begin(write=True) as txn:
                for key, value, _ in batch:
                    self._revision += 1
                    txn.put(key, value, db=self._objects)
                    txn.put(self._revision.to_bytes(8, "big"), key + b"\0" + value, db=self._log)
                    revisions.append(self._revision)
            self._loop.call_soon_threadsafe(_settle, [future for _, _, future in batch], revisions)

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

    async def close(self) -> None:
        self._closing = True
        self._wake.set()
        await asyncio.to_thread(self._thread.join)
        self._env.close()


def _settle(futures: list[asyncio.Future[int]], revisions: list[int]) -> None:
    for future, revision in zip(futures, revisions):
        if not future.done():
            future.set_result(revision)
