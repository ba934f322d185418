"""Smoke test of `python -m bench.go_shape --quick`: it runs to the end and prints every row.

Asserts the shape of the output only, never a timing: the figures depend on the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROWS = ["full pass, fresh Pod", "full pass, Pod in shape", "top two levels, Pod", "full pass, fresh ConfigMap",
        "prepare_create, no Go shape", "prepare_create, Go shape"]


def test_quick_run_prints_every_row() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.go_shape", "--quick"], cwd=REPO, capture_output=True,
                            text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for row in ROWS:
        assert any(line.startswith(row) and line.count("|") == 2 for line in lines), (row, result.stdout)
    assert "the two passes:" in lines[-1]
