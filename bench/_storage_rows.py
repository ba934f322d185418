"""One function per row of `bench.storage`'s table: run the case on every side, build the `Row`.

`bench.storage` calls these in order with a `Sides` (haru's store, the bare py-lmdb floor and,
unless it is missing, an etcd client). Sides alternate in rounds (haru, etcd, floor, haru, ...)
where a case allows, so a neighbour's burst of load on this shared machine lands on every side
alike, and each side's share runs inside `CpuMeter.span` so the row can say what each process
used. Each function builds its own inputs and lets them go when it returns. The measurements live
in `_write_cases`, `_read_cases`, `_watch_case` and `_compaction_case`; verdicts in `_storage_table`.
"""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import _compaction_case, _profiling, _read_cases, _watch_case, _write_cases
from bench._cpu import CpuMeter
from bench._pod import namespace_prefix, pod_key, pod_object
from bench._storage_table import Row

if TYPE_CHECKING:
    from bench._etcd_side import EtcdSide
    from bench._floor_side import FloorSide
    from bench._haru_side import HaruSide
    from bench.storage import Sizes

Items = list[tuple[str, dict[str, Any]]]

# Namespaces give each phase its own keys, so no phase reads or watches another's writes.
NS_ONE_IN_FLIGHT = 0
NS_LISTED = 1  # the 64-in-flight writes fill ns-01 (the listed one) first, then ns-02...
NS_WATCHED = 50
NS_HISTORY, NS_BASELINE, NS_DURING = 70, 71, 72
NS_PROFILED = 80  # writes made only while py-spy samples (--profile), never timed
NS_WARMUP = 90

# Where haru stands against the floor, in the floor-bound note: within this share it is the floor.
NEAR_THE_FLOOR = 0.8


@dataclass
class Sides:
    """Everything a row needs: the sizes, the three sides, why etcd may be absent, where profiles go."""

    sizes: Sizes
    haru: HaruSide
    floor: FloorSide
    etcd: EtcdSide | None
    etcd_missing: str  # the etcd column's text when etcd is None
    etcd_pid: int | None
    progress: Callable[[str], None]
    profile_dir: Path | None = None  # --profile: profile haru and the floor on every row that can
    # Where a row is FLOOR-BOUND, its profile is taken anyway if py-spy is here (bench.storage sets it).
    floor_bound_profile_dir: Path | None = None

    def all(self) -> list[Any]:
        return [self.haru] + ([self.etcd] if self.etcd is not None else []) + [self.floor]

    def meter(self) -> CpuMeter:
        return CpuMeter({"etcd": self.etcd_pid} if self.etcd_pid is not None else None)


def build_items(namespace: int, first: int, count: int) -> Items:
    return [(pod_key(namespace, i), pod_object(namespace, i)) for i in range(first, first + count)]


