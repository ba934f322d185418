"""An in-memory index per resource — labels and uid hashes — so selective LISTs read only what they return.

ARCHITECTURE's "in-memory index per resource": for each resource, key → labels, an inverted index
(label key → value → keys), and key → FNV-1a 64 of metadata.uid (KEP-5866 shard selectors). A LIST
whose label selector has an equality, `in` or exists term starts from the smallest matching key set,
and a uid-sharded LIST from the keys whose hash is in range, instead of reading and decoding every
stored object (100k configmaps, a selector matching nothing: one set lookup; a quarter shard: a
quarter of the values). A resource's labels are indexed from LMDB the first time such a LIST asks
for them (not at start: reading every object would map the whole database into the server's
memory); its uid hashes come from the store's small uid index (`Store.uids`), so the first sharded
LIST reads a few MB, not every object. Both then follow the store through one watch on
`/registry/` started by `runner.start`. It answers only when it has applied every committed
revision. `listing` is the one caller.
"""

from __future__ import annotations

import asyncio
import logging
import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from apiserver import labels, sharding
from storage import Store, errors as storage_errors

log = logging.getLogger("haru.apiserver.label_index")

_INDEXABLE = (labels.EQUALS, labels.DOUBLE_EQUALS, labels.IN, labels.EXISTS)


class _Labels(msgspec.Struct):
    labels: dict[str, str] | None = None
    uid: str = ""


class _Object(msgspec.Struct):
    # Decoding only metadata.labels: an object's other fields are skipped by msgspec's scanner.
    metadata: _Labels | None = None


_decoder = msgspec.json.Decoder(_Object)


def _read(value: bytes) -> tuple[dict[str, str], str]:
    """(labels, uid) of a stored object; only those two fields are decoded."""
    try:
        meta = _decoder.decode(value).metadata
    except (msgspec.DecodeError, msgspec.ValidationError):
        return {}, ""
    return ((meta.labels or {}), meta.uid) if meta else ({}, "")


def _parent(key: str) -> str:
    """A key without its name: `/registry/<group>/<resource>/<namespace>/`, or the resource prefix
    of a cluster-scoped key (names never hold a `/`)."""
    return key[:key.rindex("/") + 1]


def _resource_prefix(key: str) -> str:
    """`/registry/<group>/<resource>/` of a key or of a narrower prefix (the registry's key layout)."""
    parts = key.split("/", 4)
    return "/".join(parts[:4]) + "/"


