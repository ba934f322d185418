"""Smoke test of `python -m bench.apiserver --quick`: it runs to the end and prints its table.

Asserts the shape of the output only, never a timing: the figures depend on the machine and on
who else uses its two cores. Every case must print exactly one row whose last cell is a ratio
(or "-") and a verdict; a case that could not measure anything shows "FAIL (no figure)" and fails
this test, since the quick run has everything it needs (kubectl comes with the test extra).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROW_PREFIXES = [
    "haru up -> first kubectl get ns",
    "GET one pod, 50 connections",
    "LIST 2k pods",
    "RSS with 4k pods stored",
    "RSS peak during one LIST of all 4k pods",
    "create pods, 32 clients, durable",
    "haru up (+ controllers) over 4k pods",
    "LIST, selector matching nothing, 10k configmaps",
    "100 watchers during 100 writes/s",
    "1 write -> all 100 watchers",
]


def run_bench(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "bench.apiserver", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
    )


@functools.cache
def quick_run() -> subprocess.CompletedProcess[str]:
    """One quick run (about 12 s) shared by the tests that read its output."""
    return run_bench("--quick")


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_quick_run_prints_one_judged_row_per_case() -> None:
    result = quick_run()
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "nproc:" in out and "HTTP load:" in out and "kubectl:" in out
    table = [line for line in out.splitlines() if line.startswith("| ")]
    assert cells(table[0]) == ["case", "haru", "target", "anchor", "ratio / pass"], table[0]
    assert len(table) == 1 + len(ROW_PREFIXES), "\n".join(table)
    for prefix in ROW_PREFIXES:
        rows = [line for line in table if line.startswith(f"| {prefix}")]
        assert len(rows) == 1, f"no single row for {prefix!r} in:\n{out}"
        ratio, _, verdict = cells(rows[0])[4].partition(" / ")
        assert verdict in {"pass", "FAIL", "-"}, rows[0]
        assert ratio == "-" or ratio.endswith("x"), rows[0]
        assert "n/a" not in cells(rows[0])[1], rows[0]


def test_the_get_row_carries_the_anchor_measured_in_the_same_run() -> None:
    result = quick_run()
    assert result.returncode == 0, result.stderr[-3000:]
    row = next(line for line in result.stdout.splitlines() if line.startswith("| GET one pod"))
    anchor = cells(row)[3]
    assert anchor.startswith("trivial aiohttp handler") and "req/s" in anchor and "this run" in anchor, row


WRK_OUTPUT = """Running 1s test @ http://127.0.0.1:41234/api/v1/namespaces/ns-00/pods/pod-000000
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.71ms  520.11us  12.08ms   91.02%
    Req/Sec    18.56k     1.10k   19.71k    80.00%
  Latency Distribution
     50%    2.64ms
     75%    2.80ms
     90%    3.05ms
     99%  850.00us
  18467 requests in 1.00s, 44.70MB read
  Non-2xx or 3xx responses: 12
  Socket errors: connect 0, read 1, write 0, timeout 2
Requests/sec:  18441.20
Transfer/sec:     44.64MB
"""


def test_wrk_summary_is_read_with_units_and_errors() -> None:
    from bench import _load

    result = _load.parse_wrk(WRK_OUTPUT, 50)
    assert result.requests == 18467 and result.seconds == 1.0
    assert result.p50_ms == 2.64 and result.p99_ms == 0.85
    assert result.errors == 15
    assert round(result.ok_per_second) == 18452


def test_a_row_fails_when_any_judged_figure_misses_or_is_missing() -> None:
    from bench._api_report import Figure, Row

    fast = Figure("", 9_000, "req/s", 8_000)
    slow_tail = Figure("p99", 12.0, "ms", 10.0, higher_is_better=False)
    assert Row("get", [fast], "a", 18_000).verdict == "pass"
    assert Row("get", [fast, slow_tail], "a", 18_000).verdict == "FAIL"
    assert Row("get", [Figure("", float("nan"), "s", 1.0, False)], "a", 5.0).verdict == "FAIL (no figure)"
    assert Row("startup", [Figure("", 0.5, "s", 1.0, False)], "kwok", 5.0).ratio == 10.0


def test_a_case_that_raises_becomes_a_fail_row_and_the_run_goes_on() -> None:
    import asyncio

    from bench import apiserver

    async def broken() -> None:
        raise RuntimeError("GET answered 500")

    row = asyncio.run(apiserver.unmeasured_on_error("get", broken()))  # type: ignore[arg-type]
    assert row.case == "get: not measured"
    assert row.verdict == "FAIL (no figure)"
    assert "GET answered 500" in row.notes[0]
