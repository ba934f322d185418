"""The writer thread's side of group commit: one batch → one durable LMDB write transaction.

`storage/group_commit.py` runs `Writer.commit` on its single writer thread, so the event loop never
holds a write transaction. A batch's requests are applied in order (`storage/writes.py`), each
consuming the next revision only if it succeeds; then the revision counter, an optional compaction
step (`storage/compaction.py`) and the commit itself (fsync'ed: the env is opened with sync=True)
happen in the same transaction. Whatever goes wrong at the LMDB level aborts the whole transaction
and comes back in `BatchOutcome.failure`; group_commit decides what to do with it.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import lmdb
import msgspec

from storage import errors, layout
from storage.compaction import CompactionPlan, compact_step
from storage.records import Event, Record
from storage.writes import WriteRequest, apply_write

# Failures that belong to one request: the request fails, the rest of its batch goes on.
_REQUEST_FAILURES = (errors.StorageError, TypeError, ValueError, msgspec.EncodeError, msgspec.DecodeError)


class BatchOutcome(NamedTuple):
    """What one transaction did. If `failure` is set, nothing of it was committed."""

    results: list[Record | BaseException]  # one per request, in order
    events: list[Event]
    revision: int  # last committed revision after this transaction
    compacted: int | None  # new compaction mark, if the step moved it
    compaction_left: bool  # the step stopped at its size limit with more to do
    failure: BaseException | None


class Writer:
    """Owns the LMDB write transactions; called only from the one writer thread."""

    def __init__(self, env: lmdb.Environment, dbs: layout.Databases) -> None:
        self._env = env
        self._dbs = dbs

    def commit(
        self, batch: list[WriteRequest], last_revision: int, plan: CompactionPlan | None
    ) -> BatchOutcome:
        results: list[Record | BaseException] = []
        events: list[Event] = []
        revision = last_revision
        compacted: int | None = None
        more = False
        now = time.time()
        try:
            with self._env.begin(write=True) as txn:
                for request in batch:
                    try:
                        record, event = apply_write(txn, self._dbs, request, revision + 1, now)
                    except _REQUEST_FAILURES as failure:
                        results.append(failure)
                        continue
                    revision += 1
                    results.append(record)
                    events.append(event)
                if revision != last_revision:
                    txn.put(layout.META_REVISION, layout.pack_u64(revision), db=self._dbs.meta)
                if plan is not None:
                    compacted, more = compact_step(txn, self._dbs, plan, last_revision)
                if revision == last_revision and compacted is None:
                    # Nothing to write: abort instead of paying for an fsync.
                    txn.abort()
        except BaseException as failure:  # the transaction was aborted; nothing is on disk
            return BatchOutcome([], [], last_revision, None, False, failure)
        return BatchOutcome(results, events, revision, compacted, more, None)
