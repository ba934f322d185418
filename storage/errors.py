"""Errors raised by the store. They speak keys and revisions, never HTTP.

The API server turns each of them into a Kubernetes `Status` in one place
(`apiserver/errors.py`); nothing else in haru should catch them to build a response.

    StorageError
    ├── KeyNotFound            the key does not exist (get/update/delete)
    ├── KeyExists              create of a key that exists
    ├── Conflict               a precondition (resourceVersion or UID) did not hold
    ├── Expired                a list/continue at a revision older than the compaction mark
    ├── RevisionTooLarge       a list at a revision the store has not reached yet
    ├── TooOldResourceVersion  a watch from a revision older than the compaction mark
    ├── InvalidContinue        a continue token that is not one of ours
    ├── WatchClosed            a watcher fell too far behind and was closed
    ├── RequestTooLarge        an object over etcd's request limit (1.5 MiB); nothing was written
    └── StorageUnavailable     the disk refused a commit; nothing of the batch was written
"""

from __future__ import annotations


class StorageError(Exception):
    """Base class of every error the store raises."""


class KeyNotFound(StorageError):
    def __init__(self, key: str, revision: int = 0) -> None:
        super().__init__(f"key not found: {key}")
        self.key = key
        self.revision = revision


class KeyExists(StorageError):
    def __init__(self, key: str, revision: int = 0) -> None:
        super().__init__(f"key exists: {key}")
        self.key = key
        self.revision = revision


class Conflict(StorageError):
    """A write's precondition failed.

    `field` says which precondition ("resourceVersion" or "uid"), `expected` what the caller
    asked for, `actual` what the stored object has.
    """

    def __init__(self, key: str, field: str, expected: object, actual: object) -> None:
        super().__init__(f"precondition failed on {key}: {field} expected {expected!r}, found {actual!r}")
        self.key = key
        self.field = field
        self.expected = expected
        self.actual = actual


class Expired(StorageError):
    """A list at (or a continue token from) a revision that compaction has removed."""

    def __init__(self, revision: int, compacted: int) -> None:
        super().__init__(f"revision {revision} has been compacted (compacted up to {compacted})")
        self.revision = revision
        self.compacted = compacted


class RevisionTooLarge(StorageError):
    """A list at a revision newer than the store's current one (etcd's "future revision")."""

    def __init__(self, revision: int, current: int) -> None:
        super().__init__(f"revision {revision} is newer than the current revision {current}")
        self.revision = revision
        self.current = current


class TooOldResourceVersion(StorageError):
    """A watch from a revision that compaction has removed."""

    def __init__(self, revision: int, compacted: int) -> None:
        super().__init__(f"too old resource version: {revision} ({compacted})")
        self.revision = revision
        self.compacted = compacted


class InvalidContinue(StorageError):
    def __init__(self, token: str, reason: str) -> None:
        super().__init__(f"invalid continue token: {reason}")
        self.token = token
        self.reason = reason


class WatchClosed(StorageError):
    """The watcher was closed by the store (it could not keep up, or the store closed)."""


class RequestTooLarge(StorageError):
    """A write whose key and stored bytes exceed `writes.MAX_REQUEST_BYTES` (etcd's default
    `--max-request-bytes`); etcd refuses such a put before it reaches the log."""

    def __init__(self, key: str, size: int, limit: int) -> None:
        super().__init__(f"request is too large: {key} would be {size} bytes (limit {limit})")
        self.key = key
        self.size = size
        self.limit = limit


class StorageUnavailable(StorageError):
    """A commit failed at the disk (full, I/O error). The whole batch was rolled back."""
