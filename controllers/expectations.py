"""`Expectations`: creations and deletions a controller made that its informer has not shown yet.

client-go's ControllerExpectations, as the ReplicaSet controller uses them: before it creates N
pods it `expect_creations(key, N)`; each pod ADDED event the informer delivers `creation_observed`;
`satisfied(key)` is true once both counts reach zero or the record is older than `ttl` (an event
can be lost; upstream waits five minutes). While a key is unsatisfied the controller only writes
status, so a stale cache never makes it create or delete twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

TTL = 300.0


@dataclass
class _Record:
    adds: int = 0
    deletes: set[str] = field(default_factory=set)
    at: float = 0.0


class Expectations:
    def __init__(self, ttl: float = TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._records: dict[Hashable, _Record] = {}

    def satisfied(self, key: Hashable) -> bool:
        record = self._records.get(key)
        if record is None:
            return True
        if (record.adds <= 0 and not record.deletes) or self.clock() - record.at > self.ttl:
            return True
        return False

    def expect_creations(self, key: Hashable, count: int) -> None:
        self._records[key] = _Record(adds=count, at=self.clock())

    def expect_deletions(self, key: Hashable, pod_keys: list[str]) -> None:
        self._records[key] = _Record(deletes=set(pod_keys), at=self.clock())

    def creation_observed(self, key: Hashable) -> None:
        record = self._records.get(key)
        if record is not None:
            record.adds -= 1

    def deletion_observed(self, key: Hashable, pod_key: str) -> None:
        record = self._records.get(key)
        if record is not None:
            record.deletes.discard(pod_key)

    def forget(self, key: Hashable) -> None:
        self._records.pop(key, None)
