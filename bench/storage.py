"""`python -m bench.storage`: haru's LMDB store beside etcd 3.4, same values, same run, one table.

Starts a throwaway etcd (`bench.etcd_anchor`) and opens `storage.Store` in sibling temp dirs on
the same disk, runs each case on haru then on etcd (`bench._storage_rows`, one function per row,
over the measurements in `_write_cases`, `_read_cases`, `_watch_case`, `_compaction_case`), and
prints case | haru | etcd | ratio | target | pass/fail (`bench._report`). A missed target is reported, not raised: the exit code is 0 once the run
completes, and 2 when the anchor cannot run (etcd or aetcd missing), unless `--haru-only`.
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
from typing import Any

from bench import _report
from bench._report import Row


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
    writes_one_in_flight=3_000, write_rounds=3, list_size=10_000, gets_haru=100_000, gets_etcd=3_000,
    list_repeats=5, watchers=1_000, watch_rate=1_000, watch_seconds=5.0,
    etcd_watchers=100, etcd_watch_seconds=3.0,
    history=100_000, compaction_rate=500, compaction_seconds=8.0, compaction_rounds=4, warmup_writes=500,
)
QUICK = Sizes(
    writes_one_in_flight=200, write_rounds=1, list_size=1_000, gets_haru=5_000, gets_etcd=200,
    list_repeats=2, watchers=100, watch_rate=500, watch_seconds=1.0,
    etcd_watchers=10, etcd_watch_seconds=0.5,
    history=3_000, compaction_rate=300, compaction_seconds=1.0, compaction_rounds=2, warmup_writes=100,
)


def progress(message: str) -> None:
    print(f"[bench.storage {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.storage", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run (about 20 s)")
    parser.add_argument("--haru-only", action="store_true",
                        help="run without the etcd anchor (ratios are then n/a); for machines without etcd")
    parser.add_argument("--etcd", default=None, metavar="PATH",
                        help="etcd binary to run (default: /usr/bin/etcd, else etcd on PATH)")
    parser.add_argument("--dir", type=Path, default=None,
                        help="parent directory for both data dirs (default: a new temp dir, removed afterwards)")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> int:
    sizes = QUICK if args.quick else FULL
    etcd_version = None
    binary = None
    if not args.haru_only:
        from bench import etcd_anchor

        binary = args.etcd or etcd_anchor.find_etcd()
        if binary is None or not os.access(binary, os.X_OK):
            print(f"bench.storage: no etcd binary at {binary or '/usr/bin/etcd or on PATH'}. "
                  f"{etcd_anchor.INSTALL_HINT}", file=sys.stderr)
            return 2
        try:
            import aetcd  # noqa: F401
        except ImportError:
            print("bench.storage: the etcd client is missing; install it with: pip install aetcd "
                  "(or pip install -e '.[bench]')", file=sys.stderr)
            return 2
        etcd_version = etcd_anchor.etcd_version(binary)

    parent = Path(tempfile.mkdtemp(prefix="haru-bench-", dir=args.dir))
    print(f"bench.storage ({'quick' if args.quick else 'full'} run)")
    for fact in _report.machine_facts(etcd_version):
        print(fact)
    dirs = "haru,haru-compaction,lmdb-floor" + ("" if args.haru_only else ",etcd")
    print(f"data dirs: {parent}/{{{dirs}}} (one filesystem); both sides durable "
          f"(haru: fsync'ed LMDB commit per acknowledged write; etcd: default WAL fsync)")
    sys.stdout.flush()
    try:
        rows = await run_cases(sizes, parent, args.haru_only, binary)
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    _report.print_report(rows)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores shared: a high load means noisy figures)")
    return 0


async def run_cases(sizes: Sizes, parent: Path, haru_only: bool, etcd_binary: str | None) -> list[Row]:
    from bench._haru_side import HaruSide

    haru = await HaruSide.open(parent / "haru")
    anchor = None
    etcd = None
    try:
        if not haru_only:
            from bench._etcd_side import EtcdSide
            from bench.etcd_anchor import EtcdAnchor

            anchor = EtcdAnchor(parent / "etcd" / "data", etcd_binary)
            progress(f"starting etcd on 127.0.0.1:{anchor.client_port}")
            await asyncio.to_thread(anchor.start)
            etcd = EtcdSide(anchor.client_port)
            await etcd.connect()
        return await _run_cases(sizes, parent, haru, etcd)
    finally:
        if etcd is not None:
            await etcd.close()
        if anchor is not None:
            anchor.stop()
        await haru.close()


async def _run_cases(sizes: Sizes, parent: Path, haru: Any, etcd: Any) -> list[Row]:
    from bench import _storage_rows as rows_of

    from bench._floor_side import FloorSide

    progress("warming up both sides")
    await rows_of.warm_up(sizes, haru, etcd)
    floor = await FloorSide.open(parent / "lmdb-floor")
    try:
        rows, written = await rows_of.write_rows(sizes, haru, etcd, floor, progress)
        rows.append(await rows_of.get_row(sizes, haru, etcd, written, progress))
        del written
        rows += await rows_of.list_rows(sizes, haru, etcd, floor, progress)
    finally:
        await floor.close()
    rows.append(await rows_of.watch_row(sizes, haru, etcd, progress))
    rows.append(await rows_of.compaction_row(sizes, parent, progress))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
