"""Durable write throughput with a fixed number of writes in flight, the same code for both sides.

`bench.storage` calls `measure_writes(side.put, items, in_flight)` once per side and case. Each
of `in_flight` workers takes the next (key, object) and awaits the side's durable write, so at
most `in_flight` writes are outstanding: 1 measures commit latency, 64 measures group commit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from bench import _timing

Put = Callable[[str, dict[str, Any]], Awaitable[int]]


@dataclass
class WriteResult:
    ops_per_second: float
    count: int
    seconds: float
    latencies: list[float]  # seconds, one per write

    def describe(self) -> str:
        p50 = _timing.percentile(self.latencies, 50) * 1e3
        p99 = _timing.percentile(self.latencies, 99) * 1e3
        return f"{self.count:,} writes in {self.seconds:.2f} s, latency p50 {p50:.2f} ms, p99 {p99:.2f} ms"

    @staticmethod
    def combine(parts: list[WriteResult]) -> WriteResult:
        """Rounds of the same case as one result: total writes over total time."""
        count = sum(p.count for p in parts)
        seconds = sum(p.seconds for p in parts)
        return WriteResult(count / seconds, count, seconds, [x for p in parts for x in p.latencies])


async def measure_writes(put: Put, items: Iterable[tuple[str, dict[str, Any]]], in_flight: int) -> WriteResult:
    source: Iterator[tuple[str, dict[str, Any]]] = iter(items)
    latencies: list[float] = []

    async def worker() -> None:
        perf = time.perf_counter
        # A shared iterator hands out work; asyncio is single-threaded, so next() is safe here.
        for key, obj in source:
            started = perf()
            await put(key, obj)
            latencies.append(perf() - started)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    seconds = time.perf_counter() - start
    return WriteResult(len(latencies) / seconds, len(latencies), seconds, latencies)
