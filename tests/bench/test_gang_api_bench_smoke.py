"""Smoke test of `python -m bench.gang --through-api --case 30 10 3`: an API server child and
`python -m scheduler` really bind every pod of every gang over HTTP, none partly bound, and the
CPU columns are filled. Asserts counts only, never a timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_through_the_api_every_gang_binds_whole() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.gang", "--through-api", "--case", "30", "10", "3"],
                            cwd=REPO, capture_output=True, text=True, timeout=240,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stderr
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| 30 nodes")]
    assert len(rows) == 1, result.stdout
    _, pods, bound, partial, _rate, _target, scheduler_cpu, *_ = (cell.strip(" |") for cell in rows[0])
    assert (pods, bound, partial) == ("30", "30", "0"), result.stdout
    assert scheduler_cpu.endswith(" ms"), rows[0]
    assert "through the API" in rows[0][0] and "Volcano" in result.stdout and "Kueue" in result.stdout
