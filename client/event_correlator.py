"""`EventCorrelator`: what client-go's tools/record does to a core/v1 Event before it is sent.

Three steps, upstream's defaults (events_cache.go):
* **aggregate**: events alike but for their message (same source, object, type and reason) seen
  with 10 distinct messages within 10 minutes become one "(combined from similar events): …" event;
* **count**: an event seen before (same key, message included) is not created again but patched on
  the first one's name with `count` + 1 and a new `lastTimestamp`;
* **spam filter**: per source and object a token bucket of 25, refilled at one per 5 minutes;
  an event without a token is dropped.
Pure bookkeeping, no I/O: `event_recorder.CoreEventRecorder` sends what `correlate` returns.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Generic, TypeVar

Obj = dict[str, Any]
CACHE_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
AGGREGATE_PREFIX = "(combined from similar events): "

V = TypeVar("V")


class _LRU(Generic[V]):
    """groupcache's lru.Cache: a bounded map that forgets the least recently used key."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def add(self, key: Hashable, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self.size:
            self._items.popitem(last=False)


def rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _object_key(event: Obj) -> tuple[str, ...]:
    source, obj = event.get("source") or {}, event.get("involvedObject") or {}
    return (source.get("component") or "", source.get("host") or "", obj.get("kind") or "",
            obj.get("namespace") or "", obj.get("name") or "", obj.get("uid") or "", obj.get("apiVersion") or "")


def event_key(event: Obj) -> tuple[str, ...]:
    """What makes two events the same occurrence (upstream's getEventKey)."""
    return (*_object_key(event), (event.get("involvedObject") or {}).get("fieldPath") or "",
            event.get("type") or "", event.get("reason") or "", event.get("message") or "")


def _aggregate_key(event: Obj) -> tuple[str, ...]:
    """Alike but for the message (EventAggregatorByReasonFunc)."""
    return ("aggregate", *_object_key(event), event.get("type") or "", event.get("reason") or "",
            event.get("reportingComponent") or "", event.get("reportingInstance") or "")


@dataclass
class _Aggregate:
    messages: set[str]
    last: float


@dataclass
class _Observation:
    count: int
    first_timestamp: str
    name: str
    resource_version: str


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass(frozen=True)
class Correlation:
    event: Obj  # what to create, or (with `patch`) the state the patch brings the first one to
    patch: Obj | None  # set when an earlier occurrence exists: a merge patch of its name


class EventCorrelator:
    def __init__(self, clock: Callable[[], float] = time.time, *, cache_entries: int = CACHE_ENTRIES,
                 max_events: int = AGGREGATE_MAX_EVENTS, max_interval: float = AGGREGATE_INTERVAL,
                 burst: int = SPAM_BURST, qps: float = SPAM_QPS) -> None:
        self.clock = clock
        self.max_events, self.max_interval = max_events, max_interval
        self.burst, self.qps = burst, qps
        self._aggregates: _LRU[_Aggregate] = _LRU(cache_entries)
        self._observed: _LRU[_Observation] = _LRU(cache_entries)
        self._buckets: _LRU[_Bucket] = _LRU(cache_entries)

    def correlate(self, event: Obj) -> Correlation | None:
        """The event to send (or the patch to send instead); None when the spam filter drops it."""
        now = self.clock()
        aggregated, key = self._aggregate(event, now)
        observed, patch = self._observe(aggregated, key, now)
        if not self._take_token(observed, now):
            return None
        return Correlation(observed, patch)

    def update_state(self, sent: Obj) -> None:
        """Remember what the server answered (its name, count and resourceVersion) for the next patch."""
        meta = sent.get("metadata") or {}
        self._observed.add(event_key(sent), _Observation(int(sent.get("count") or 1), sent.get("firstTimestamp") or "",
                                                         meta.get("name") or "", meta.get("resourceVersion") or ""))

    def _aggregate(self, event: Obj, now: float) -> tuple[Obj, tuple[str, ...]]:
        group = _aggregate_key(event)
        record = self._aggregates.get(group)
        if record is None or now - record.last > self.max_interval:
            record = _Aggregate(set(), now)
        record.messages.add(event.get("message") or "")
        record.last = now
        self._aggregates.add(group, record)
        if len(record.messages) < self.max_events:
            return event, event_key(event)
        record.messages.pop()  # the set never grows past the threshold
        stamp = rfc3339(now)
        involved = event.get("involvedObject") or {}
        combined = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{involved.get('name')}.{int(now * 1e9):x}",
                         "namespace": (event.get("metadata") or {}).get("namespace")},
            "involvedObject": involved, "reason": event.get("reason"), "type": event.get("type"),
            "message": AGGREGATE_PREFIX + (event.get("message") or ""), "source": event.get("source"),
            "count": 1, "firstTimestamp": stamp, "lastTimestamp": stamp,
        }
        return combined, group

    def _observe(self, event: Obj, key: tuple[str, ...], now: float) -> tuple[Obj, Obj | None]:
        last = self._observed.get(key)
        observed = {**event, "metadata": dict(event.get("metadata") or {})}
        patch: Obj | None = None
        if last is not None and last.count > 0:
            observed["metadata"]["name"] = last.name
            if last.resource_version:
                observed["metadata"]["resourceVersion"] = last.resource_version
            observed["firstTimestamp"] = last.first_timestamp
            observed["count"] = last.count + 1
            observed["lastTimestamp"] = rfc3339(now)
            # What differs from the first occurrence once count, time and message are set aside.
            patch = {"count": observed["count"], "lastTimestamp": observed["lastTimestamp"]}
            if observed.get("message"):
                patch["message"] = observed["message"]
        meta = observed["metadata"]
        self._observed.add(key, _Observation(int(observed.get("count") or 1), observed.get("firstTimestamp") or "",
                                             meta.get("name") or "", meta.get("resourceVersion") or ""))
        return observed, patch

    def _take_token(self, event: Obj, now: float) -> bool:
        key = _object_key(event)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.qps)
        bucket.at = now
        self._buckets.add(key, bucket)
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True
