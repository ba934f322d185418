"""Smoke test of `python -m bench.controllers --quick`: it runs to the end and prints its two tables.

Asserts the shape of the output only, never a timing: every case prints one row labelled as a
quick run, with a measured figure and a verdict, and the CPU table has one line per cluster case
with every process of `haru up` (API server, controllers, scheduler, nodes) and this one.
Marked slow: it starts `haru up` and the embedded fixture cluster.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.test_nodes_bench_smoke import cells, tables

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ROW_PREFIXES = [
    "namespace with 100 (--quick) objects: delete -> gone",
    "Deployment of 50 (--quick) replicas -> Available on 4 nodes",
    "GC of a 485 (--quick)-object ownership tree (background)",
    "haru_cluster fixture ready, median of 3 (--quick)",
]


@functools.cache
def quick_run() -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "bench.controllers", "--quick"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=280)


def test_quick_run_prints_one_judged_row_per_case_with_its_anchor() -> None:
    result = quick_run()
    assert result.returncode == 0, result.stderr[-3000:]
    assert "nproc:" in result.stdout and "(--quick: a smoke run" in result.stdout
    table = tables(result.stdout)[0]
    assert cells(table[0]) == ["case", "haru", "target", "anchor", "ratio / pass"], table[0]
    assert [cells(line)[0] for line in table[1:]] == ROW_PREFIXES, "\n".join(table)
    for line in table[1:]:
        row = cells(line)
        assert "n/a" not in row[1] and row[1].endswith(" s"), line
        assert row[3].startswith(("envtest", "kwok")), line
        assert row[4].rpartition(" / ")[2] in {"pass", "FAIL"}, line


def test_quick_run_prints_the_cpu_of_each_process_per_case() -> None:
    result = quick_run()
    assert result.returncode == 0, result.stderr[-3000:]
    cpu = tables(result.stdout)[1]
    header = cells(cpu[0])
    assert header[:2] == ["phase", "wall"], cpu[0]
    assert {"API server CPU", "controllers CPU", "scheduler CPU", "nodes CPU", "bench (this process) CPU"} <= set(header)
    assert len(cpu) == 4, "\n".join(cpu)
    for line in cpu[1:]:
        assert all("cores" in c for c in cells(line)[2:]), line
