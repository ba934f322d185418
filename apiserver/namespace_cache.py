"""Decoded namespaces, read once and kept until any namespace is written.

Every namespaced create looks its namespace up twice: NamespaceLifecycle (`writing.py`) and the
admission policies' namespaceSelector and `namespaceObject` (`admitting.StoreView.get`).
Namespaces change rarely, so the decoded objects are kept, and all of them are dropped as soon as
the store reports a write under the namespaces' prefix (`Store.last_change`). A namespace that
does not exist is remembered too: creating it is such a write. Callers must not change what they
get. `Server.namespaces` holds the one instance.
"""

from __future__ import annotations

from typing import Any

import msgspec

from storage import Store

_LIMIT = 10_000  # namespaces kept at most; past that, lookups read the store


class NamespaceCache:
    def __init__(self, store: Store, prefix: str):
        self._store = store
        self._prefix = prefix  # the namespaces' storage prefix, from the registry
        self._as_of = -1
        self._objects: dict[str, dict[str, Any] | None] = {}

    def get(self, name: str) -> dict[str, Any] | None:
        """The namespace `name` as stored, decoded; None if there is none."""
        changed = self._store.last_change(self._prefix)
        if changed != self._as_of:
            self._objects.clear()
            self._as_of = changed
        try:
            return self._objects[name]
        except KeyError:
            pass
        record = self._store.get(self._prefix + name)
        found = None if record is None else msgspec.json.decode(record.value)
        if len(self._objects) < _LIMIT:
            self._objects[name] = found
        return found
