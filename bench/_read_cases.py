"""Read cases: single-key get latency and a decoded prefix list, for both sides.

`bench.storage` calls `measure_gets_sync` for haru (its get is a plain function: an LMDB read in
the caller's thread) and `measure_gets_async` for etcd (a gRPC round trip), and
`measure_list` for both with an async `list_records(prefix)` that returns records with `.value`.
Every operation is timed on its own with perf_counter, so both sides pay the same clock overhead.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

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


class HasValue(Protocol):
    @property
    def value(self) -> bytes: ...


ListRecords = Callable[[str], Awaitable[Sequence[HasValue]]]


@dataclass
class ListTiming:
    """Samples in seconds; the figures are their medians in ms."""

    records: list[float]  # time to get the records
    decoded: list[float]  # time to get the records and JSON-decode every value
    decoded_no_gc: list[float]  # the same with the cyclic garbage collector paused
    count: int

    @property
    def records_ms(self) -> float:
        return _timing.median(self.records) * 1e3

    @property
    def decoded_ms(self) -> float:
        return _timing.median(self.decoded) * 1e3

    @property
    def decoded_no_gc_ms(self) -> float:
        return _timing.median(self.decoded_no_gc) * 1e3

    def extend(self, other: ListTiming) -> None:
        self.records += other.records
        self.decoded += other.decoded
        self.decoded_no_gc += other.decoded_no_gc

    def describe(self) -> str:
        return (
            f"{self.count:,} objects; records {self.records_ms:.1f} ms, + JSON decode {self.decoded_ms:.1f} ms; "
            f"+ JSON decode with gc paused {self.decoded_no_gc_ms:.1f} ms (medians)"
        )


async def measure_list(list_records: ListRecords, prefix: str, expected: int, repeats: int) -> ListTiming:
    """`repeats` lists, without and with decoding every value.

    Each repetition starts from a collected heap (the previous result freed, `gc.collect()` run
    outside the timing), so one repetition does not pay for the garbage of the one before.
    The collector stays on inside the headline timings: a server decoding 10k objects pays for it
    too (measured: it triples the decode time). A third timing pauses it, to show how much.
    """
    decode = msgspec.json.decode
    perf = time.perf_counter
    await list_records(prefix)  # warm-up: page cache, connection, allocator

    records_times = []
    decoded_times = []
    no_gc_times = []
    for _ in range(repeats):
        gc.collect()
        started = perf()
        records = await list_records(prefix)
        records_times.append(perf() - started)
        count = len(records)
        del records
        if count != expected:
            raise AssertionError(f"list {prefix} returned {count} objects, expected {expected}")

        gc.collect()
        started = perf()
        objects = [decode(r.value) for r in await list_records(prefix)]
        decoded_times.append(perf() - started)
        count = len(objects)
        del objects
        if count != expected:
            raise AssertionError(f"decoded {count} objects, expected {expected}")

        gc.collect()
        gc.disable()
        try:
            started = perf()
            objects = [decode(r.value) for r in await list_records(prefix)]
            no_gc_times.append(perf() - started)
        finally:
            gc.enable()
        del objects

    return ListTiming(records_times, decoded_times, no_gc_times, expected)
