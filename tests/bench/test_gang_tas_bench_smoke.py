"""Smoke test of `python -m bench.gang --quick`'s topology-aware rows: the run ends, every pod of
every gang binds, no gang is partly bound and none is split across racks. Never a timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_quick_run_binds_every_rack_constrained_gang_inside_one_rack() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.gang", "--quick"], cwd=REPO, capture_output=True,
                            text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Topology-aware variant"))
    rows = [line.strip("|").split(" | ") for line in lines[start + 3:] if line.startswith("| ")]
    assert rows, result.stdout
    for case, pods, bound, partial, split, _cpu, _rate in rows:
        assert (bound, partial, split) == (pods, "0", "0"), case
