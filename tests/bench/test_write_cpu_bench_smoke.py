"""Smoke test of `python -m bench.write_cpu --pods 30`: every verb runs without a failure and prints
its row. Asserts the shape of the output only, never a figure: those depend on the machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VERBS = ["create (POST)", "pods/binding (POST)", "status (strategic PATCH)", "merge PATCH", "apply PATCH",
         "update (PUT)", "graceful DELETE", "DELETE gracePeriodSeconds=0"]


def test_every_verb_prints_a_row_without_failures() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.write_cpu", "--pods", "30", "--clients", "4"], cwd=REPO,
                            capture_output=True, text=True, timeout=180, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ") and " ms |" in line]
    assert [row.split(" | ")[0][2:] for row in rows] == VERBS, result.stdout
    assert all(row.split(" | ")[1] == "30" and row.split(" | ")[2] == "0" for row in rows), result.stdout
    assert "create + binding + status patch:" in result.stdout
