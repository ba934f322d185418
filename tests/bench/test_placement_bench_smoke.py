"""Smoke test of `python -m bench.placement --quick`: it runs to the end, every gang is placed and
none is split across racks. Asserts the output's shape and those counts only, never a timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROWS = ["placed pods", "CPU per pod", "CPU per gang", "pods/s this CPU bounds", "gangs split across racks",
        "gangs unschedulable"]


def test_quick_run_places_every_gang_inside_one_rack() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.placement", "--quick"], cwd=REPO, capture_output=True,
                            text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stderr
    rows = dict(line.split(" | ", 1) for line in result.stdout.splitlines() if " | " in line)
    assert sorted(rows) == sorted(ROWS), result.stdout
    assert rows["placed pods"] == "60"
    assert rows["gangs split across racks"] == "0"
    assert rows["gangs unschedulable"] == "0"
