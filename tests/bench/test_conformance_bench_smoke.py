"""Smoke test of `python -m bench.conformance --quick`: it runs to the end and prints its tables.

Asserts the shape of the output only, never a timing: the wall-time row beside the sonobuoy
anchor with a ratio, the checks-per-second and outcome rows (every sampled check passed), and a
CPU line for each process of `haru up` and this one. Marked slow: it starts `haru up`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def test_quick_run_prints_the_row_beside_its_anchor_and_cpu_per_process() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.conformance", "--quick"], cwd=REPO,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in out.splitlines() if line.startswith("| the whole suite")}
    wall = rows["the whole suite (--quick sample): wall time"]
    assert wall[0].endswith(" s") and wall[1] == "60-120 min" and wall[2].endswith("x")
    assert float(rows["the whole suite (--quick sample): checks per second"][0]) > 0
    outcome = rows["the whole suite (--quick sample): outcomes"][0]
    assert outcome.endswith("passed, 0 failed, 0 skipped") and not outcome.startswith("0 ")
    processes = [line.split("|")[1].strip() for line in out.split("CPU per process", 1)[1].splitlines()
                 if line.startswith("| ") and not line.startswith("| process")]
    assert {"API server", "controllers", "scheduler", "nodes", "bench (this process)"} <= set(processes), processes
    assert "load average at start:" in out and "load average at end:" in out
