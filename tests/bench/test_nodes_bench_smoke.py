"""Smoke test of `python -m bench.nodes --quick`: it runs to the end and prints its two tables.

Asserts the shape of the output only, never a timing: the figures depend on the machine and on
who else uses its two cores. Every case prints exactly one row, labelled as a quick run, whose
headline figure was measured and whose last cell is a ratio and a verdict; the CPU table has one
line per phase with the three processes. Marked slow: it starts the API server and the nodes.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ROW_PREFIXES = [
    "200 (--quick) hollow nodes: start -> all Ready",
    "steady state, 200 (--quick) nodes: CPU of the nodes process",
    "steady state, 200 (--quick) nodes: RSS of the nodes process per node",
    "500 (--quick) pods bound by hand -> all Running",
]
PHASES = ["start -> all Nodes Ready", "steady state, 200 nodes", "500 pods: first create -> all Running"]


@functools.cache
def quick_run() -> subprocess.CompletedProcess[str]:
    """One quick run (about 25 s) shared by the tests that read its output."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "bench.nodes", "--quick"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=240)


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(out: str) -> list[list[str]]:
    """The Markdown tables in the output, each as its lines (header first, separator dropped)."""
    found: list[list[str]] = []
    current: list[str] = []
    for line in out.splitlines() + [""]:
        if line.startswith("| "):
            current.append(line)
        elif line.startswith("|-"):
            continue
        elif current:
            found.append(current)
            current = []
    return found


def test_quick_run_prints_one_judged_row_per_case_with_its_anchor() -> None:
    result = quick_run()
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "nproc:" in out and "(--quick: a smoke run" in out
    table = tables(out)[0]
    assert cells(table[0]) == ["case", "haru", "target", "anchor", "ratio / pass"], table[0]
    assert len(table) == 1 + len(ROW_PREFIXES), "\n".join(table)
    for line, prefix in zip(table[1:], ROW_PREFIXES):
        row = cells(line)
        assert row[0] == prefix, line
        assert "n/a" not in row[1], line
        assert "measurements 2." in row[3], line  # the published figure, with where it comes from
        ratio, _, verdict = row[4].partition(" / ")
        assert ratio.endswith("x") and verdict in {"pass", "FAIL"}, line
    assert "API server" in cells(table[2])[1]  # the API server's CPU beside the nodes'


def test_quick_run_prints_the_cpu_of_each_process_per_phase() -> None:
    result = quick_run()
    assert result.returncode == 0, result.stderr[-3000:]
    cpu = tables(result.stdout)[1]
    header = cells(cpu[0])
    assert header[:2] == ["phase", "wall"], cpu[0]
    assert {"API server CPU", "nodes CPU", "bench (this process) CPU"} <= set(header), cpu[0]
    assert [cells(line)[0] for line in cpu[1:]] == PHASES
    for line in cpu[1:]:
        assert all("cores" in c for c in cells(line)[2:5]), line