def listed_items(count: int, per_namespace: int) -> Items:
    """`count` objects spread so that each namespace from ns-01 on holds `per_namespace`."""
    return [
        (pod_key(NS_LISTED + i // per_namespace, i), pod_object(NS_LISTED + i // per_namespace, i))
        for i in range(count)
    ]


def thousands(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else f"{n:,}"


async def warm_up(sides: Sides) -> None:
    """Open files, connections and code paths on every side before anything is timed."""
    items = build_items(NS_WARMUP, 0, sides.sizes.warmup_writes)
    half = len(items) // 2
    for side in sides.all():
        await _write_cases.measure_writes(side.put, items[:half], in_flight=1)
        await _write_cases.measure_writes(side.put, items[half:], in_flight=64)
        await side.list_records(namespace_prefix(NS_WARMUP))


PROFILE_SECONDS = 2.0  # each profiled pass: ~500 samples at py-spy's 250 Hz
# Frames of the harness itself, left out of the profile's inclusive lines.
_HARNESS = ("(bench/storage.py)", "(bench/_storage_rows.py)", "(bench/_write_cases.py)", "(futures/thread.py)")


@contextlib.asynccontextmanager
async def _profiled(directory: Path | None, row: Row, slug: str) -> AsyncIterator[None]:
    """With a directory, py-spy samples this process (haru's or the floor's threads and the loop)
    for the length of an extra, untimed pass of the case; the row's notes get the top frames."""
    async with _profiling.profiled(os.getpid(), directory, slug) as path:
        yield
    if path is not None:
        lines = _profiling.top_frames(path, 6)
        row.notes += [f"py-spy {slug}: {line}" for line in lines
                      if not (line.startswith("incl") and line.endswith(_HARNESS))]
        if slug.endswith("-floor") and row.unit == "ops/s":
            row.notes.append(f"py-spy {slug}: a frame's self share holds the native LMDB calls it makes: "
                             "in FloorSide._commit_batches and Writer.commit that is the transaction's "
                             "commit, page writes and fdatasync")


def _floor_bound_note(row: Row) -> list[str]:
    """Where haru misses the etcd target, say whether the bare floor itself misses it too."""
    if row.etcd_target is None or row.etcd is None or row.floor is None:
        return []
    floor_vs_etcd = row.etcd / row.floor if not row.higher_is_better else row.floor / row.etcd
    haru_vs_floor = row.ratio_to(row.floor) or 0.0
    floor_cpu = row.cpu.get("floor")
    busy = f"; the floor kept {floor_cpu.cores():.2f} cores busy" if floor_cpu else ""
    if haru_vs_floor < NEAR_THE_FLOOR:
        return [f"haru is at {haru_vs_floor:.2f}x the floor, which reaches {floor_vs_etcd:.2f}x etcd: "
                f"haru's own work, not py-lmdb, is what stands between it and the floor{busy}"]
    if ("etcd", "FAIL") in row.checks() and floor_vs_etcd < row.etcd_target:
        faster = ("; haru ran faster than the floor in this run: the disk's latency moves between "
                  "rounds on this shared machine, and both wait on the same commit" if haru_vs_floor > 1.1 else "")
        return [f"FLOOR-BOUND: the bare floor itself reaches only {floor_vs_etcd:.2f}x etcd (target "
                f"{row.etcd_target:g}x) and haru is at {haru_vs_floor:.2f}x the floor: on this machine "
                f"no store on py-lmdb written like this meets the etcd target{busy}{faster}"]
    return []


# What one durable LMDB commit waits for (strace of py-lmdb 3.0.0 / liblmdb 0.9.36 on this VM:
# 200 commits made 200 fdatasync calls and ~5 pwrite64 each, the meta page's through a descriptor
# opened O_DSYNC), against etcd 3.4, whose put waits for one WAL fdatasync.
LMDB_COMMIT = ("a durable LMDB commit (sync=True, metasync=True, as haru and the floor open it) waits on "
               "the disk twice: fdatasync of the data pages, then the meta page written through an O_DSYNC "
               "descriptor; etcd 3.4 waits once (its WAL's fdatasync; bbolt commits in the background)")


async def write_rows(sides: Sides) -> tuple[list[Row], list[str]]:
    """Durable writes with 1 and 64 in flight; returns the rows and every key written."""
    sizes = sides.sizes
    rows = []
    written: list[str] = []
    for label, in_flight, etcd_target, slug in (
        ("durable writes, 1 in flight", 1, 1.5, "writes-1"),
        ("durable writes, 64 in flight", 64, 2.5, "writes-64"),
    ):
        items = (
            build_items(NS_ONE_IN_FLIGHT, 0, sizes.writes_one_in_flight) if in_flight == 1
            else listed_items(2 * sizes.list_size, sizes.list_size)
        )
        sides.progress(f"{label}: {len(items):,} writes per side in {sizes.write_rounds} alternating rounds")
        meter = sides.meter()
        parts: dict[str, list[_write_cases.WriteResult]] = {}
        per_round = -(-len(items) // sizes.write_rounds)
        for start in range(0, len(items), per_round):
            for side in sides.all():
                with meter.span(side.name):
                    result = await _write_cases.measure_writes(side.put, items[start:start + per_round], in_flight)
                parts.setdefault(side.name, []).append(result)
        results = {name: _write_cases.WriteResult.combine(p) for name, p in parts.items()}
        written += [key for key, _ in items]
        notes = [f"{name}: {result.describe()}" for name, result in results.items()]
        row = Row(
            case=label, unit="ops/s", haru=results["haru"].ops_per_second,
            etcd=results["etcd"].ops_per_second if "etcd" in results else None,
            floor=results["floor"].ops_per_second, etcd_target=etcd_target, floor_target=0.8,
            etcd_missing=sides.etcd_missing, cpu=meter.uses, notes=notes,
        )
        row.notes += _floor_bound_note(row)
        if in_flight == 1:
            row.notes.append(LMDB_COMMIT)
        profile_dir = sides.profile_dir
        if profile_dir is None and any(note.startswith("FLOOR-BOUND") for note in row.notes):
            profile_dir = sides.floor_bound_profile_dir
            if profile_dir is None:
                row.notes.append("no py-spy on PATH, so no profile of the floor (pip install py-spy)")
        if profile_dir is not None:
            fastest = max(results["haru"].ops_per_second, results["floor"].ops_per_second)
            extra = build_items(NS_PROFILED + in_flight // 64, 0, int(fastest * PROFILE_SECONDS))
            for side in (sides.haru, sides.floor):
                async with _profiled(profile_dir, row, f"{slug}-{side.name}"):
                    await _write_cases.measure_writes(side.put, extra, in_flight)
        rows.append(row)
    return rows, written


async def get_row(sides: Sides, written: list[str]) -> Row:
    """Single-key get latency over random keys among those written (every side wrote them all)."""
    sizes = sides.sizes
    rng = random.Random(2)
    meter = sides.meter()
    results: dict[str, _read_cases.LatencyResult] = {}
    for side in (sides.haru, sides.floor):
        sides.progress(f"single get: {side.name}, {sizes.gets_haru:,} gets")
        _read_cases.measure_gets_sync(side.get, rng.choices(written, k=1_000))  # warm-up
        keys = rng.choices(written, k=sizes.gets_haru)
        with meter.span(side.name):
            results[side.name] = _read_cases.measure_gets_sync(side.get, keys)
    if sides.etcd is not None:
        sides.progress(f"single get: etcd, {sizes.gets_etcd:,} gets")
        await _read_cases.measure_gets_async(sides.etcd.get, rng.choices(written, k=100))  # warm-up
        keys = rng.choices(written, k=sizes.gets_etcd)
        with meter.span("etcd"):
            results["etcd"] = await _read_cases.measure_gets_async(sides.etcd.get, keys)
    return Row(
        case="single get (mean latency)", unit="us", haru=results["haru"].mean_us,
        etcd=results["etcd"].mean_us if "etcd" in results else None, floor=results["floor"].mean_us,
        higher_is_better=False, etcd_target=100.0, etcd_missing=sides.etcd_missing, cpu=meter.uses,
        notes=["haru: Store.get -> Record; floor: one read transaction and txn.get; etcd: a gRPC Range"]
        + [f"{name}: {result.describe()}" for name, result in results.items()],
    )


async def list_row(sides: Sides) -> Row:
    """The listed namespace in one read, as records holding the stored bytes (nothing decoded)."""
    sizes = sides.sizes
    prefix = namespace_prefix(NS_LISTED)
    meter = sides.meter()
    lists: dict[str, _read_cases.ListTiming] = {}
    sides.progress(f"list {prefix}: {sizes.list_repeats} rounds alternating sides")
    for _ in range(sizes.list_repeats):
        for side in sides.all():
            with meter.span(side.name):
                timing = await _read_cases.measure_list(side.list_records, prefix, sizes.list_size, 1)
            if side.name in lists:
                lists[side.name].extend(timing)
            else:
                lists[side.name] = timing
    row = Row(
        case=f"list {thousands(sizes.list_size)} records (bytes, not decoded)", unit="ms",
        haru=lists["haru"].records_ms, etcd=lists["etcd"].records_ms if "etcd" in lists else None,
        floor=lists["floor"].records_ms, higher_is_better=False, floor_target=0.8,
        etcd_missing=sides.etcd_missing, cpu=meter.uses,
        notes=["haru: Store.list -> Record tuples (key, JSON bytes, revisions) in one snapshot; "
               "floor: a bare cursor copying each value into a (key, value) tuple; etcd: one Range, "
               "protobuf-decoded by gRPC, each entry made an aetcd KeyValue; each side's CPU covers "
               "two lists per round, an untimed warm-up and the timed one"]
        + [f"{name}: {timing.describe()}" for name, timing in lists.items()],
    )
    if sides.profile_dir is not None:
        repeats = int(PROFILE_SECONDS * 1e3 / row.haru) + 1
        for side in (sides.haru, sides.floor):
            async with _profiled(sides.profile_dir, row, f"list-{side.name}"):
                for _ in range(repeats):
                    await side.list_records(prefix)
    return row


async def watch_row(sides: Sides) -> Row:
    """Fan-out latency from commit to delivery: haru and the floor with the full watcher count;
    etcd with fewer (its aetcd watchers cost this process far more per event), for context."""
    sizes = sides.sizes
    prefix = namespace_prefix(NS_WATCHED)
    writes = int(sizes.watch_rate * sizes.watch_seconds)
    items = build_items(NS_WATCHED, 0, writes)
    meter = sides.meter()
    results: dict[str, _watch_case.WatchResult] = {}
    for side in (sides.haru, sides.floor):
        sides.progress(f"watch: {side.name}, {sizes.watchers:,} watchers, {writes:,} writes at {sizes.watch_rate:,.0f}/s")
        with meter.span(side.name):
            results[side.name] = await _watch_case.measure_watch(
                lambda rev, log, side=side: side.watch_into(prefix, rev, log), side.put, items,
                side.revision, sizes.watchers, sizes.watch_rate,
            )
    etcd = sides.etcd
    if etcd is not None:
        etcd_writes = int(sizes.watch_rate * sizes.etcd_watch_seconds)
        etcd_items = build_items(NS_WATCHED, writes, etcd_writes)
        sides.progress(f"watch: etcd, {sizes.etcd_watchers:,} aetcd watchers, {etcd_writes:,} writes")
        start = await etcd.revision()
        with meter.span("etcd"):
            results["etcd"] = await _watch_case.measure_watch(
                lambda rev, log: etcd.watch_into(prefix, rev, log), etcd.put, etcd_items,
                start, sizes.etcd_watchers, sizes.watch_rate,
            )
    notes = ["every watcher watches the whole prefix, so each write is delivered once per watcher; "
             "latency = delivery time - commit time, the moment the write's await returned (the "
             "store's durable ack; a delivery before it counts as 0), for every event of every watcher"]
    for name, result in results.items():
        notes.append(f"{name}: {result.describe()}")
        notes += [f"{name} problem: {p}" for p in result.problems]
    if "etcd" in results:
        notes.append("etcd's figure is bound by the aetcd client in this Python process (one Event "
                     "object per watcher per event), not by etcd alone; it is not judged")

    def figure(name: str) -> float | None:
        result = results.get(name)
        if result is None:
            return None
        return result.p99_ack_ms if result.complete_watchers == result.watchers else float("nan")

    haru = figure("haru")
    assert haru is not None
    return Row(
        case=f"watch: {sizes.watchers:,} watchers, {sizes.watch_rate:,.0f} ev/s, commit->delivered p99",
        unit="ms", haru=haru, etcd=figure("etcd"), floor=figure("floor"), higher_is_better=False,
        limit=50.0, etcd_label=f"{sizes.etcd_watchers} watchers, context only", etcd_comparable=False,
        etcd_missing=sides.etcd_missing, cpu=meter.uses, notes=notes,
    )


async def compaction_row(sides: Sides, parent: Path) -> Row:
    """Paced writes with and without compaction, on a haru store of its own that never compacts
    by itself, then the same on a floor of its own; the target is haru against its own baseline."""
    from bench._floor_side import FloorSide
    from bench._haru_side import HaruSide
    from storage import Retention

    sizes = sides.sizes
    meter = sides.meter()
    results: dict[str, _compaction_case.CompactionResult] = {}
    paced = int(sizes.compaction_rate * sizes.compaction_seconds)
    for name in ("haru", "floor"):
        sides.progress(f"compaction: {name}, {sizes.history:,}-event history, paced writes with and without compaction")
        side: Any
        if name == "haru":
            side = await HaruSide.open(
                parent / "haru-compaction",
                Retention(max_events=10 * sizes.history + 100_000, max_age_seconds=10 * 86400.0),
            )
        else:
            side = await FloorSide.open(parent / "lmdb-floor-compaction")
        try:
            results[name] = await _compaction_case.measure_compaction(
                side,
                ((pod_key(NS_HISTORY, i), pod_object(NS_HISTORY, i)) for i in range(sizes.history)),
                build_items(NS_BASELINE, 0, paced),
                build_items(NS_DURING, 0, paced),
                sizes.compaction_rate,
                sizes.compaction_rounds,
                span=lambda name=name: meter.span(name),
            )
        finally:
            await side.close()
    haru, floor = results["haru"], results["floor"]
    baseline_p99 = haru.baseline_p99_ms
    return Row(
        case=f"p99 write latency while compaction runs ({sizes.compaction_rate:,.0f} writes/s paced)",
        unit="ms", haru=haru.during_p99_ms if haru.during else float("nan"),
        floor=floor.during_p99_ms if floor.during else float("nan"), higher_is_better=False,
        limit=2 * baseline_p99, limit_label=f"<= 2x p99 without ({baseline_p99:.2f} ms)",
        etcd_missing="not measured: the target is haru against itself", cpu=meter.uses,
        notes=[f"haru: {haru.describe()}", f"floor (the same case, after haru's): {floor.describe()}; "
               f"its own with/without ratio {floor.during_p99_ms / floor.baseline_p99_ms:.2f}x",
               "CPU covers the paced windows only, not the history build"],
    )
