"""Watch fan-out latency: N watchers on one prefix, a writer pacing durable writes into it.

`bench._storage_rows.watch_row` calls `measure_watch` for haru (1,000 `Store.watch` watchers), for
the bare floor (as many), and, smaller, for etcd (aetcd watchers on one gRPC stream). A paced
open-loop writer offers the rate; every watcher sees every write. A delivery's latency, taken for
every event of every watcher, is the time the watcher got it minus the commit time, the moment the
write's `await` returned (the store's durable ack, the first moment outside the store that knows
the commit); one delivered before that counts as 0 and is counted apart. The time from the write
being issued is reported too, since it includes the commit itself.
Deliveries are logged into flat arrays (`DeliveryLog`), not per-batch tuples: millions of small
tracked objects would make the garbage collector stall the loop and charge it to the store.
"""

from __future__ import annotations

import asyncio
import time
from array import array
from collections.abc import Iterable
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench import _timing

Put = Callable[[str, dict[str, Any]], Awaitable[int]]


class DeliveryLog:
    """What one watcher received: per batch its arrival time and size, and every revision."""

    __slots__ = ("times", "sizes", "revisions")

    def __init__(self) -> None:
        self.times = array("d")
        self.sizes = array("q")
        self.revisions = array("q")

    def record(self, delivered_at: float, revisions: Iterable[int]) -> None:
        before = len(self.revisions)
        self.revisions.extend(revisions)
        self.times.append(delivered_at)
        self.sizes.append(len(self.revisions) - before)

    @property
    def last_revision(self) -> int:
        return self.revisions[-1] if self.revisions else 0


# A subscription runs until cancelled, recording what it receives into the log it is given.
Subscribe = Callable[[int, DeliveryLog], Awaitable[None]]


@dataclass
class WatchResult:
    watchers: int
    writes: int
    offered_rate: float
    achieved_rate: float
    deliveries: int
    complete_watchers: int
    before_ack: int
    p50_ack_ms: float
    p99_ack_ms: float
    max_ack_ms: float
    p99_issue_ms: float
    problems: list[str]

    def describe(self) -> str:
        return (
            f"{self.watchers:,} watchers x {self.writes:,} writes at {self.achieved_rate:,.0f}/s "
            f"(offered {self.offered_rate:,.0f}/s); {self.deliveries:,} deliveries, "
            f"{self.complete_watchers}/{self.watchers} watchers got every event in order; "
            f"commit->delivered p50 {self.p50_ack_ms:.2f} ms, p99 {self.p99_ack_ms:.2f} ms, "
            f"max {self.max_ack_ms:.1f} ms ({self.before_ack:,} delivered before the ack, counted as 0); "
            f"issue->delivered p99 {self.p99_issue_ms:.2f} ms"
        )


async def measure_watch(
    subscribe: Subscribe,
    put: Put,
    items: Sequence[tuple[str, dict[str, Any]]],
    start_revision: int,
    watchers: int,
    rate: float,
    drain_timeout: float = 30.0,
) -> WatchResult:
    logs = [DeliveryLog() for _ in range(watchers)]
    tasks = [asyncio.ensure_future(subscribe(start_revision, log)) for log in logs]
    await asyncio.sleep(0.2)  # let every subscription register before the first write
    for task in tasks:
        if task.done():
            task.result()  # a subscription that failed to start is a benchmark error: raise it

    issued: dict[int, float] = {}
    acked: dict[int, float] = {}
    perf = time.perf_counter

    async def one_write(i: int) -> int:
        key, obj = items[i]
        started = perf()
        revision = await put(key, obj)
        acked[revision] = perf()
        issued[revision] = started
        return revision

    revisions, achieved = await _timing.paced_open_loop(rate, len(items), one_write)
    final = max(revisions)

    deadline = perf() + drain_timeout
    while perf() < deadline:
        if all(log.last_revision >= final for log in logs):
            break
        await asyncio.sleep(0.01)
    for task in tasks:
        task.cancel()
    ended = await asyncio.gather(*tasks, return_exceptions=True)
    # A watcher the store closed (e.g. WatchClosed for falling behind) ends with its error.
    errors = [e for e in ended if isinstance(e, BaseException) and not isinstance(e, asyncio.CancelledError)]

    result = _summarize(logs, issued, acked, set(revisions), rate, achieved, len(items))
    if errors:
        result.problems.insert(0, f"{len(errors)} watchers ended with an error, first: {errors[0]!r}")
    return result


def _summarize(
    logs: list[DeliveryLog],
    issued: dict[int, float],
    acked: dict[int, float],
    expected: set[int],
    rate: float,
    achieved: float,
    writes: int,
) -> WatchResult:
    from_ack: list[float] = []
    from_issue: list[float] = []
    problems: list[str] = []
    before_ack = 0
    complete = 0
    ordered_expected = sorted(expected)
    for index, log in enumerate(logs):
        seen = log.revisions.tolist()
        position = 0
        for delivered_at, size in zip(log.times, log.sizes):
            for revision in seen[position:position + size]:
                if revision not in acked:
                    continue  # not one of ours (none expected: the prefix is the writer's alone)
                lag = delivered_at - acked[revision]
                if lag < 0:
                    before_ack += 1
                    lag = 0.0
                from_ack.append(lag)
                from_issue.append(delivered_at - issued[revision])
            position += size
        if seen == ordered_expected:
            complete += 1
        elif len(problems) < 3:
            missing = len(expected - set(seen))
            problems.append(
                f"watcher {index}: {len(seen)} events, {missing} missing, "
                f"in order: {seen == sorted(set(seen))}"
            )
    from_ack.sort()
    ms = lambda pct: _timing.percentile(from_ack, pct) * 1e3  # noqa: E731
    return WatchResult(
        watchers=len(logs), writes=writes, offered_rate=rate, achieved_rate=achieved,
        deliveries=len(from_ack), complete_watchers=complete, before_ack=before_ack,
        p50_ack_ms=ms(50), p99_ack_ms=ms(99), max_ack_ms=ms(100),
        p99_issue_ms=_timing.percentile(from_issue, 99) * 1e3, problems=problems,
    )
