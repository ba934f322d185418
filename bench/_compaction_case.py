"""Write latency while compaction runs, against the same paced writes without it.

`bench.storage` gives this case a haru store of its own, opened with a retention large enough that
it never compacts on its own, and runs it again on the bare floor (`bench._floor_side`); each is
filled with a long history of durable writes. Then, in
alternating rounds, paced open-loop writes run with no compaction (baseline) and while a
background task compacts the next slice of that history steadily over the window (`compact`
to a target that advances every 50 ms, so the work is spread over the window instead of finishing
in its first fraction of a second). Alternating rounds keep a noisy neighbour on this shared
machine from landing on one side only. Only writes issued before a slice finished count as "during".
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ContextManager, Protocol

from bench import _timing, _write_cases

TICK_SECONDS = 0.05


class Side(Protocol):
    """What the case needs of a store (`HaruSide`, `FloorSide`)."""

    name: str

    @property
    def revision(self) -> int: ...

    @property
    def compacted_revision(self) -> int: ...

    async def put(self, key: str, obj: dict[str, Any]) -> int: ...

    async def compact(self, revision: int) -> None: ...


@dataclass
class CompactionResult:
    history: int
    build_seconds: float
    baseline: list[float]  # seconds per write
    during: list[float]  # seconds per write issued while compaction ran
    during_total: int  # writes issued in the second window, overlapping or not
    compaction_seconds: float
    compacted_events: int
    rounds: int
    compact_failures: list[str]  # compact() calls that raised and were retried

    @property
    def baseline_p99_ms(self) -> float:
        return _timing.percentile(self.baseline, 99) * 1e3

    @property
    def during_p99_ms(self) -> float:
        return _timing.percentile(self.during, 99) * 1e3

    def describe(self) -> str:
        ms = lambda values, pct: _timing.percentile(values, pct) * 1e3  # noqa: E731
        return (
            f"history {self.history:,} events (built in {self.build_seconds:.1f} s); compacted "
            f"{self.compacted_events:,} events over {self.compaction_seconds:.2f} s in {TICK_SECONDS * 1e3:.0f} ms "
            f"ticks, {self.rounds} rounds alternating with the baseline; {len(self.during):,} of {self.during_total:,} paced writes overlapped it; "
            f"without: p50 {ms(self.baseline, 50):.2f} ms, p99 {ms(self.baseline, 99):.2f} ms, "
            f"max {ms(self.baseline, 100):.1f} ms; with: p50 {ms(self.during, 50):.2f} ms, "
            f"p99 {ms(self.during, 99):.2f} ms, max {ms(self.during, 100):.1f} ms"
        ) + (
            f"; STORE BUG: {len(self.compact_failures)} compact() calls raised and were retried, "
            f"first: {self.compact_failures[0]!r}" if self.compact_failures else ""
        )


async def measure_compaction(
    side: Side,
    history_items: Iterable[tuple[str, dict[str, Any]]],
    baseline_items: Sequence[tuple[str, dict[str, Any]]],
    during_items: Sequence[tuple[str, dict[str, Any]]],
    rate: float,
    rounds: int,
    span: Callable[[], ContextManager[None]] = contextlib.nullcontext,
) -> CompactionResult:
    """`span()` wraps each paced window (the caller meters CPU there), never the history build."""
    built = await _write_cases.measure_writes(side.put, history_items, in_flight=64)
    first, mark = side.compacted_revision, side.revision

    baseline: list[float] = []
    during: list[float] = []
    compaction_seconds = 0.0
    failures: list[str] = []
    per_round = len(during_items) // rounds
    for r in range(rounds):
        chunk = slice(r * per_round, (r + 1) * per_round)
        with span():
            baseline += [latency for _, latency in await _paced_latencies(side, baseline_items[chunk], rate)]

        slice_from = first + (mark - first) * r // rounds
        slice_to = first + (mark - first) * (r + 1) // rounds
        compactor = asyncio.ensure_future(
            _steady_compaction(side, slice_from, slice_to, per_round / rate, failures)
        )
        with span():
            timed = await _paced_latencies(side, during_items[chunk], rate)
            started, ended = await compactor
        compaction_seconds += ended - started
        during += [latency for issued, latency in timed if issued < ended]
    if side.compacted_revision < mark:
        raise AssertionError(f"{side.name}: compaction stopped at {side.compacted_revision}, asked for {mark}")
    return CompactionResult(
        history=built.count, build_seconds=built.seconds, baseline=baseline, during=during,
        during_total=per_round * rounds, compaction_seconds=compaction_seconds,
        compacted_events=mark - first, rounds=rounds, compact_failures=failures,
    )


async def _steady_compaction(
    side: Side, first: int, mark: int, window: float, failures: list[str]
) -> tuple[float, float]:
    """Advance the compaction target from `first` to `mark` evenly over `window` seconds.

    A `compact()` that fails with RuntimeError is retried (up to 3 times) and each failure is
    recorded for the report: before 34a7d3a the store failed a compact() registered while a stale
    standalone step (the retention task's nudge) was in flight; the row says so if it comes back.
    """
    ticks = max(1, int(window / TICK_SECONDS))
    started = time.perf_counter()
    for tick in range(1, ticks + 1):
        await _timing.sleep_until(started + (tick - 1) * TICK_SECONDS)
        target = first + (mark - first) * tick // ticks
        for attempt in range(4):
            try:
                await side.compact(target)
                break
            except RuntimeError as failure:
                failures.append(str(failure))
                if attempt == 3:
                    raise
    return started, time.perf_counter()


async def _paced_latencies(
    side: Side, items: Sequence[tuple[str, dict[str, Any]]], rate: float
) -> list[tuple[float, float]]:
    """(issue time, latency) of each write, started open-loop at `rate` per second."""
    perf = time.perf_counter

    async def one(i: int) -> tuple[float, float]:
        key, obj = items[i]
        issued = perf()
        await side.put(key, obj)
        return issued, perf() - issued

    results, _ = await _timing.paced_open_loop(rate, len(items), one)
    return results
