"""The on-disk layout: which named LMDB databases exist and how their entries are encoded.

Four named databases live in one LMDB environment:
- `objects`: key (UTF-8) → 16-byte header (revision, create_revision) + the object's JSON bytes;
- `log`:     8-byte big-endian revision → one event (see `pack_log_entry`), so cursor order is
             revision order;
- `meta`:    b"revision" (last committed revision), b"compacted" (the compaction mark), the format;
- `uids`:    key → the object's `metadata.uid` (UTF-8; empty when it has none), one entry per
             object: the API server decides uid shards from these few bytes, not from every object.
Pure functions only; `storage/writes.py` and `storage/compaction.py` write these entries inside the
writer's transaction, `storage/listing.py` and `storage/log_reader.py` read them.
"""

from __future__ import annotations

import os
import struct
from typing import NamedTuple

import lmdb
import msgspec

from storage.records import EventType, Record

OBJECTS_DB = b"objects"
LOG_DB = b"log"
META_DB = b"meta"
UIDS_DB = b"uids"

META_REVISION = b"revision"
META_COMPACTED = b"compacted"
META_FORMAT = b"format"
META_UIDS_INDEXED = b"uids-indexed"  # present once `uids` holds every object's uid (older stores lack it)
FORMAT_VERSION = 1

# LMDB's compiled-in limit (env.max_key_size()); checked before a write reaches the txn.
MAX_KEY_BYTES = 511

# What LMDB hands back: bytes, or memoryviews in a transaction opened with buffers=True.
Buffer = bytes | memoryview

_U64 = struct.Struct(">Q")
_OBJECT_HEADER = struct.Struct(">QQ")
# type, commit time (unix seconds), create_revision, prev_revision, key len, value len, prev len
_LOG_HEADER = struct.Struct(">BdQQIII")
_NO_PREV = 0xFFFFFFFF

_TYPE_CODES: dict[str, int] = {"ADDED": 1, "MODIFIED": 2, "DELETED": 3}
_TYPE_NAMES: dict[int, EventType] = {1: "ADDED", 2: "MODIFIED", 3: "DELETED"}


class Databases(NamedTuple):
    """The named database handles of one environment."""

    objects: lmdb._Database
    log: lmdb._Database
    meta: lmdb._Database
    uids: lmdb._Database


def open_databases(env: lmdb.Environment) -> Databases:
    """Open (creating if needed) the named databases; call once, right after `lmdb.open`."""
    with env.begin(write=True) as txn:
        dbs = Databases(
            objects=env.open_db(OBJECTS_DB, txn=txn),
            log=env.open_db(LOG_DB, txn=txn),
            meta=env.open_db(META_DB, txn=txn),
            uids=env.open_db(UIDS_DB, txn=txn),
        )
        found = txn.get(META_FORMAT, db=dbs.meta)
        if found is None:
            txn.put(META_FORMAT, pack_u64(FORMAT_VERSION), db=dbs.meta)
        elif unpack_u64(found) != FORMAT_VERSION:
            raise RuntimeError(f"store format {unpack_u64(found)} is not {FORMAT_VERSION}")
        if txn.get(META_UIDS_INDEXED, db=dbs.meta) is None:
            # A store written before the uid index existed: fill it once, in this transaction.
            for key, raw in txn.cursor(db=dbs.objects):
                txn.put(key, uid_of_json(raw[_OBJECT_HEADER.size:]).encode(), db=dbs.uids)
            txn.put(META_UIDS_INDEXED, pack_u64(1), db=dbs.meta)
    return dbs


class _Meta(msgspec.Struct):
    uid: str = ""


class _Uid(msgspec.Struct):
    metadata: _Meta | None = None


_uid_decoder = msgspec.json.Decoder(_Uid)  # reads metadata.uid only; the rest is skipped


def uid_of_json(value: Buffer) -> str:
    """metadata.uid of a stored object's JSON, "" if it has none (or is not a JSON object)."""
    try:
        meta = _uid_decoder.decode(value).metadata
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""
    return meta.uid if meta is not None else ""


def pack_u64(number: int) -> bytes:
    return _U64.pack(number)


def unpack_u64(raw: Buffer) -> int:
    number: int = _U64.unpack(raw)[0]
    return number


def revision_key(revision: int) -> bytes:
    """The log key of a revision: big-endian so that byte order is numeric order."""
    return _U64.pack(revision)


