"""Smoke test of `python -m bench.scheduler --quick`: it runs to the end and prints its tables.

Asserts the shape of the output only, never a timing: the figures depend on the machine and on
who else uses its two cores. Each workload prints one row with its Go anchor; SchedulingBasic
needs only the scheduler core and must be measured (average, p50, p90, p99 and each process's
CPU); a DRA or preemption row may say "not measured" until its plugins are on main, but then it
must say why. Marked slow: it starts an API server and the scheduler per workload.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.test_nodes_bench_smoke import cells, tables

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (REPO / "scheduler" / "__main__.py").exists(),
                                 reason="python -m scheduler arrives with the scheduler core (git merge main)")]
WORKLOADS = ["SchedulingBasic", "SchedulingWithResourceClaimTemplate", "SteadyStateClusterResourceClaimTemplate",
             "PreemptionAsync"]


@functools.cache
def quick_run() -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "bench.scheduler", "--quick"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def test_quick_run_prints_one_row_per_workload_with_its_go_anchor() -> None:
    result = quick_run()
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "nproc:" in out and "(--quick: a smoke run" in out
    assert "INCOMPLETE" not in out, "every measured pod of a quick run fits and must bind"
    table = tables(out)[0]
    assert cells(table[0]) == ["case", "haru", "target", "anchor", "ratio / pass"], table[0]
    assert len(table) == 1 + len(WORKLOADS), "\n".join(table)
    for line, workload in zip(table[1:], WORKLOADS):
        row = cells(line)
        assert row[0].startswith(workload), line
        assert "measurements 2.4" in row[3] and "Go" in row[3], line
        if row[0].endswith("not measured"):
            assert f"{row[0]}:\n  - " in out, "an unmeasured row must give its reason"
            continue
        for label in ("p50", "p90", "p99", "API server CPU", "scheduler CPU"):
            assert label in row[1], line
        assert "n/a" not in row[1].split(";")[0], line
        ratio, _, verdict = row[4].partition(" / ")
        assert ratio.endswith("x") and verdict in {"pass", "FAIL"}, line
    assert not cells(table[1])[0].endswith("not measured"), "SchedulingBasic needs only the core"


def test_quick_run_prints_the_cpu_of_each_process_per_measured_phase() -> None:
    result = quick_run()
    assert result.returncode == 0, result.stderr[-3000:]
    cpu_tables = [t for t in tables(result.stdout)[1:] if cells(t[0])[:2] == ["phase", "wall"]]
    assert cpu_tables, result.stdout[-2000:]
    header = cells(cpu_tables[0][0])
    assert {"API server CPU", "scheduler CPU", "bench (this process) CPU"} <= set(header), header
