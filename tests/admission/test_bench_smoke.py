"""Smoke test of `python -m bench.admission --quick`: it runs to the end and prints its table.

Checks the shape only (one row per case, a verdict in each), never a timing: the figures depend on
the machine and on who else uses its two cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_quick_run_prints_every_row():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-m", "bench.admission", "--quick"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    names = [row.split("|")[1].strip() for row in rows[1:]]
    assert names == [
        "create pods/s, 1 MAP + 3 VAPs (anchor: same run, no policies)",
        "CEL VAP require-limits, median per evaluation",
        "CEL VAP no-latest-images, median per evaluation",
        "CEL VAP require-app-label, median per evaluation",
        "CEL MAP user-namespaces (Object{} literal), median per evaluation",
    ]
    for row in rows[1:]:
        assert row.rstrip(" |").endswith(("PASS", "FAIL"))
        assert "µs" in row or "pods/s" in row
