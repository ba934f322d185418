"""Smoke test of `python -m bench.storage --quick`: it runs to the end and prints its table.

Runs every side when etcd and aetcd are installed, haru and the floor alone (`--haru-only`) when
they are not; either way a run whose etcd is missing must still fill the haru and floor columns
and say in the etcd column why it is empty. Asserts the shape of the output only, never a timing:
the figures depend on the machine.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import _storage_rows, _storage_table, etcd_anchor
from bench import storage as bench_storage

REPO = Path(__file__).resolve().parents[2]
CASES = [
    "durable writes, 1 in flight",
    "durable writes, 64 in flight",
    "list 1k records (bytes, not decoded)",
    "single get (mean latency)",
    "watch: 100 watchers, 500 ev/s, commit->delivered p99",
    "p99 write latency while compaction runs",
]
# Rows judged against etcd, whose etcd cell must then say why it is empty.
ETCD_ROWS = CASES[:4] + [CASES[4]]
HEADER = ["case", "haru", "etcd", "floor", "vs etcd", "vs floor", "target", "pass/fail",
          "CPU s: haru / etcd srv+client / floor"]


def run_bench(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "bench.storage", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
    )


def anchor_available() -> bool:
    return etcd_anchor.find_etcd() is not None and importlib.util.find_spec("aetcd") is not None


def table_rows(out: str) -> dict[str, list[str]]:
    """Each case's cells, keyed by the case names above; fails unless each has exactly one row."""
    lines = [line for line in out.splitlines() if line.startswith("| ")]
    assert [c.strip() for c in lines[0].strip("|").split("|")] == HEADER, lines[0]
    rows = {}
    for case in CASES:
        found = [line for line in lines if line.startswith(f"| {case}")]
        assert len(found) == 1, f"no single row for {case!r} in:\n{out}"
        rows[case] = [c.strip() for c in found[0].strip().strip("|").split("|")]
    return rows


def check_haru_and_floor(rows: dict[str, list[str]]) -> None:
    for case, cells in rows.items():
        assert cells[7].startswith(("pass", "FAIL", "n/a")), (case, cells)
        unit = cells[1].split()[-1]
        assert unit in {"ops/s", "us", "ms"} and cells[3].endswith(unit), (case, cells)
        assert cells[5].endswith("x"), (case, cells)  # every row has a ratio to the floor
        haru_cpu, _, floor_cpu = cells[8].split(" / ")
        assert float(haru_cpu) >= 0 and float(floor_cpu) >= 0, (case, cells)


def test_quick_run_prints_one_row_per_case_with_every_side() -> None:
    args = ["--quick"] if anchor_available() else ["--quick", "--haru-only"]
    result = run_bench(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "QUICK run: every case scaled down" in out
    assert "nproc:" in out and "python:" in out and "etcd:" in out
    rows = table_rows(out)
    check_haru_and_floor(rows)
    assert rows[CASES[0]][6] == ">= 1.5x etcd and >= 0.8x floor"
    assert rows[CASES[1]][6] == ">= 2.5x etcd and >= 0.8x floor"
    assert rows[CASES[2]][6] == ">= 0.8x floor"
    assert rows[CASES[3]][6] == ">= 100x etcd"
    assert rows[CASES[4]][6] == "<= 50.0 ms"
    assert rows[CASES[5]][6].startswith("<= 2x p99 without")
    if "--haru-only" in args:
        for case in ETCD_ROWS:
            assert rows[case][2] == "not run (--haru-only)", rows[case]
    else:
        for case in CASES[:4]:  # the rows with a ratio to etcd
            assert rows[case][2].endswith(rows[case][1].split()[-1]) and rows[case][4].endswith("x"), rows[case]
        assert "+" in rows[CASES[0]][8].split(" / ")[1]  # etcd: server + client CPU
    assert "commit->delivered" in out and "CPU haru:" in out


def test_missing_etcd_still_runs_haru_and_the_floor_and_says_why(tmp_path: Path) -> None:
    result = run_bench("--quick", "--etcd", str(tmp_path / "no-etcd-here"))
    assert result.returncode == 2, result.stderr[-3000:]  # not a silent skip
    assert "apt-get install etcd-server" in result.stderr
    rows = table_rows(result.stdout)
    check_haru_and_floor(rows)
    for case in ETCD_ROWS:
        assert rows[case][2].startswith(f"missing: no etcd binary at {tmp_path / 'no-etcd-here'}"), rows[case]
        assert rows[case][4] == "-", rows[case]
    # Rows judged only against etcd cannot pass without it, and say so.
    assert rows[CASES[3]][7] == "n/a (no etcd)"


def test_missing_aetcd_client_is_named_in_the_etcd_column(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aetcd", None)  # import aetcd now raises ImportError
    args = bench_storage.parse_args(["--quick", "--etcd", sys.executable])
    binary, why = bench_storage.etcd_missing(args)
    assert binary is None
    assert why.startswith("missing: the aetcd client is not installed") and "pip install aetcd" in why
    assert bench_storage.etcd_missing(bench_storage.parse_args(["--haru-only"])) == (None, "not run (--haru-only)")


def test_a_row_is_judged_against_each_of_its_targets() -> None:
    def writes(haru: float, etcd: float | None, floor: float) -> _storage_table.Row:
        return _storage_table.Row("w", "ops/s", haru, etcd, floor, etcd_target=2.5, floor_target=0.8,
                                  etcd_missing="not run (--haru-only)")

    assert writes(3000, 1000, 3500).verdict == "pass"
    assert writes(3000, 1000, 4000).verdict == "FAIL (floor)"
    assert writes(2000, 1000, 4000).verdict == "FAIL (etcd, floor)"
    assert writes(3000, None, 3500).verdict == "pass (no etcd to judge)"
    assert writes(3000, None, 3500).etcd_cell() == "not run (--haru-only)"
    assert writes(float("nan"), 1000, 3500).verdict == "FAIL (no figure)"
    # Latencies: lower is better, so the ratio is the other side's figure over haru's.
    get = _storage_table.Row("get", "us", 2.0, 500.0, 1.0, higher_is_better=False, etcd_target=100.0)
    assert get.ratio_to(get.etcd) == 250.0 and get.ratio_to(get.floor) == 0.5
    assert get.verdict == "pass" and get.target == ">= 100x etcd"
    assert _storage_table.Row("get", "us", 2.0, None, 1.0, higher_is_better=False,
                              etcd_target=100.0).verdict == "n/a (no etcd)"
    watch = _storage_table.Row("watch", "ms", 60.0, 5.0, 10.0, higher_is_better=False, limit=50.0,
                               etcd_comparable=False)
    assert watch.verdict == "FAIL" and "| -" in _storage_table.render_table([watch])


def test_a_row_that_misses_the_etcd_target_where_the_floor_misses_it_too_is_floor_bound() -> None:
    def note(haru: float, floor: float) -> list[str]:
        row = _storage_table.Row("w", "ops/s", haru, 1000.0, floor, etcd_target=1.5, floor_target=0.8)
        return _storage_rows._floor_bound_note(row)

    assert note(1300, 1200)[0].startswith("FLOOR-BOUND: the bare floor itself reaches only 1.20x etcd")
    assert "haru's own work" in note(1000, 3000)[0]
    assert note(2000, 2100) == []
    assert note(2000, 1200) == []  # haru met the etcd target: nothing is floor-bound
    assert note(1300, 1600) == []  # haru misses it, but the floor would not: not floor-bound
