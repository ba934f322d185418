"""Smoke test of `python -m bench.apf` on a tiny run: both servers, every case row, the cost table.

Asserts the shape of the output only, never a timing: the figures depend on the machine. The
cost verdict may say FAIL on a loaded machine, so the exit code is not checked beyond 0 or 1;
a refused request, a failed renewal or a flood that never ran would have stopped it with a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_a_tiny_run_prints_every_case_and_the_cost_rows() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.apf", "--objects", "150", "--nodes", "2", "--clients", "4",
                             "--seconds", "0.5", "--cost-rounds", "1", "--cost-seconds", "0.3", "--connections", "2"],
                            cwd=REPO, capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("# bench.apf")
    assert "load average at start" in lines[1]
    for case in ("APF on, quiet", "APF on, flood", "APF off, quiet", "APF off, flood", "GET", "create"):
        assert any(line.startswith(f"| {case} ") for line in lines), (case, result.stdout)
    flood_on = next(line for line in lines if line.startswith("| APF on, flood "))
    assert " 0 / " not in flood_on.split("|")[7], flood_on  # the flood's LISTs were served
    assert result.returncode in (0, 1)
