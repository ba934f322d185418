"""Smoke test of `python -m bench.rbac` on a tiny run: both servers serve the service account, every row prints.

Asserts the shape of the output only, never a timing: the figures depend on the machine. The
verdict column may say FAIL on a loaded machine, so the exit code is not checked, only that the
run got as far as the table (a refused request would have stopped it with its Status).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_a_tiny_run_prints_both_cases_and_the_cpu_row() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.rbac", "--namespaces", "3", "--rounds", "1", "--seconds",
                             "0.3", "--connections", "2"], cwd=REPO, capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("# bench.rbac")
    for case in ("GET", "create", "CPU s (server + bench)"):
        assert any(line.startswith(f"| {case} ") for line in lines), (case, result.stdout)
    assert result.returncode in (0, 1)