class LabelIndex:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.revision = 0
        self._labels: dict[str, dict[str, str]] = {}
        # label key → label value → parent (`_parent`) → storage keys having it. Kept apart by
        # resource and namespace so that a LIST reads only the keys under its own prefix: the sets
        # of one label span every resource (and every namespace) that uses it.
        self._inverted: dict[str, dict[str, dict[str, set[str]]]] = defaultdict(lambda: defaultdict(dict))
        self._task: asyncio.Task[None] | None = None
        self._built: set[str] = set()  # resource prefixes whose labels are indexed so far
        # resource prefix → key → FNV-1a 64 of metadata.uid, for shard selectors (KEP-5866)
        self._uid_hashes: dict[str, dict[str, int]] = defaultdict(dict)
        self._hashed: set[str] = set()  # resource prefixes whose uid hashes are kept so far

    # -- building and following -----------------------------------------------------------
    def _build(self, prefix: str) -> None:
        """Index one resource's labels as stored now (the caller checked the index is caught up)."""
        token = None
        while True:
            page = self.store.list(prefix, limit=10_000, continue_token=token)
            for record in page.records:
                found, _ = _read(record.value)
                self._add_labels(record.key, found)
            token = page.continue_token
            if not token:
                break
        self._built.add(prefix)

    def _hash_uids(self, prefix: str) -> None:
        """Hash one resource's uids as stored now, from the store's small uid index (not the objects)."""
        _, found = self.store.uids(prefix)
        hashes = self._uid_hashes[prefix]
        for key, uid in found:
            hashes[key] = sharding.hash_text(uid)
        self._hashed.add(prefix)

    @property
    def running(self) -> bool:
        """Whether it is still following the store (`/readyz`'s checks ask)."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        self.revision = self.store.revision
        self._task = asyncio.create_task(self._follow(), name="label-index")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    async def _follow(self) -> None:
        while True:
            try:
                watcher = self.store.watch("/registry/", self.revision)
            except storage_errors.TooOldResourceVersion:
                log.warning("label index fell behind compaction; starting over")
                self._reset()
                self.revision = self.store.revision
                continue
            try:
                while True:
                    for event in await watcher.next_batch():
                        resource = _resource_prefix(event.key)
                        if resource in self._built or resource in self._hashed:
                            self._remove(event.key)
                            if event.type != "DELETED":
                                self._add(event.key, *_read(event.value))
                        self.revision = event.revision
            except storage_errors.WatchClosed:
                continue  # resume from the last applied revision
            finally:
                watcher.close()

    def _reset(self) -> None:
        self._labels.clear()
        self._inverted.clear()
        self._uid_hashes.clear()
        self._built.clear()
        self._hashed.clear()

    def _add(self, key: str, found: dict[str, str], uid: str) -> None:
        resource = _resource_prefix(key)
        if resource in self._hashed:  # an object without a uid hashes as "", as upstream's
            self._uid_hashes[resource][key] = sharding.hash_text(uid)
        if resource in self._built:
            self._add_labels(key, found)

    def _add_labels(self, key: str, found: dict[str, str]) -> None:
        if not found:
            return
        self._labels[key] = found
        parent = _parent(key)
        for name, value in found.items():
            by_parent = self._inverted[name][value]
            keys = by_parent.get(parent)
            if keys is None:
                keys = by_parent[parent] = set()
            keys.add(key)

    def _remove(self, key: str) -> None:
        self._uid_hashes[_resource_prefix(key)].pop(key, None)
        old = self._labels.pop(key, None)
        if not old:
            return
        parent = _parent(key)
        for name, value in old.items():
            by_value = self._inverted[name]
            by_parent = by_value[value]
            keys = by_parent[parent]
            keys.discard(key)
            if not keys:
                del by_parent[parent]
                if not by_parent:
                    del by_value[value]
                    if not by_value:
                        del self._inverted[name]

    # -- answering ------------------------------------------------------------------------
    def shard_members(self, prefix: str, selector: Any) -> list[str] | None:
        """Sorted keys under `prefix` in a uid shard (`sharding.Selector` on metadata.uid), or None
        when the index is not caught up with the store."""
        if self.revision != self.store.revision:
            return None
        resource = _resource_prefix(prefix)
        if resource not in self._hashed:
            self._hash_uids(resource)
        matches = selector.matches_hash
        return sorted(k for k, h in self._uid_hashes[resource].items() if matches(h) and k.startswith(prefix))

    def candidates(self, prefix: str, selector: Any, limit: int = 0) -> Iterator[str] | None:
        """The keys under `prefix` whose labels satisfy `selector`, in key order, or None when the
        index cannot answer (not caught up with the store, or no term it can look up).

        They come lazily: a page (`limit`) takes its keys off a heap, so a LIST ?labelSelector=…&limit=1
        polled over 10,000 matching objects costs a heapify, not a sort and a selector match of each."""
        if self.revision != self.store.revision:
            return None
        resource = _resource_prefix(prefix)
        if resource not in self._built:
            if not any(r.operator in _INDEXABLE for r in selector.requirements):
                return None
            self._build(resource)
        best: set[str] | None = None
        for requirement in selector.requirements:
            if requirement.operator not in _INDEXABLE:
                continue
            by_value = self._inverted.get(requirement.key)
            if not by_value:
                return []
            if requirement.operator == labels.EXISTS:
                found = _under(prefix, by_value.values())
            else:
                found = _under(prefix, [by_value[v] for v in requirement.values if v in by_value])
            best = found if best is None or len(found) < len(best) else best
            if not best:
                return []
        if best is None:
            return None
        # One indexable term is exactly its key set; with more, the others are checked key by key.
        if len(selector.requirements) == 1:
            return _in_key_order(best, limit, None)
        return _in_key_order(best, limit, lambda k: selector.matches(self._labels.get(k)))


def _under(prefix: str, groups: Iterable[dict[str, set[str]]]) -> set[str]:
    """The keys under `prefix` in these parent → keys maps (one per label value), unioned. One set
    that is a namespace's (or a cluster-scoped resource's) whole answer comes back as it is: the
    caller must not change it."""
    sets: list[set[str]] = []
    for by_parent in groups:
        exact = by_parent.get(prefix)
        if exact is not None:
            sets.append(exact)  # `prefix` is a parent: nothing else lies under it
        else:
            sets += [keys for parent, keys in by_parent.items() if parent.startswith(prefix)]
    if len(sets) == 1:
        return sets[0]
    return set().union(*sets)


def _in_key_order(keys: set[str], limit: int, wanted: Callable[[str], bool] | None) -> Iterator[str]:
    """`keys` that are `wanted` (all of them when None), sorted; `keys` itself is left as it is (it
    may be the index's own set). A whole list, or a page near its size, sorts once; a small page of
    many keys takes its first keys in one pass (`_smallest_first`)."""
    if not limit or limit * 8 >= len(keys):
        ordered: Iterator[str] = iter(sorted(keys))
    else:
        ordered = _smallest_first(keys, limit + 1)  # the page and one more, to know if more follow
    yield from ordered if wanted is None else filter(wanted, ordered)


def _smallest_first(keys: set[str], first: int) -> Iterator[str]:
    """`keys` in order: the `first` smallest picked in one pass (a LIST …&limit=1 polled over 10,000
    matching objects), the rest off a heap only if they are asked for (keys the filter refused)."""
    smallest = heapq.nsmallest(first, keys)
    yield from smallest
    if len(smallest) < len(keys):
        rest = [k for k in keys if k > smallest[-1]]  # keys are unique: exactly the others
        heapq.heapify(rest)
        while rest:
            yield heapq.heappop(rest)
