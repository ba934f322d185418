"""Reads: get one key, count a prefix, and list a prefix as a consistent snapshot, paginated.

`Store.get`, `Store.count` and `Store.list` call these synchronously on the event loop; each is one
short LMDB read transaction, which is a snapshot. A list at the current revision walks the objects
database in key order. A list at an older revision R (asked for, or carried by a continue token)
walks the same keys and overlays, for every key written after R, the state it had at R: the first
log entry after R for that key holds it (its prev value and revisions, see `storage/layout.py`).
Continue tokens are made and parsed in `storage/continue_tokens.py`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import cast

import lmdb

from storage import continue_tokens, errors, layout
from storage.records import ListResult, Record

# `ListResult.remaining` is counted only up to this many keys (~0.2 µs each, so at most ~2 ms per
# page); past it, counting is no longer cheap and remaining is None.
REMAINING_COUNT_LIMIT = 10_000

_OBJECT_HEADER = struct.Struct(">QQ")  # as in layout.pack_object

# An item of a key-ordered walk: the raw objects-db entry (header + JSON) or an already-built Record.
_Item = tuple[bytes, "bytes | Record"]


def get(env: lmdb.Environment, dbs: layout.Databases, key: str) -> Record | None:
    with env.begin(db=dbs.objects) as txn:
        raw = txn.get(layout.encode_key(key))
    return None if raw is None else layout.unpack_object(key, raw)


def get_many_at(env: lmdb.Environment, dbs: layout.Databases, keys: list[str], prefix: str,
                at: int) -> list[Record]:
    """The records of `keys` (all under `prefix`) as they were at revision `at`, in the order given.

    For reading a known set of keys in several steps that must all show one revision (a streamed
    List): keys written since `at` are read back from the event log's previous values.
    """
    prefix_bytes = prefix.encode()
    records: list[Record] = []
    with env.begin(db=dbs.objects) as txn:
        current = layout.read_meta(txn, dbs, layout.META_REVISION)
        compacted = layout.read_meta(txn, dbs, layout.META_COMPACTED)
        if at > current:
            raise errors.RevisionTooLarge(at, current)
        if at < compacted:
            raise errors.Expired(at, compacted)
        then = dict(_state_at(txn, dbs, at, current, prefix_bytes, prefix_bytes)) if at < current else {}
        for key in keys:
            encoded = layout.encode_key(key)
            if encoded in then:
                old = then[encoded]
                if old is not None:
                    records.append(old)
                continue
            raw = txn.get(encoded, db=dbs.objects)
            if raw is not None:
                records.append(layout.unpack_object(key, raw))
    return records


def uids(env: lmdb.Environment, dbs: layout.Databases, prefix: str) -> tuple[int, list[tuple[str, str]]]:
    """(revision, (key, metadata.uid or "") of every object under `prefix`): one snapshot of the
    small `uids` database, not of the objects."""
    prefix_bytes = prefix.encode()
    found: list[tuple[str, str]] = []
    with env.begin(db=dbs.uids) as txn:
        at = layout.read_meta(txn, dbs, layout.META_REVISION)
        cursor = txn.cursor(db=dbs.uids)
        if cursor.set_range(prefix_bytes):
            for key, uid in cast(Iterator[tuple[bytes, bytes]], cursor):
                if not key.startswith(prefix_bytes):
                    break
                found.append((key.decode(), uid.decode()))
    return at, found


def count(env: lmdb.Environment, dbs: layout.Databases, prefix: str) -> int:
    prefix_bytes = prefix.encode()
    with env.begin(db=dbs.objects) as txn:
        cursor = txn.cursor()
        if not cursor.set_range(prefix_bytes):
            return 0
        n = 0
        for key in cursor.iternext(keys=True, values=False):
            if not key.startswith(prefix_bytes):
                break
            n += 1
        return n


def list_where(
    env: lmdb.Environment, dbs: layout.Databases, prefix: str, keep: Callable[[str, int, memoryview], bool]
) -> ListResult:
    """The current state under `prefix`, only the entries `keep(key, revision, value)` accepts.

    One read transaction, so it is a snapshot. Values are handed to `keep` as views into the map and
    copied only for the entries kept: a caller that can decide from the key and revision (a shard
    hash memo, a set of keys from an index) reads a fraction of the bytes a full list copies.
    """
    prefix_bytes = prefix.encode()
    records: list[Record] = []
    header = _OBJECT_HEADER.size
    unpack_header = _OBJECT_HEADER.unpack_from
    build = tuple.__new__
    with env.begin(buffers=True) as txn:
        at = layout.read_meta(txn, dbs, layout.META_REVISION)
        cursor = txn.cursor(db=dbs.objects)
        if cursor.set_range(prefix_bytes):
            for raw_key, raw in cast(Iterator[tuple[memoryview, memoryview]], cursor):
                key_bytes = bytes(raw_key)
                if not key_bytes.startswith(prefix_bytes):
                    break
                key = key_bytes.decode()
                revision, create_revision = unpack_header(raw)
                value = raw[header:]
                if keep(key, revision, value):
                    records.append(build(Record, (key, bytes(value), revision, create_revision)))
    return ListResult(records, at, None, None)


def list_prefix(
    env: lmdb.Environment,
    dbs: layout.Databases,
    prefix: str,
    revision: int | None,
    limit: int,
    continue_token: str | None,
) -> ListResult:
    if limit < 0:
        raise ValueError("limit must be >= 0")
    prefix_bytes = prefix.encode()
    start = prefix_bytes
    if continue_token is not None:
        point = continue_tokens.decode(continue_token)
        if revision is not None and revision != point.revision:
            raise errors.InvalidContinue(
                continue_token, f"the token is for revision {point.revision}, not {revision}"
            )
        revision = point.revision
        # The next page starts strictly after the last key returned.
        start = prefix_bytes + point.last_key.encode() + b"\x00"
    with env.begin() as txn:
        current = layout.read_meta(txn, dbs, layout.META_REVISION)
        compacted = layout.read_meta(txn, dbs, layout.META_COMPACTED)
        at = current if revision is None else revision
        if at > current:
            if continue_token is not None:
                raise errors.InvalidContinue(continue_token, f"revision {at} is in the future")
            raise errors.RevisionTooLarge(at, current)
        if at < compacted:
            raise errors.Expired(at, compacted)
        if at == current:
            records, remaining = _page_now(txn, dbs, start, prefix_bytes, limit)
        else:
            overlay = _state_at(txn, dbs, at, current, prefix_bytes, start)
            records, remaining = _page_of(_overlaid(_objects_from(txn, dbs, start, prefix_bytes), overlay), limit)
    token = None
    if remaining != 0:
        token = continue_tokens.encode(at, records[-1].key[len(prefix) :])
    return ListResult(records, at, token, remaining)


def _page_now(
    txn: lmdb.Transaction, dbs: layout.Databases, start: bytes, prefix: bytes, limit: int
) -> tuple[list[Record], int | None]:
    """The current state's page: the hot path of every list, so one tight loop.

    Every name a turn needs is a local, the end of the prefix is one bytes comparison with the
    first key past it, and "no limit" is a length no page reaches: each costs a lookup or a call
    per record otherwise (~7% of a 10k-record list, bench.storage's list row).
    """
    records: list[Record] = []
    cursor = txn.cursor(db=dbs.objects)
    if not cursor.set_range(start):
        return records, 0
    end = _past_prefix(prefix)
    stop = limit if limit else -1
    unpack_header = _OBJECT_HEADER.unpack_from
    header = _OBJECT_HEADER.size
    append = records.append
    build = tuple.__new__  # Record(...) without NamedTuple's Python-level __new__
    for key, raw in cast(Iterator[tuple[bytes, bytes]], cursor):
        if key >= end:
            return records, 0
        if len(records) == stop:
            return records, _count_keys(txn, dbs, key, prefix)
        revision, create_revision = unpack_header(raw)
        append(build(Record, (key.decode(), raw[header:], revision, create_revision)))
    return records, 0


def _past_prefix(prefix: bytes) -> bytes:
    """The least byte string above every key that starts with `prefix` (keys are at most
    MAX_KEY_BYTES long, so MAX_KEY_BYTES + 1 0xff bytes is above them all)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return b"\xff" * (layout.MAX_KEY_BYTES + 1)
    return stripped[:-1] + bytes((stripped[-1] + 1,))


def _count_keys(txn: lmdb.Transaction, dbs: layout.Databases, first: bytes, prefix: bytes) -> int | None:
    """How many keys under `prefix` from `first` on; None past REMAINING_COUNT_LIMIT."""
    cursor = txn.cursor(db=dbs.objects)
    cursor.set_range(first)
    n = 0
    for key in cast(Iterator[bytes], cursor.iternext(keys=True, values=False)):
        if not key.startswith(prefix):
            break
        n += 1
        if n > REMAINING_COUNT_LIMIT:
            return None
    return n


def _page_of(items: Iterator[_Item], limit: int) -> tuple[list[Record], int | None]:
    records: list[Record] = []
    for key, item in items:
        if len(records) == limit and limit:
            return records, _count_rest(items, 1)
        records.append(_record(key, item))
    return records, 0


def _objects_from(
    txn: lmdb.Transaction, dbs: layout.Databases, start: bytes, prefix: bytes
) -> Iterator[_Item]:
    cursor = txn.cursor(db=dbs.objects)
    if not cursor.set_range(start):
        return
    for key, raw in cast(Iterator[tuple[bytes, bytes]], cursor):
        if not key.startswith(prefix):
            return
        yield key, raw


def _state_at(
    txn: lmdb.Transaction,
    dbs: layout.Databases,
    at: int,
    current: int,
    prefix: bytes,
    start: bytes,
) -> list[tuple[bytes, Record | None]]:
    """For each key under `prefix` (from `start`) written after `at`: its Record at `at`, or None."""
    state: dict[bytes, Record | None] = {}
    cursor = txn.cursor(db=dbs.log)
    if not cursor.set_range(layout.revision_key(at + 1)):
        return []
    for raw_key, raw in cursor:
        revision = layout.unpack_u64(raw_key)
        if revision > current:
            break
        key, _ = layout.log_entry_key_and_time(raw)
        key_bytes = key.encode()
        if key_bytes in state or not key_bytes.startswith(prefix) or key_bytes < start:
            continue
        entry = layout.unpack_log_entry(revision, bytes(raw))
        if entry.type == "ADDED":
            state[key_bytes] = None  # did not exist at `at`
        else:
            assert entry.prev_value is not None
            state[key_bytes] = Record(
                key, entry.prev_value, entry.prev_revision, entry.create_revision
            )
    return sorted(state.items())


def _overlaid(
    items: Iterator[_Item], overlay: list[tuple[bytes, Record | None]]
) -> Iterator[_Item]:
    """Merge two key-ordered walks; where both have a key, the overlay (state at `at`) wins."""
    i, n = 0, len(overlay)
    for key, item in items:
        while i < n and overlay[i][0] < key:
            old_key, old = overlay[i]
            if old is not None:
                yield old_key, old
            i += 1
        if i < n and overlay[i][0] == key:
            old = overlay[i][1]
            i += 1
            if old is not None:
                yield key, old
            continue
        yield key, item
    for old_key, old in overlay[i:]:
        if old is not None:
            yield old_key, old


def _record(key: bytes, item: bytes | Record) -> Record:
    if isinstance(item, Record):
        return item
    return layout.unpack_object(key.decode(), item)


def _count_rest(items: Iterator[_Item], already: int) -> int | None:
    n = already
    for _ in items:
        n += 1
        if n > REMAINING_COUNT_LIMIT:
            return None
    return n
