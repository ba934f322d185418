"""Timing primitives shared by every benchmark case: percentiles, pacing and repeat-and-pick.

Cases in `bench._*_case(s)` call these; nothing here knows about a store. All clocks are
`time.perf_counter`. Percentiles use the nearest-rank method on the full sample (no sampling),
so a p99 over N values is the value that 99 % of the N do not exceed.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile; `values` need not be sorted. NaN for an empty sample."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


async def sleep_until(deadline: float) -> None:
    """Sleep until perf_counter() reaches `deadline` (returns at once when already past)."""
    delay = deadline - time.perf_counter()
    if delay > 0:
        await asyncio.sleep(delay)


async def paced_open_loop(
    rate: float, count: int, one: Callable[[int], Awaitable[T]]
) -> tuple[list[T], float]:
    """Start `one(i)` at i/rate seconds after the start, without waiting for earlier ones.

    Open loop on purpose: a stall in the store then shows up as latency on every operation
    queued behind it, instead of silently lowering the offered rate. Returns the results in
    index order and the achieved start rate (below `rate` when the event loop itself lags).
    """
    start = time.perf_counter()
    tasks: list[asyncio.Task[T]] = []
    for i in range(count):
        await sleep_until(start + i / rate)
        tasks.append(asyncio.ensure_future(one(i)))
    launched = time.perf_counter() - start
    results = await asyncio.gather(*tasks)
    achieved = (count - 1) / launched if count > 1 and launched > 0 else math.nan
    return list(results), achieved
