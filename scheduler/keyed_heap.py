"""`KeyedHeap`: a binary heap whose entries can be removed by key in O(log n), amortized.

The scheduling queue's activeQ and backoffQ hold thousands of pods, and a PodGroup cycle takes a
whole group out of them at once; rebuilding the heap for each removal made that quadratic (the
QueueSort comparisons alone were most of the scheduler's CPU under 1,000 gangs). Upstream's heap
keeps an index per item; here a removed key is forgotten at once and its stale entry is dropped
when it reaches the top, with a rebuild once stale entries outnumber live ones. Used by
`scheduler/queue.py` only; items must be totally ordered (ties broken by a sequence number).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_SLACK = 64  # stale entries tolerated before a rebuild is worth it


class KeyedHeap(Generic[T]):
    def __init__(self) -> None:
        self._heap: list[tuple[Any, str]] = []  # (item, key); items never compare equal
        self._live: dict[str, T] = {}

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: str) -> bool:
        return key in self._live

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._live.values()))

    def get(self, key: str) -> T | None:
        return self._live.get(key)

    def push(self, key: str, item: T) -> None:
        """Add `item` under `key`, replacing what the key held."""
        self._live[key] = item
        heapq.heappush(self._heap, (item, key))
        self._compact()

    def discard(self, key: str) -> T | None:
        item = self._live.pop(key, None)
        if item is not None:
            self._compact()
        return item

    def peek(self) -> T | None:
        self._drop_stale_top()
        return self._heap[0][0] if self._heap else None  # type: ignore[no-any-return]

    def pop(self) -> T | None:
        self._drop_stale_top()
        if not self._heap:
            return None
        item, key = heapq.heappop(self._heap)
        del self._live[key]
        return item  # type: ignore[no-any-return]

    def _drop_stale_top(self) -> None:
        heap, live = self._heap, self._live
        while heap and live.get(heap[0][1]) is not heap[0][0]:
            heapq.heappop(heap)

    def _compact(self) -> None:
        if len(self._heap) > 2 * len(self._live) + _SLACK:
            self._heap = [(item, key) for key, item in self._live.items()]
            heapq.heapify(self._heap)
