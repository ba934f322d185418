"""One write (create, update, delete) and how it is applied inside the writer's transaction.

`Store` builds a `WriteRequest` per call and hands it to `storage/group_commit.py`; the writer
thread (`storage/writer.py`) calls `apply_write` for each request of a batch, in order, inside one
LMDB write transaction. `apply_write` checks the request's preconditions against what the
transaction sees (committed state plus earlier writes of the same batch), stamps
`metadata.resourceVersion`, and only then puts the object and its log entry, so a request that
fails leaves nothing behind in the transaction.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import lmdb
import msgspec

from storage import errors, layout
from storage.records import Event, EventType, Record

Operation = Literal["create", "update", "delete"]

_encode = msgspec.json.encode
_decode = msgspec.json.decode

# etcd's default --max-request-bytes (1.5 MiB). kube-apiserver stores through etcd, so an object
# whose key and bytes (after admission, as stored) are over it is refused by etcd's put. We count
# the stored JSON; upstream counts protobuf for built-in kinds, a little more compact.
MAX_REQUEST_BYTES = 1536 * 1024


class WriteRequest:
    """A write waiting for (or riding in) a batch; `future` resolves to its `Record` once durable."""

    __slots__ = ("op", "key", "key_bytes", "obj", "expected_revision", "expected_uid", "future")

    def __init__(
        self,
        op: Operation,
        key: str,
        obj: dict[str, Any] | None,
        future: asyncio.Future[Record],
        expected_revision: int | None = None,
        expected_uid: str | None = None,
    ) -> None:
        self.op = op
        self.key = key
        self.key_bytes = layout.encode_key(key)
        self.obj = obj
        self.expected_revision = expected_revision
        self.expected_uid = expected_uid
        self.future = future


def stamp(obj: dict[str, Any], revision: int) -> bytes:
    """The JSON bytes of `obj` with `metadata.resourceVersion` = `str(revision)`.

    The caller's dict is not modified: the top level and `metadata` are shallow-copied, and the
    copy keeps the key order (an existing resourceVersion is replaced where it stands, a new one goes
    where Go's ObjectMeta has it: before generation, creationTimestamp, labels...), so an
    object decoded from stored bytes and stamped again with its own revision encodes to exactly
    the stored bytes. `guaranteed_update`'s no-op check relies on that.
    """
    if not isinstance(obj, dict):
        raise TypeError(f"a stored object must be a dict, not {type(obj).__name__}")
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise TypeError("metadata must be a dict")
    stamped = dict(obj)
    if "resourceVersion" in metadata or not metadata.keys() & _AFTER_RESOURCE_VERSION:
        stamped["metadata"] = {**metadata, "resourceVersion": str(revision)}
    else:
        stamped["metadata"] = _with_revision(metadata, str(revision))
    return _encode(stamped)


# ObjectMeta's fields after resourceVersion in Go's struct order: a new resourceVersion goes before
# the first of them, where kube-apiserver's encoder writes it.
_AFTER_RESOURCE_VERSION = frozenset({
    "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields",
})


def _with_revision(metadata: dict[str, Any], revision: str) -> dict[str, Any]:
    placed: dict[str, Any] = {}
    for key, value in metadata.items():
        if key in _AFTER_RESOURCE_VERSION and "resourceVersion" not in placed:
            placed["resourceVersion"] = revision
        placed[key] = value
    return placed


def same_object(obj: dict[str, Any], current: Record) -> bool:
    """Whether `obj` encodes exactly like the stored `current`, resourceVersion aside."""
    if stamp(obj, current.revision) == current.value:
        return True
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and "resourceVersion" not in metadata:
        # stamp() placed resourceVersion itself, so the key order may differ from
        # the stored bytes even if nothing else does: compare both without it.
        stored = _decode(current.value)
        stored["metadata"].pop("resourceVersion", None)
        return bool(_encode(stored) == _encode(obj))
    return False


def apply_write(
    txn: lmdb.Transaction, dbs: layout.Databases, request: WriteRequest, revision: int, now: float
) -> tuple[Record, Event]:
    """Apply `request` as revision `revision`; raise a `StorageError` (nothing written) if it fails."""
    raw = txn.get(request.key_bytes, db=dbs.objects)
    current = None if raw is None else layout.unpack_object(request.key, raw)
    if request.op == "create":
        return _create(txn, dbs, request, current, revision, now)
    if current is None:
        raise errors.KeyNotFound(request.key, revision - 1)
    if request.expected_revision is not None and request.expected_revision != current.revision:
        raise errors.Conflict(
            request.key, "resourceVersion", request.expected_revision, current.revision
        )
    if request.op == "update":
        return _update(txn, dbs, request, current, revision, now)
    return _delete(txn, dbs, request, current, revision, now)


def _create(
    txn: lmdb.Transaction,
    dbs: layout.Databases,
    request: WriteRequest,
    current: Record | None,
    revision: int,
    now: float,
) -> tuple[Record, Event]:
    if current is not None:
        raise errors.KeyExists(request.key, current.revision)
    assert request.obj is not None
    value = _within_limit(request, stamp(request.obj, revision))
    _put(txn, dbs, request.key_bytes, value, revision, revision)
    _keep_uid(txn, dbs, request.key_bytes, request.obj)
    _log(txn, dbs, "ADDED", request.key_bytes, value, None, revision, 0, revision, now)
    return Record(request.key, value, revision, revision), Event(
        "ADDED", request.key, revision, value, None
    )


def _update(
    txn: lmdb.Transaction,
    dbs: layout.Databases,
    request: WriteRequest,
    current: Record,
    revision: int,
    now: float,
) -> tuple[Record, Event]:
    assert request.obj is not None
    value = _within_limit(request, stamp(request.obj, revision))
    _put(txn, dbs, request.key_bytes, value, revision, current.create_revision)
    _keep_uid(txn, dbs, request.key_bytes, request.obj)
    return _replaced(txn, dbs, "MODIFIED", request, current, value, revision, now)


def _within_limit(request: WriteRequest, value: bytes) -> bytes:
    size = len(request.key_bytes) + len(value)
    if size > MAX_REQUEST_BYTES:
        raise errors.RequestTooLarge(request.key, size, MAX_REQUEST_BYTES)
    return value


def _delete(
    txn: lmdb.Transaction,
    dbs: layout.Databases,
    request: WriteRequest,
    current: Record,
    revision: int,
    now: float,
) -> tuple[Record, Event]:
    obj = _decode(current.value)
    if request.expected_uid is not None:
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        actual_uid = metadata.get("uid") if isinstance(metadata, dict) else None
        if actual_uid != request.expected_uid:
            raise errors.Conflict(request.key, "uid", request.expected_uid, actual_uid)
    # kube-apiserver hands out the deleted object with resourceVersion = the deletion revision.
    value = stamp(obj, revision)
    txn.delete(request.key_bytes, db=dbs.objects)
    txn.delete(request.key_bytes, db=dbs.uids)
    return _replaced(txn, dbs, "DELETED", request, current, value, revision, now)


def _replaced(
    txn: lmdb.Transaction,
    dbs: layout.Databases,
    kind: EventType,
    request: WriteRequest,
    current: Record,
    value: bytes,
    revision: int,
    now: float,
) -> tuple[Record, Event]:
    """Log a write that replaced `current` (MODIFIED or DELETED) and return what it produced."""
    _log(
        txn, dbs, kind, request.key_bytes, value, current.value,
        current.create_revision, current.revision, revision, now,
    )
    return Record(request.key, value, revision, current.create_revision), Event(
        kind, request.key, revision, value, current.value
    )


def _put(
    txn: lmdb.Transaction,
    dbs: layout.Databases,
    key_bytes: bytes,
    value: bytes,
    revision: int,
    create_revision: int,
) -> None:
    txn.put(key_bytes, layout.pack_object(value, revision, create_revision), db=dbs.objects)


def _keep_uid(txn: lmdb.Transaction, dbs: layout.Databases, key_bytes: bytes, obj: dict[str, Any]) -> None:
    """Keep the `uids` database in step with the object just written (see `layout`)."""
    metadata = obj.get("metadata")
    uid = metadata.get("uid") if isinstance(metadata, dict) else None
    txn.put(key_bytes, uid.encode() if isinstance(uid, str) else b"", db=dbs.uids)


def _log(
    txn: lmdb.Transaction,
    dbs: layout.Databases,
    event_type: Literal["ADDED", "MODIFIED", "DELETED"],
    key_bytes: bytes,
    value: bytes,
    prev_value: bytes | None,
    create_revision: int,
    prev_revision: int,
    revision: int,
    now: float,
) -> None:
    entry = layout.pack_log_entry(
        event_type, key_bytes, value, prev_value, create_revision, prev_revision, now
    )
    # append=True: revisions only grow, so the entry always goes at the end of the log. LMDB
    # reports a key that is not past the end by returning False; that would be a revision reused.
    if not txn.put(layout.revision_key(revision), entry, db=dbs.log, append=True):
        raise RuntimeError(f"event log already holds revision {revision} or a later one")
