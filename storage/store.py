"""`Store`: the one object the rest of haru uses for keys, revisions, lists, writes and watches.

The API server opens one `Store` per process (it is the only writer of its LMDB environment) and
calls it from its event loop. Reads run synchronously in short LMDB read transactions
(`storage/listing.py`); writes go through group commit (`storage/group_commit.py`, then the writer
thread in `storage/writer.py`); watches are cursors over the hub's ring (`storage/watch_hub.py`);
old history is compacted by `storage/retention.py` and `storage/compaction.py`. The env must not be
used across `fork()`: open the store in the process that uses it.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import weakref
from collections.abc import Callable
from typing import Any

import lmdb
import msgspec

from storage import errors, layout, listing, log_reader, writes
from storage.group_commit import GroupCommitter
from storage.records import ListResult, Record
from storage.retention import Retention, enforce
from storage.watch_hub import WatchHub, Watcher
from storage.writer import Writer

# Directories with an open Store in this process: LMDB forbids opening one env twice per process.
_open_paths: set[str] = set()
# Stores of this process; a child created by fork() must not touch them (LMDB's rule).
_live_stores: weakref.WeakSet[Store] = weakref.WeakSet()


def _forbid_use_after_fork() -> None:
    for store in list(_live_stores):
        store._forked = True
    _open_paths.clear()


os.register_at_fork(after_in_child=_forbid_use_after_fork)

TryUpdate = Callable[[dict[str, Any] | None], "dict[str, Any] | Awaitable[dict[str, Any]]"]


class Store:
    """A durable key → JSON object store with etcd v3 revision semantics, on LMDB.

    Objects passed to writes are plain dicts. The store does not modify them: it encodes a copy
    whose `metadata.resourceVersion` is the write's revision (see `writes.stamp`). Don't mutate a
    dict while its write is pending, since it is encoded on the writer thread. A write whose
    coroutine is cancelled before its batch starts is dropped; once its batch is in flight it
    commits anyway (as with etcd).
    """

    def __init__(
        self,
        env: lmdb.Environment,
        dbs: layout.Databases,
        committer: GroupCommitter,
        hub: WatchHub,
        retention_task: asyncio.Task[None],
        path: str,
    ) -> None:
        self._path = path
        self._forked = False
        self._env = env
        self._dbs = dbs
        self._committer = committer
        self._hub = hub
        self._retention_task = retention_task
        self._closed = False

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        map_size: int = 32 << 30,
        retention: Retention = Retention(),  # noqa: B008 (frozen, so one shared default is safe)
        max_map_size: int | None = None,
        watch_ring_capacity: int = 4096,
        reserve_bytes: int | None = None,
    ) -> Store:
        """Open (or create) the store in directory `path`.

        `map_size` is virtual address space, not disk: the map doubles on `MapFullError`, up to
        `max_map_size` (None: no limit but the disk). `watch_ring_capacity` events are kept in
        memory for watchers; older ones are read back from the log. One directory may be open
        only once per process, and not across fork(). `reserve_bytes` overrides the disk reserve
        `layout.reserve_space` makes up front (None: `HARU_STORE_RESERVE_BYTES` or 64 MiB; 0: none).
        """
        if max_map_size is not None and max_map_size < map_size:
            raise ValueError("max_map_size is smaller than map_size")
        if watch_ring_capacity < 1:
            raise ValueError("watch_ring_capacity must be at least 1")
        os.makedirs(path, exist_ok=True)
        real_path = os.path.realpath(path)
        if real_path in _open_paths:
            raise RuntimeError(f"a Store is already open on {real_path} in this process")
        # sync=True and metasync=True: a commit returns after fdatasync, so an acknowledged write
        # survives power loss. Never writemap: a full disk would kill the process with SIGBUS.
        env = lmdb.open(
            os.fspath(path), map_size=map_size, max_dbs=4, sync=True, metasync=True,
            writemap=False, map_async=False,
        )
        try:
            dbs = layout.open_databases(env)
            revision, compacted = _check_consistency(env, dbs)
            layout.reserve_space(env, dbs, map_size, reserve_bytes)
        except BaseException:
            env.close()
            raise
        _open_paths.add(real_path)
        hub = WatchHub(
            revision,
            watch_ring_capacity,
            lambda after, up_to, prefix, most: log_reader.read_events(
                env, dbs, after, up_to, prefix, most
            ),
        )
        committer = GroupCommitter(
            env, Writer(env, dbs), revision=revision, compacted=compacted,
            retention=retention, max_map_size=max_map_size, publish=hub.publish,
        )
        task = asyncio.create_task(
            enforce(retention, committer), name="haru-storage-retention"
        )
        store = cls(env, dbs, committer, hub, task, real_path)
        _live_stores.add(store)
        return store

    # -- state ----------------------------------------------------------------------------------

    @property
    def revision(self) -> int:
        """The last committed (durable, published) revision; 0 for an empty store."""
        return self._committer.revision

    @property
    def compacted_revision(self) -> int:
        """Every event at or below this revision has been removed from the log."""
        return self._committer.compacted

    @property
    def commit_count(self) -> int:
        """How many LMDB write transactions have committed since open (group commit shows here)."""
        return self._committer.commits

    def last_change(self, prefix: str) -> int:
        """The last published revision that wrote under `prefix` (see `WatchHub.last_change`): a cheap
        way for a cache of a few keys to tell that unrelated writes did not touch them."""
        return self._hub.last_change(prefix)

    @property
    def watch_ring_size(self) -> int:
        return self._hub.ring_size

    # -- reads ----------------------------------------------------------------------------------

    def get(self, key: str) -> Record | None:
        self._check_open()
        return listing.get(self._env, self._dbs, key)

    def list(
        self,
        prefix: str,
        *,
        revision: int | None = None,
        limit: int = 0,
        continue_token: str | None = None,
    ) -> ListResult:
        """Keys under `prefix` in key order, as of `revision` (None: now); see `storage/listing.py`."""
        self._check_open()
        return listing.list_prefix(self._env, self._dbs, prefix, revision, limit, continue_token)

    def get_many_at(self, keys: list[str], prefix: str, revision: int) -> list[Record]:
        """The records of `keys` (under `prefix`) as they were at `revision`, in order; Expired
        once compaction has passed it. Several calls at one revision make one consistent read."""
        self._check_open()
        return listing.get_many_at(self._env, self._dbs, keys, prefix, revision)

    def uids(self, prefix: str) -> tuple[int, list[tuple[str, str]]]:
        """(revision, (key, metadata.uid) under `prefix`), read from the uid index in one snapshot."""
        self._check_open()
        return listing.uids(self._env, self._dbs, prefix)

    def list_where(self, prefix: str, keep: Callable[[str, int, memoryview], bool]) -> ListResult:
        """The current state under `prefix`, only what `keep(key, revision, value view)` accepts;
        one snapshot, values copied only for kept entries (see `storage/listing.py`)."""
        self._check_open()
        return listing.list_where(self._env, self._dbs, prefix, keep)

    def count(self, prefix: str) -> int:
        self._check_open()
        return listing.count(self._env, self._dbs, prefix)

    # -- writes ---------------------------------------------------------------------------------

    async def create(self, key: str, obj: dict[str, Any]) -> Record:
        return await self._write("create", key, obj)

    async def update(
        self, key: str, obj: dict[str, Any], *, expected_revision: int | None = None
    ) -> Record:
        return await self._write("update", key, obj, expected_revision=expected_revision)

    async def delete(
        self, key: str, *, expected_revision: int | None = None, expected_uid: str | None = None
    ) -> Record:
        """Delete `key`; returns the object as it was, with resourceVersion = the deletion revision."""
        return await self._write(
            "delete", key, None, expected_revision=expected_revision, expected_uid=expected_uid
        )

    async def guaranteed_update(
        self, key: str, try_update: TryUpdate, *, allow_create: bool = False
    ) -> Record:
        """Read, apply `try_update`, write with the read revision as precondition; retry on conflict.

        `try_update` gets a private decoded copy of the current object (None if the key does not
        exist and `allow_create` is set) and returns the new object; it may be async. Its
        exceptions propagate. A result that encodes like the current object (resourceVersion
        aside) writes nothing and returns the current record.
        """
        while True:
            current = self.get(key)
            if current is None and not allow_create:
                raise errors.KeyNotFound(key, self.revision)
            obj = None if current is None else msgspec.json.decode(current.value)
            result = try_update(obj)
            new = await result if inspect.isawaitable(result) else result
            if not isinstance(new, dict):
                raise TypeError(f"try_update returned {type(new).__name__}, not a dict")
            if current is None:
                try:
                    return await self.create(key, new)
                except errors.KeyExists:
                    continue
            if writes.same_object(new, current):
                return current
            try:
                return await self.update(key, new, expected_revision=current.revision)
            except (errors.Conflict, errors.KeyNotFound):
                continue

    async def _write(
        self,
        op: writes.Operation,
        key: str,
        obj: dict[str, Any] | None,
        *,
        expected_revision: int | None = None,
        expected_uid: str | None = None,
    ) -> Record:
        self._check_open()
        future: asyncio.Future[Record] = asyncio.get_running_loop().create_future()
        request = writes.WriteRequest(op, key, obj, future, expected_revision, expected_uid)
        self._committer.submit(request)
        return await future

    # -- watch and compaction -------------------------------------------------------------------

    def watch(self, prefix: str, from_revision: int | None = None) -> Watcher:
        """Every event after `from_revision` (None: now) under `prefix`: replay, then live."""
        self._check_open()
        if from_revision is None:
            from_revision = self.revision
        if from_revision < 0:
            raise ValueError("from_revision must be >= 0")
        if from_revision < self.compacted_revision:
            raise errors.TooOldResourceVersion(from_revision, self.compacted_revision)
        return self._hub.watch(prefix, from_revision)

    async def compact(self, revision: int) -> None:
        """Remove log entries at or below `revision`, in small steps between writes."""
        self._check_open()
        await self._committer.compact(revision)

    async def close(self) -> None:
        """Let queued writes commit, close every watcher (WatchClosed), close the environment."""
        if self._closed:
            return
        self._closed = True
        if self._forked:
            return  # the parent owns the environment and the writer thread
        self._retention_task.cancel()
        try:
            await self._retention_task
        except asyncio.CancelledError:
            pass
        await self._committer.close()
        self._hub.close()
        self._env.close()
        _open_paths.discard(self._path)

    def _check_open(self) -> None:
        if self._closed:
            raise errors.StorageUnavailable("the store is closed")
        if self._forked:
            raise errors.StorageUnavailable(
                "this store was opened before fork(); open a new one in this process"
            )


def _check_consistency(env: lmdb.Environment, dbs: layout.Databases) -> tuple[int, int]:
    """Read the revision and compaction mark, and check that the log agrees with them."""
    with env.begin() as txn:
        revision = layout.read_meta(txn, dbs, layout.META_REVISION)
        compacted = layout.read_meta(txn, dbs, layout.META_COMPACTED)
        cursor = txn.cursor(db=dbs.log)
        if cursor.last():
            last = layout.unpack_u64(cursor.key())
            cursor.first()
            first = layout.unpack_u64(cursor.key())
            if last != revision or first != compacted + 1:
                raise RuntimeError(
                    f"store is inconsistent: log holds {first}..{last}, "
                    f"meta says revision {revision}, compacted {compacted}"
                )
        elif compacted != revision:
            raise RuntimeError(
                f"store is inconsistent: empty log, revision {revision}, compacted {compacted}"
            )
    return revision, compacted
