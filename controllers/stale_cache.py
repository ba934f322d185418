"""`LastWrites`: KEP-5647's stale-cache check, one mechanism for every controller that writes what it watches.

Per reconcile key, the resourceVersion of the controller's newest write to each watched resource
(the answer of a create, update, patch or delete). `caught_up(key, ctx, watches)` is false while
the informer for such a resource has not yet synced to that version; the controller then skips the
reconcile and returns `Result(requeue_after=REQUEUE)`, as 1.36's controllers requeue instead of
acting on a cache that does not show their own last write. Used by StatefulSet, DaemonSet,
CronJob, Endpoints, EndpointSlice, HPA, Disruption, node lifecycle and the namespace controller.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol

from client.informer import Informer
from client.resources import Resource

# The informer's own event for the write brings the key back; this requeue only covers a
# write whose event maps to another key (or to none), so it is short.
REQUEUE = 0.1
# A watch that filters (label or field selector) may never show our write, and a lost event
# must not stall a key forever: after this long a record no longer holds the key back.
TTL = 30.0


class _Informers(Protocol):
    def informer(self, watch: Any) -> Informer | None: ...


def _version(answer: Any) -> int | None:
    """The resourceVersion of a write's answer; None for a Status (an immediate delete) or a non-number."""
    if not isinstance(answer, dict) or answer.get("kind") == "Status":
        return None
    value = (answer.get("metadata") or {}).get("resourceVersion") or ""
    return int(value) if value.isdigit() else None


class LastWrites:
    def __init__(self, ttl: float = TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._records: dict[Hashable, tuple[float, dict[Resource, int]]] = {}

    def wrote(self, key: Hashable, resource: Resource, answer: Any) -> Any:
        """Note the answer to a write made while reconciling `key`; returns the answer for chaining."""
        version = _version(answer)
        if version is not None:
            _, versions = self._records.get(key, (0.0, {}))
            versions[resource] = max(version, versions.get(resource, 0))
            self._records[key] = (self.clock(), versions)
        return answer

    def caught_up(self, key: Hashable, ctx: _Informers | None, watches: Sequence[Any]) -> bool:
        """True when every informer we wrote through for `key` shows at least our last write."""
        record = self._records.get(key)
        if record is None:
            return True
        at, versions = record
        if self.clock() - at > self.ttl or ctx is None:
            self._records.pop(key, None)
            return True
        for resource, version in versions.items():
            synced = _synced_version(ctx, watches, resource)
            if synced is not None and synced < version:
                return False
        self._records.pop(key, None)
        return True

    def forget(self, key: Hashable) -> None:
        self._records.pop(key, None)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._records


def _synced_version(ctx: _Informers, watches: Sequence[Any], resource: Resource) -> int | None:
    """The version the least advanced of our informers on `resource` has synced to (None: none to ask)."""
    oldest: int | None = None
    for watch in watches:
        if watch.resource != resource:
            continue
        informer = ctx.informer(watch)
        value = informer.last_sync_resource_version if informer is not None else ""
        if value.isdigit():
            oldest = int(value) if oldest is None else min(oldest, int(value))
    return oldest
