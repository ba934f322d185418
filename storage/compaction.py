"""Compaction of the event log: one bounded step, run inside a writer transaction.

`storage/group_commit.py` decides when a step runs (piggybacked on a write batch, or alone when no
writes wait) and passes a `CompactionPlan`; `storage/writer.py` calls `compact_step` inside the
transaction. A step deletes at most `plan.max_entries` of the oldest log entries, so no transaction
grows long enough to stall the writes queued behind it, and moves the compaction mark in the same
transaction. `storage/retention.py` turns a `Retention` policy into plans.
"""

from __future__ import annotations

from typing import NamedTuple

import lmdb

from storage import layout

# Deleting a log entry costs ~0.5 µs (measured: 256 deletes + commit 0.30 ms, a bare commit 0.17 ms).
# Steps stay small for LMDB's sake: the pages a transaction frees become one free-list record, and
# the more pages are freed ahead of their reuse, the more every later allocation and commit spends
# in LMDB's free-list code (mdb_page_alloc + mdb_midl_xmerge: 43% of an API server's CPU while a
# 100k-event log that had aged out was being compacted). Measured on that store, API creates:
# steps of 64 + 1 per write (192 alone) 1,184/s, 8 + 1 (16) 1,874/s, 16 + 1 (32) 1,805-2,108/s,
# a store with nothing to compact 2,083/s; bench.storage's rows did not move.
PIGGYBACK_ENTRIES = 16
STANDALONE_ENTRIES = 32


class CompactionPlan(NamedTuple):
    """Delete log entries with revision <= `target`, or committed before `age_cutoff` (unix time).

    `age_cutoff` 0 disables the age rule. Never more than `max_entries` per step.
    """

    target: int
    age_cutoff: float
    max_entries: int


def compact_step(
    txn: lmdb.Transaction, dbs: layout.Databases, plan: CompactionPlan, last_committed: int
) -> tuple[int | None, bool]:
    """Delete the oldest log entries the plan allows; return (new compaction mark or None, more left).

    Only entries at or below `last_committed` (the revision before this transaction's own writes)
    are candidates, so a step never removes an event that is not yet published.
    """
    cursor = txn.cursor(db=dbs.log)
    if not cursor.first():
        return None, False
    new_mark: int | None = None
    deleted = 0
    while True:
        revision = layout.unpack_u64(cursor.key())
        if revision > last_committed or not _allowed(plan, revision, cursor.value()):
            more = False
            break
        if deleted == plan.max_entries:
            more = True
            break
        cursor.delete()  # moves the cursor to the next entry
        new_mark = revision
        deleted += 1
        if not cursor.key():  # deleted the last entry
            more = False
            break
    if new_mark is not None:
        txn.put(layout.META_COMPACTED, layout.pack_u64(new_mark), db=dbs.meta)
    return new_mark, more


def _allowed(plan: CompactionPlan, revision: int, raw: layout.Buffer) -> bool:
    if revision <= plan.target:
        return True
    if plan.age_cutoff <= 0:
        return False
    _, commit_time = layout.log_entry_key_and_time(raw)
    return commit_time < plan.age_cutoff