def encode_key(key: str) -> bytes:
    """A store key as LMDB key bytes; rejects what LMDB cannot hold."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"a store key must be a non-empty str, not {key!r}")
    raw = key.encode()
    if len(raw) > MAX_KEY_BYTES:
        raise ValueError(f"key is {len(raw)} bytes; LMDB allows at most {MAX_KEY_BYTES}")
    return raw


def pack_object(value: bytes, revision: int, create_revision: int) -> bytes:
    return _OBJECT_HEADER.pack(revision, create_revision) + value


def unpack_object(key: str, raw: Buffer) -> Record:
    revision, create_revision = _OBJECT_HEADER.unpack_from(raw)
    return Record(key, bytes(raw[_OBJECT_HEADER.size :]), revision, create_revision)


def read_meta(txn: lmdb.Transaction, dbs: Databases, name: bytes) -> int:
    raw = txn.get(name, db=dbs.meta)
    return 0 if raw is None else unpack_u64(raw)


class LogEntry(NamedTuple):
    """One decoded event-log entry.

    `create_revision` is the create revision of the object the event is about; `prev_revision` is
    the revision of `prev_value` (0 when there is none). Together they let a list at an old revision
    rebuild the `Record` that the event replaced.
    """

    type: EventType
    key: str
    revision: int
    value: bytes
    prev_value: bytes | None
    create_revision: int
    prev_revision: int
    commit_time: float


def pack_log_entry(
    event_type: EventType,
    key_bytes: bytes,
    value: bytes,
    prev_value: bytes | None,
    create_revision: int,
    prev_revision: int,
    commit_time: float,
) -> bytes:
    prev_len = _NO_PREV if prev_value is None else len(prev_value)
    header = _LOG_HEADER.pack(
        _TYPE_CODES[event_type], commit_time, create_revision, prev_revision,
        len(key_bytes), len(value), prev_len,
    )
    return b"".join((header, key_bytes, value, prev_value or b""))


def unpack_log_entry(revision: int, raw: bytes) -> LogEntry:
    code, commit_time, create_revision, prev_revision, key_len, value_len, prev_len = (
        _LOG_HEADER.unpack_from(raw)
    )
    start = _LOG_HEADER.size
    key = raw[start : start + key_len].decode()
    start += key_len
    value = raw[start : start + value_len]
    start += value_len
    prev_value = None if prev_len == _NO_PREV else raw[start : start + prev_len]
    return LogEntry(
        _TYPE_NAMES[code], key, revision, value, prev_value, create_revision, prev_revision,
        commit_time,
    )


def log_entry_key_and_time(raw: Buffer) -> tuple[str, float]:
    """Just the key and commit time of a packed entry, without copying the values."""
    _, commit_time, _, _, key_len, _, _ = _LOG_HEADER.unpack_from(raw)
    start = _LOG_HEADER.size
    return bytes(raw[start : start + key_len]).decode(), commit_time


RESERVE_KEY = b"space-reserve"
RESERVE_BYTES = 64 << 20
RESERVE_PIECE = 1 << 20  # 256 pages: a free-list record that fits in one page
# Overrides RESERVE_BYTES. The test suite sets it to one piece: its few hundred short-lived stores
# would otherwise take 64 MiB of disk each (15 GB a run).
RESERVE_ENV = "HARU_STORE_RESERVE_BYTES"


def _reserve_bytes(requested: int | None) -> int:
    if requested is not None:
        return max(0, requested)
    try:
        return max(0, int(os.environ.get(RESERVE_ENV, RESERVE_BYTES)))
    except ValueError:
        return RESERVE_BYTES


def reserve_space(env: lmdb.Environment, dbs: Databases, map_size: int, requested: int | None = None) -> None:
    """Grow data.mdb once, up front, and hand the pages back to LMDB's free list.

    A commit that extends the file makes fdatasync flush the file's size too; commits that reuse
    free pages do not. Measured here: 3,100 durable single puts/s on a growing file, 4,400/s on a
    file with free pages to reuse. The pages go back in 1 MiB pieces, one transaction each: LMDB
    keeps the pages one transaction freed as one free-list record, and a record longer than a page
    (one 64 MiB piece would list 16k page numbers) sends later commits searching the free list for
    contiguous pages (see `compaction.py`). Best effort: on a disk (or map) too small for the
    reserve, nothing is reserved and nothing else changes. `requested` sets the size (0: none);
    without it, `HARU_STORE_RESERVE_BYTES` does, else RESERVE_BYTES.
    """
    size = min(_reserve_bytes(requested), map_size // 4)
    if size < RESERVE_PIECE:
        return
    try:
        if os.path.getsize(os.path.join(env.path(), "data.mdb")) >= size:
            return
        pieces = [RESERVE_KEY + b"-%04d" % i for i in range(size // RESERVE_PIECE)]
        with env.begin(write=True) as txn:
            for key in pieces:
                txn.put(key, bytes(RESERVE_PIECE - 64), db=dbs.meta)
        for key in pieces:
            with env.begin(write=True) as txn:
                txn.delete(key, db=dbs.meta)
    except (lmdb.Error, OSError):
        return
