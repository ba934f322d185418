"""Smoke test of `python -m bench.storage --quick`: it runs to the end and prints its table.

Runs both sides when etcd and aetcd are installed, the haru side alone (`--haru-only`) when they
are not. Asserts the shape of the output only, never a timing: the figures depend on the machine.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from bench import etcd_anchor

REPO = Path(__file__).resolve().parents[2]
CASES = [
    "durable writes, 1 in flight",
    "durable writes, 64 in flight",
    "single get",
    "prefix list 1k objects: records",
    "prefix list 1k: records + JSON decode",
    "watch: 100 watchers",
    "p99 write latency while compaction runs",
]


def run_bench(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "bench.storage", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
    )


def anchor_available() -> bool:
    return etcd_anchor.find_etcd() is not None and importlib.util.find_spec("aetcd") is not None


def test_quick_run_prints_one_row_per_case_with_a_verdict() -> None:
    args = ["--quick"] if anchor_available() else ["--quick", "--haru-only"]
    result = run_bench(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "nproc:" in out and "python:" in out and "etcd:" in out
    assert "| case " in out and "| pass/fail" in out
    table = [line for line in out.splitlines() if line.startswith("| ")]
    for case in CASES:
        rows = [line for line in table if line.startswith(f"| {case}")]
        assert len(rows) == 1, f"no single row for {case!r} in:\n{out}"
        verdict = rows[0].rstrip(" |").rsplit("|", 1)[1].strip()
        assert verdict in {"pass", "FAIL", "n/a (no anchor)"}, rows[0]
    # The bare py-lmdb floor runs beside both sides and is reported in the notes.
    assert "64 in flight: floor, bare py-lmdb group commit" in out
    assert "records: floor, a bare py-lmdb cursor" in out
    if "--haru-only" not in args:
        # With the anchor, every ratio row has an etcd figure and a ratio.
        writes = next(line for line in table if line.startswith("| durable writes, 1 in flight"))
        cells = [c.strip() for c in writes.strip("|").split("|")]
        assert cells[2].endswith("ops/s") and cells[3].endswith("x"), writes


def test_missing_etcd_binary_is_an_error_not_a_silent_skip(tmp_path: Path) -> None:
    result = run_bench("--quick", "--etcd", str(tmp_path / "no-etcd-here"), timeout=30)
    assert result.returncode == 2
    assert "apt-get install etcd-server" in result.stderr
    assert "| case " not in result.stdout
