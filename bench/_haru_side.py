"""The haru side of the storage benchmark: what each case does against `storage.Store`.

`bench.storage` opens one `HaruSide` per store directory. Writes are `Store.create` of new keys
(durable: acknowledged after the fsync'ed LMDB commit that holds them); reads are the store's own
synchronous `get` and `list`, called in the event loop's thread as the API server will call them.
`bench._compaction_case` drives `compact` and reads the revisions, as it does on the floor.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench._watch_case import DeliveryLog
from storage import Record, Retention, Store


class HaruSide:
    name = "haru"

    def __init__(self, store: Store) -> None:
        self.store = store

    @classmethod
    async def open(cls, path: Path, retention: Retention | None = None) -> HaruSide:
        if retention is None:
            return cls(await Store.open(str(path)))
        return cls(await Store.open(str(path), retention=retention))

    async def close(self) -> None:
        await self.store.close()

    async def put(self, key: str, obj: dict[str, Any]) -> int:
        """Durable create; returns the revision the store assigned."""
        record = await self.store.create(key, obj)
        return int(record.revision)

    @property
    def revision(self) -> int:
        return self.store.revision

    @property
    def compacted_revision(self) -> int:
        return self.store.compacted_revision

    async def compact(self, revision: int) -> None:
        await self.store.compact(revision)

    def get(self, key: str) -> Record | None:
        return self.store.get(key)

    async def list_records(self, prefix: str) -> list[Record]:
        """The whole prefix in one consistent snapshot (limit 0: no paging)."""
        return self.store.list(prefix).records

    async def watch_into(self, prefix: str, start_revision: int, log: DeliveryLog) -> None:
        """Watch events after `start_revision` until cancelled, recording each batch's arrival."""
        perf = time.perf_counter
        record = log.record
        watcher = self.store.watch(prefix, start_revision)
        try:
            while True:
                batch = await watcher.next_batch()
                record(perf(), [event.revision for event in batch])
        finally:
            watcher.close()
