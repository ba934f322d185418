"""Smoke test of `python -m bench.gang --case 50 20 3`: it runs to the end, every pod of every gang
binds and no gang is partly bound. Asserts the table's counts only, never a timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_small_run_binds_every_gang_whole() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.gang", "--case", "50", "20", "3"], cwd=REPO,
                            capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stderr
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| 50 nodes")]
    assert len(rows) == 1, result.stdout
    _, pods, bound, partial, *_ = (cell.strip(" |") for cell in rows[0])
    assert (pods, bound, partial) == ("60", "60", "0"), result.stdout
    assert "Volcano" in result.stdout and "Kueue" in result.stdout
