"""bench._throughput: the summary and sampling rules of scheduler_perf's throughput collector."""

from __future__ import annotations

import math

from bench._throughput import Collector, Summary


def test_percentiles_use_upstreams_ceiling_index() -> None:
    s = Summary.of([float(v) for v in range(1, 11)])  # 1..10
    assert (s.average, s.p50, s.p90, s.p99, s.samples) == (5.5, 5.0, 9.0, 10.0, 10)
    assert math.isnan(Summary.of([]).average)


async def test_the_first_sample_is_dropped_and_empty_seconds_repeat_the_next_rate() -> None:
    counts = iter([0, 0, 5, 15, 15, 35, 36])  # the initial read, then one per tick
    now = [0.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds  # a fake clock: each tick lands exactly one second later

    collector = Collector(lambda: next(counts), clock=lambda: now[0], sleep=sleep)
    try:
        await collector._run()
    except RuntimeError:  # StopIteration inside a coroutine: the fake counter ran out
        pass  # the fake counter ran out: the loop has seen every tick
    # tick 1: nothing scheduled (ignored); tick 2: 5 (the first, dropped); tick 3: +10 in 1 s;
    # tick 4: +0 (waited out); tick 5: +20 over 2 s, recorded once per second; tick 6: +1.
    assert collector.samples == [10.0, 10.0, 10.0, 1.0]
    assert Summary.of(collector.samples).p50 == 10.0
