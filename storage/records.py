"""The values the store hands out: `Record`, `Event` and `ListResult`.

Callers (the API server, the benchmark, the tests) receive these from `storage.Store`; the store
builds them in `storage/writes.py` (writes and events), `storage/listing.py` (lists) and
`storage/log_reader.py` (replayed events). They are immutable tuples because one `Event` is shared by
every watcher that receives it, and tuples are the cheapest immutable objects to build in CPython.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


class Record(NamedTuple):
    """One stored object: its key, its JSON bytes and its revisions.

    `value` carries `metadata.resourceVersion` equal to `str(revision)`. `revision` is the revision
    of the write that produced these bytes (etcd's mod_revision); `create_revision` is the revision
    that created the key.
    """

    key: str
    value: bytes
    revision: int
    create_revision: int


class Event(NamedTuple):
    """One committed write, as watchers see it.

    ADDED: `value` is the new object, `prev_value` is None.
    MODIFIED: `value` is the new object, `prev_value` the object it replaced.
    DELETED: `value` is the object as it was, with resourceVersion set to the deletion revision
    (what kube-apiserver sends); `prev_value` is the object as it was stored before the delete.
    """

    type: EventType
    key: str
    revision: int
    value: bytes
    prev_value: bytes | None


class ListResult(NamedTuple):
    """One page of a prefix list, a consistent snapshot at `revision`.

    `continue_token` is set when more keys follow; `remaining` counts them (at `revision`).
    """

    records: list[Record]
    revision: int
    continue_token: str | None
    remaining: int | None
