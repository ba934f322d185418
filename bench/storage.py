"""`python -m bench.storage`: haru's LMDB store beside etcd 3.4 and a bare py-lmdb floor, one run, one table.

Starts a throwaway etcd (`bench.etcd_anchor`) and opens `storage.Store` and the floor
(`bench._floor_side`, the least a CPython store on py-lmdb can do) in sibling temp dirs on the
same disk, runs each case on every side (`bench._storage_rows`, one function per row), and prints
case | haru | etcd | floor | ratios | target | pass/fail | CPU per process (`bench._storage_table`).
A missed target is reported, not raised: the exit code is 0 once the run completes. Without etcd
or aetcd the haru and floor columns still run, the etcd column says why it is empty, and the exit
code is 2 unless `--haru-only` asked for that. `--profile DIR` adds py-spy profiles of haru and
the floor on the write and list cases.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench import _profiling, _report, _storage_rows, _storage_table
from bench._storage_table import Row


@dataclass(frozen=True)
class Sizes:
    writes_one_in_flight: int
    write_rounds: int  # each write case alternates sides this many times
    list_size: int  # objects under the listed prefix; 64-in-flight writes = 2 x this
    gets_haru: int
    gets_etcd: int
    list_repeats: int
    watchers: int
    watch_rate: float
    watch_seconds: float
    etcd_watchers: int
    etcd_watch_seconds: float
    history: int
    compaction_rate: float
    compaction_seconds: float  # total paced window per side, split over compaction_rounds
    compaction_rounds: int
    warmup_writes: int


FULL = Sizes(
    writes_one_in_flight=3_000, write_rounds=6, list_size=10_000, gets_haru=100_000, gets_etcd=3_000,
    list_repeats=15, watchers=1_000, watch_rate=1_000, watch_seconds=5.0,
    etcd_watchers=100, etcd_watch_seconds=3.0,
    history=100_000, compaction_rate=500, compaction_seconds=8.0, compaction_rounds=4, warmup_writes=500,
)
QUICK = Sizes(
    writes_one_in_flight=200, write_rounds=1, list_size=1_000, gets_haru=5_000, gets_etcd=200,
    list_repeats=3, watchers=100, watch_rate=500, watch_seconds=1.0,
    etcd_watchers=10, etcd_watch_seconds=0.5,
    history=3_000, compaction_rate=300, compaction_seconds=1.0, compaction_rounds=2, warmup_writes=100,
)


def progress(message: str) -> None:
    print(f"[bench.storage {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.storage", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small smoke run (about 20 s); every case scaled down, as its row's name says")
    parser.add_argument("--haru-only", action="store_true",
                        help="run without the etcd anchor (haru and the floor only); for machines without etcd")
    parser.add_argument("--etcd", default=None, metavar="PATH",
                        help="etcd binary to run (default: /usr/bin/etcd, else etcd on PATH)")
    parser.add_argument("--dir", type=Path, default=None,
                        help="parent directory for the data dirs (default: a new temp dir, removed afterwards)")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="py-spy profiles of haru and the floor on the write and list cases, into DIR "
                             "(extra passes, never timed); needs py-spy on PATH")
    return parser.parse_args(argv)


def etcd_missing(args: argparse.Namespace) -> tuple[str | None, str]:
    """(the etcd binary to run or None, why not: the etcd column's text and the stderr hint)."""
    from bench import etcd_anchor

    if args.haru_only:
        return None, "not run (--haru-only)"
    binary = args.etcd or etcd_anchor.find_etcd()
    if binary is None or not os.access(binary, os.X_OK):
        return None, (f"missing: no etcd binary at {binary or '/usr/bin/etcd or on PATH'}; "
                      f"{etcd_anchor.INSTALL_HINT}")
    try:
        import aetcd  # noqa: F401
    except ImportError:
        return None, "missing: the aetcd client is not installed; pip install aetcd (or pip install -e '.[bench]')"
    return binary, ""


async def run(args: argparse.Namespace) -> int:
    sizes = QUICK if args.quick else FULL
    if args.profile is not None and not _profiling.available():
        print("bench.storage: --profile needs py-spy on PATH (pip install py-spy)", file=sys.stderr)
        return 2
    binary, missing = etcd_missing(args)
    etcd_version = None
    if binary is not None:
        from bench import etcd_anchor

        etcd_version = etcd_anchor.etcd_version(binary)
    elif not args.haru_only:
        print(f"bench.storage: etcd {missing}; running haru and the floor only", file=sys.stderr)

    parent = Path(tempfile.mkdtemp(prefix="haru-bench-", dir=args.dir))
    print(f"bench.storage ({'QUICK run: every case scaled down, see the row names' if args.quick else 'full run'})")
    for fact in _report.machine_facts(etcd_version or missing):
        print(fact)
    dirs = "haru,haru-compaction,lmdb-floor,lmdb-floor-compaction" + ("" if binary is None else ",etcd")
    print(f"data dirs: {parent}/{{{dirs}}} (one filesystem); every side durable "
          f"(haru and the floor: fsync'ed LMDB commit per acknowledged write; etcd: default WAL fsync)")
    sys.stdout.flush()
    try:
        rows = await run_cases(sizes, parent, binary, missing, args.profile)
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    _storage_table.print_report(rows)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores shared: a high load means noisy figures)")
    return 0 if binary is not None or args.haru_only else 2


async def run_cases(
    sizes: Sizes, parent: Path, etcd_binary: str | None, etcd_missing: str, profile_dir: Path | None
) -> list[Row]:
    from bench._floor_side import FloorSide
    from bench._haru_side import HaruSide

    haru = await HaruSide.open(parent / "haru")
    floor = await FloorSide.open(parent / "lmdb-floor")
    anchor = None
    etcd = None
    try:
        if etcd_binary is not None:
            from bench._etcd_side import EtcdSide
            from bench.etcd_anchor import EtcdAnchor

            anchor = EtcdAnchor(parent / "etcd" / "data", etcd_binary)
            progress(f"starting etcd on 127.0.0.1:{anchor.client_port}")
            await asyncio.to_thread(anchor.start)
            etcd = EtcdSide(anchor.client_port)
            await etcd.connect()
        pid = anchor.process.pid if anchor is not None and anchor.process is not None else None
        sides = _storage_rows.Sides(
            sizes, haru, floor, etcd, etcd_missing, pid, progress, profile_dir,
            floor_bound_profile_dir=parent / "profiles" if _profiling.available() else None,
        )
        return await _run_cases(sides, parent)
    finally:
        if etcd is not None:
            await etcd.close()
        if anchor is not None:
            anchor.stop()
        await floor.close()
        await haru.close()


async def _run_cases(sides: _storage_rows.Sides, parent: Path) -> list[Row]:
    progress("warming up every side")
    await _storage_rows.warm_up(sides)
    rows, written = await _storage_rows.write_rows(sides)
    rows.append(await _storage_rows.list_row(sides))
    rows.append(await _storage_rows.get_row(sides, written))
    del written
    rows.append(await _storage_rows.watch_row(sides))
    rows.append(await _storage_rows.compaction_row(sides, parent))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
