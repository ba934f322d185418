"""`Store`: the objects of one collection by `namespace/name`, with secondary indexes.

An index is a function from an object to the values it is filed under (`by_owner_uid`: the uids
in its ownerReferences); `by_index(name, value)` answers from the index without scanning. The
informer writes (`add`, `update`, `delete`, `replace`); everyone else only reads. Objects are the
decoded dicts as they came off the wire: readers must not mutate them.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator
from typing import Any

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], Iterable[str]]


def key_of(obj: Obj) -> str:
    """client-go's MetaNamespaceKeyFunc: `namespace/name`, or just `name` when cluster-scoped."""
    meta = obj.get("metadata") or {}
    namespace, name = meta.get("namespace"), meta.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


def by_uid(obj: Obj) -> list[str]:
    uid = (obj.get("metadata") or {}).get("uid")
    return [uid] if uid else []


def by_owner_uid(obj: Obj) -> list[str]:
    return [ref["uid"] for ref in (obj.get("metadata") or {}).get("ownerReferences") or [] if ref.get("uid")]


def by_namespace(obj: Obj) -> list[str]:
    namespace = (obj.get("metadata") or {}).get("namespace")
    return [namespace] if namespace else []


class Store:
    def __init__(self, indexers: dict[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, Obj] = {}
        self._indexers = dict(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        self._listeners: builtins.list[Callable[[str], None]] = []

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """`listener(key)` after each add, update or delete of `key`, and for every key a replace
        drops or fills: a consumer that keeps something derived from every object (the
        scheduler's claim tracker) redoes only those keys instead of walking the whole store."""
        self._listeners.append(listener)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[Obj]:
        return iter(list(self._items.values()))

    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def keys(self) -> builtins.list[str]:
        return list(self._items)

    def list(self) -> builtins.list[Obj]:
        return list(self._items.values())

    def by_index(self, index: str, value: str) -> builtins.list[Obj]:
        keys = self._indices[index].get(value, ())
        return [self._items[k] for k in sorted(keys)]

    def index_count(self, index: str, value: str) -> int:
        """How many objects `by_index` would return, without building the list."""
        return len(self._indices[index].get(value, ()))

    def add_indexer(self, name: str, func: IndexFunc) -> None:
        """Indexes may be added late (a second controller sharing the informer); they are built now."""
        if name in self._indexers:
            return
        self._indexers[name] = func
        self._indices[name] = {}
        for key, obj in self._items.items():
            self._file(name, key, obj)

    def add(self, obj: Obj) -> Obj | None:
        """Insert or replace; returns what was stored under the key before."""
        key = key_of(obj)
        old = self._items.get(key)
        if old is not None:
            self._unfile(key, old)
        self._items[key] = obj
        for name in self._indexers:
            self._file(name, key, obj)
        for listener in self._listeners:
            listener(key)
        return old

    update = add

    def delete(self, obj: Obj) -> Obj | None:
        key = key_of(obj)
        old = self._items.pop(key, None)
        if old is not None:
            self._unfile(key, old)
            for listener in self._listeners:
                listener(key)
        return old

    def replace(self, objects: Iterable[Obj]) -> None:
        for key in self._items:  # the ones the new list leaves out are gone
            for listener in self._listeners:
                listener(key)
        self._items = {}
        self._indices = {name: {} for name in self._indexers}
        for obj in objects:
            self.add(obj)

    def _file(self, name: str, key: str, obj: Obj) -> None:
        for value in self._indexers[name](obj):
            self._indices[name].setdefault(value, set()).add(key)

    def _unfile(self, key: str, obj: Obj) -> None:
        for name, func in self._indexers.items():
            index = self._indices[name]
            for value in func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
