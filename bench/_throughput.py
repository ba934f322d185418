"""scheduler_perf's SchedulingThroughput: per-second samples of newly scheduled pods, and their summary.

`Scheduled` watches the measured namespace's pods (a `Tally`) and remembers every pod ever seen
with `spec.nodeName`, so pods deleted after binding (the steady-state case) still count.
`Collector` is upstream's throughputCollector: it samples that count each second, skips the
first non-zero sample, waits out empty seconds and then records the rate once per second waited,
and `summary()` gives Average, Perc50, Perc90, Perc99 with upstream's index rule
(sorted[ceil(n * p / 100) - 1]).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench._nodes_watch import Tally

SAMPLE_INTERVAL = 1.0


def is_bound(pod: dict[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


class Scheduled(Tally):
    """Pods of one namespace that the scheduler bound, counted once each, deleted or not."""

    def __init__(self, base: str, namespace: str, on_bound: Callable[[dict[str, Any]], None] | None = None) -> None:
        super().__init__(base, f"/api/v1/namespaces/{namespace}/pods", is_bound)
        self.ever: set[str] = set()
        self.on_bound = on_bound

    def _apply(self, kind: Any, obj: dict[str, Any]) -> None:
        super()._apply(kind, obj)
        name = obj["metadata"]["name"]
        if kind != "DELETED" and is_bound(obj) and name not in self.ever:
            self.ever.add(name)
            if self.on_bound is not None:
                self.on_bound(obj)


@dataclass(frozen=True)
class Summary:
    average: float
    p50: float
    p90: float
    p99: float
    samples: int

    @classmethod
    def of(cls, samples: list[float]) -> "Summary":
        if not samples:
            return cls(math.nan, math.nan, math.nan, math.nan, 0)
        ordered = sorted(samples)
        n = len(ordered)

        def perc(p: int) -> float:
            return ordered[math.ceil(n * p / 100) - 1]

        return cls(sum(ordered) / n, perc(50), perc(90), perc(99), n)


class Collector:
    """Samples `count()` once a second until stopped, as scheduler_perf's collector does."""

    def __init__(self, count: Callable[[], int], clock: Callable[[], float] = time.perf_counter,
                 sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.count = count
        self.clock = clock
        self.sleep = sleep
        self.samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> Summary:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        return Summary.of(self.samples)

    async def _run(self) -> None:
        last_count, last_time = self.count(), self.clock()
        started, skipped = False, 0
        next_tick = last_time + SAMPLE_INTERVAL
        while True:
            await self.sleep(max(0.0, next_tick - self.clock()))
            next_tick += SAMPLE_INTERVAL
            now, scheduled = self.clock(), self.count()
            if scheduled == 0:
                continue
            if not started:
                # The first second mixes creating and sampling: upstream drops it as an outlier.
                started, last_count, last_time = True, scheduled, now
                continue
            new = scheduled - last_count
            if new == 0:
                skipped += 1  # no zero samples: the next rate is spread over the seconds waited
                continue
            rate = new / (now - last_time)
            self.samples += [rate] * (skipped + 1)
            last_count, last_time, skipped = scheduled, now, 0
