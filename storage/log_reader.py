"""Reading committed events back from the LMDB event log.

`storage/watch_hub.py` calls `read_events` for a watcher whose position is older than the in-memory
ring (a watch from an old revision, or a watcher that fell behind); `storage/listing.py` reads the
log itself to rebuild old snapshots. Each call is one short read transaction over a bounded number
of entries, so it never pins old pages for long and never holds more than one chunk in memory.
"""

from __future__ import annotations

import lmdb

from storage import errors, layout
from storage.records import Event


def read_events(
    env: lmdb.Environment,
    dbs: layout.Databases,
    after: int,
    up_to: int,
    prefix: str,
    max_entries: int,
) -> tuple[list[Event], int]:
    """Events with `after` < revision <= `up_to` and a key under `prefix`, at most `max_entries` read.

    Returns (matching events, last revision read). Raises `WatchClosed` when revision `after + 1`
    is no longer in the log because compaction removed it.
    """
    events: list[Event] = []
    last = after
    if up_to <= after:
        return events, last
    with env.begin(db=dbs.log, buffers=True) as txn:
        cursor = txn.cursor()
        if not cursor.set_range(layout.revision_key(after + 1)):
            raise _compacted(txn, dbs, after)
        if layout.unpack_u64(cursor.key()) != after + 1:
            raise _compacted(txn, dbs, after)
        for raw_key, raw in cursor:
            revision = layout.unpack_u64(raw_key)
            if revision > up_to or revision - after > max_entries:
                break
            last = revision
            key, _ = layout.log_entry_key_and_time(raw)
            if key.startswith(prefix):
                entry = layout.unpack_log_entry(revision, bytes(raw))
                events.append(
                    Event(entry.type, entry.key, revision, entry.value, entry.prev_value)
                )
    return events, last


def _compacted(txn: lmdb.Transaction, dbs: layout.Databases, after: int) -> errors.WatchClosed:
    compacted = layout.read_meta(txn, dbs, layout.META_COMPACTED)
    return errors.WatchClosed(
        f"watch position {after} has been compacted (the log starts after {compacted})"
    )
