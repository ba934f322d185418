"""Read cases: single-key get latency and a prefix list of records (bytes), for every side.

`bench.storage` calls `measure_gets_sync` for haru and the floor (a plain function: an LMDB read in
the caller's thread) and `measure_gets_async` for etcd (a gRPC round trip), and
`measure_list` for every side with an async `list_records(prefix)` that returns records.
Every operation is timed on its own with perf_counter, so both sides pay the same clock overhead.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench import _timing


@dataclass
class LatencyResult:
    latencies: list[float]  # seconds

    @property
    def mean_us(self) -> float:
        return sum(self.latencies) / len(self.latencies) * 1e6

    def describe(self) -> str:
        p50 = _timing.percentile(self.latencies, 50) * 1e6
        p99 = _timing.percentile(self.latencies, 99) * 1e6
        return f"{len(self.latencies):,} gets, mean {self.mean_us:.1f} us, p50 {p50:.1f} us, p99 {p99:.1f} us"


def measure_gets_sync(get: Callable[[str], Any], keys: Sequence[str]) -> LatencyResult:
    perf = time.perf_counter
    latencies = []
    for key in keys:
        started = perf()
        found = get(key)
        latencies.append(perf() - started)
        if found is None:
            raise AssertionError(f"get({key!r}) found nothing: the benchmark reads only keys it wrote")
    return LatencyResult(latencies)


async def measure_gets_async(get: Callable[[str], Awaitable[Any]], keys: Sequence[str]) -> LatencyResult:
    perf = time.perf_counter
    latencies = []
    for key in keys:
        started = perf()
        found = await get(key)
        latencies.append(perf() - started)
        if found is None:
            raise AssertionError(f"get({key!r}) found nothing: the benchmark reads only keys it wrote")
    return LatencyResult(latencies)


ListRecords = Callable[[str], Awaitable[Sequence[Any]]]


@dataclass
class ListTiming:
    """Seconds per list; the figure is their median in ms."""

    records: list[float]
    count: int

    @property
    def records_ms(self) -> float:
        return _timing.median(self.records) * 1e3

    def extend(self, other: ListTiming) -> None:
        self.records += other.records

    def describe(self) -> str:
        best = min(self.records) * 1e3 if self.records else float("nan")
        return f"{self.count:,} records in {len(self.records)} lists; median {self.records_ms:.2f} ms, best {best:.2f} ms"


async def measure_list(list_records: ListRecords, prefix: str, expected: int, repeats: int) -> ListTiming:
    """`repeats` lists of the records' bytes (no value is decoded: that costs the same in any store).

    Each repetition starts from a collected heap (the previous result freed, `gc.collect()` run
    outside the timing), so one repetition does not pay for the garbage of the one before.
    """
    perf = time.perf_counter
    await list_records(prefix)  # warm-up: page cache, connection, allocator

    records_times = []
    for _ in range(repeats):
        gc.collect()
        started = perf()
        records = await list_records(prefix)
        records_times.append(perf() - started)
        count = len(records)
        del records
        if count != expected:
            raise AssertionError(f"list {prefix} returned {count} objects, expected {expected}")
    return ListTiming(records_times, expected)
