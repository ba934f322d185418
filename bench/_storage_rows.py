"""One function per row of `bench.storage`'s table: run the case on each side, build the `Row`.

`bench.storage.run_cases` calls these in order on an open haru store and (unless --haru-only) an
etcd client. Each function builds its own inputs and lets them go when it returns, so later cases
(the decoded list above all) do not pay garbage-collector time for the harness's earlier inputs.
The measurements themselves live in `_write_cases`, `_read_cases`, `_watch_case` and
`_compaction_case`; the verdicts in `_report`.
"""

from __future__ import annotations

import gc
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any


from bench import _compaction_case, _read_cases, _watch_case, _write_cases
from bench._pod import namespace_prefix, pod_key, pod_object
from bench._report import Row

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
NS_WARMUP = 90


def build_items(namespace: int, first: int, count: int) -> Items:
    return [(pod_key(namespace, i), pod_object(namespace, i)) for i in range(first, first + count)]


def listed_items(count: int, per_namespace: int) -> Items:
    """`count` objects spread so that each namespace from ns-01 on holds `per_namespace`."""
    return [
        (pod_key(NS_LISTED + i // per_namespace, i), pod_object(NS_LISTED + i // per_namespace, i))
        for i in range(count)
    ]


def _vs_etcd(numerator: float | None, denominator: float | None) -> str:
    """", = N.Nx etcd" for a floor's note, or nothing without etcd (--haru-only)."""
    if numerator is None or not denominator:
        return ""
    return f" = {numerator / denominator:.1f}x etcd"


def _sides(haru: HaruSide, etcd: EtcdSide | None) -> list[Any]:
    return [haru] + ([etcd] if etcd is not None else [])


async def warm_up(sizes: Sizes, haru: HaruSide, etcd: EtcdSide | None) -> None:
    """Open files, connections and code paths on both sides before anything is timed."""
    items = build_items(NS_WARMUP, 0, sizes.warmup_writes)
    half = len(items) // 2
    for side in _sides(haru, etcd):
        await _write_cases.measure_writes(side.put, items[:half], in_flight=1)
        await _write_cases.measure_writes(side.put, items[half:], in_flight=64)
        await side.list_records(namespace_prefix(NS_WARMUP))


async def write_rows(
    sizes: Sizes, haru: HaruSide, etcd: EtcdSide | None, floor: FloorSide, progress: Any
) -> tuple[list[Row], list[str]]:
    """Durable writes with 1 and 64 in flight; returns the rows and every key written.

    The writes run in `sizes.write_rounds` slices, alternating sides (haru, etcd, floor, haru, ...),
    so a burst of load from a neighbour on this shared machine lands on every side alike. `floor`
    (`_floor_side.py`), the least a store like haru can do, is reported in the notes only.
    """
    rows = []
    written: list[str] = []
    for label, in_flight, target in (
        ("durable writes, 1 in flight", 1, 1.5),
        ("durable writes, 64 in flight", 64, 5.0),
    ):
        items = (
            build_items(NS_ONE_IN_FLIGHT, 0, sizes.writes_one_in_flight) if in_flight == 1
            else listed_items(2 * sizes.list_size, sizes.list_size)
        )
        progress(f"{label}: {len(items):,} writes per side in {sizes.write_rounds} alternating rounds")
        parts: dict[str, list[_write_cases.WriteResult]] = {}
        per_round = -(-len(items) // sizes.write_rounds)
        for start in range(0, len(items), per_round):
            for side in _sides(haru, etcd) + [floor]:
                result = await _write_cases.measure_writes(side.put, items[start:start + per_round], in_flight)
                parts.setdefault(side.name, []).append(result)
        results = {name: _write_cases.WriteResult.combine(p) for name, p in parts.items()}
        written += [key for key, _ in items]
        floor_result = results.pop(floor.name)
        notes = [f"{name}: {result.describe()}" for name, result in results.items()]
        notes.append(f"floor, bare py-lmdb group commit through asyncio futures (object + event-log put per "
                     f"write, nothing else; _floor_side.py): {floor_result.ops_per_second:,.0f}/s"
                     + _vs_etcd(floor_result.ops_per_second,
                                results["etcd"].ops_per_second if "etcd" in results else None)
                     + f" ({floor_result.describe()})")
        rows.append(Row(
            case=label, unit="ops/s", haru=results["haru"].ops_per_second,
            etcd=results["etcd"].ops_per_second if "etcd" in results else None,
            ratio_target=target, notes=notes,
        ))
    return rows, written


async def get_row(sizes: Sizes, haru: HaruSide, etcd: EtcdSide | None, written: list[str], progress: Any) -> Row:
    """Single-key get latency over random keys among those written."""
    rng = random.Random(2)
    gc.collect()
    progress(f"single get: haru, {sizes.gets_haru:,} gets")
    _read_cases.measure_gets_sync(haru.get, rng.choices(written, k=1_000))  # warm-up
    haru_gets = _read_cases.measure_gets_sync(haru.get, rng.choices(written, k=sizes.gets_haru))
    etcd_gets = None
    if etcd is not None:
        progress(f"single get: etcd, {sizes.gets_etcd:,} gets")
        await _read_cases.measure_gets_async(etcd.get, rng.choices(written, k=100))  # warm-up
        etcd_gets = await _read_cases.measure_gets_async(etcd.get, rng.choices(written, k=sizes.gets_etcd))
    return Row(
        case="single get, 1 in flight (mean latency)", unit="us", haru=haru_gets.mean_us,
        etcd=etcd_gets.mean_us if etcd_gets else None, higher_is_better=False, ratio_target=100.0,
        notes=[f"haru: {haru_gets.describe()}"] + ([f"etcd: {etcd_gets.describe()}"] if etcd_gets else []),
    )


async def list_rows(sizes: Sizes, haru: HaruSide, etcd: EtcdSide | None, floor: FloorSide,
                    progress: Any) -> list[Row]:
    """The listed namespace in one read: as records, and as records with every value decoded.
    `floor` (which the 64-in-flight writes filled alike) is listed too, for the notes."""
    prefix = namespace_prefix(NS_LISTED)
    lists: dict[str, _read_cases.ListTiming] = {}
    progress(f"prefix list {prefix}: {sizes.list_repeats} rounds alternating sides")
    for _ in range(sizes.list_repeats):
        for side in _sides(haru, etcd) + [floor]:
            timing = await _read_cases.measure_list(side.list_records, prefix, sizes.list_size, 1)
            if side.name in lists:
                lists[side.name].extend(timing)
            else:
                lists[side.name] = timing
    n = f"{sizes.list_size // 1000}k" if sizes.list_size >= 1000 else str(sizes.list_size)
    floor_timing = lists.pop(floor.name)
    etcd_timing = lists.get("etcd")
    rows = []
    for label, attr, notes in (
        (f"prefix list {n} objects: records", "records_ms",
         ["haru: Store.list -> Record tuples; etcd: one range, protobuf-decoded by gRPC, "
          "each entry made an aetcd KeyValue"]
         + [f"{name}: {timing.describe()}" for name, timing in lists.items()]
         + [f"floor, a bare py-lmdb cursor copying each value out into a (key, value) tuple "
            f"(_floor_side.py): {floor_timing.describe()}"
            + _vs_etcd(etcd_timing.records_ms if etcd_timing else None, floor_timing.records_ms)]),
        (f"prefix list {n}: records + JSON decode", "decoded_ms",
         ["the same, plus msgspec.json.decode of every value, on both sides"]
         + [f"floor with the same decode: {floor_timing.decoded_ms:.1f} ms"
            + _vs_etcd(etcd_timing.decoded_ms if etcd_timing else None, floor_timing.decoded_ms)]),
    ):
        rows.append(Row(
            case=label, unit="ms", haru=getattr(lists["haru"], attr),
            etcd=getattr(lists["etcd"], attr) if "etcd" in lists else None,
            higher_is_better=False, ratio_target=10.0, notes=notes,
        ))
    return rows


async def watch_row(sizes: Sizes, haru: HaruSide, etcd: EtcdSide | None, progress: Any) -> Row:
    """Fan-out latency: haru with the full watcher count; etcd smaller, for context only."""
    prefix = namespace_prefix(NS_WATCHED)
    writes = int(sizes.watch_rate * sizes.watch_seconds)
    items = build_items(NS_WATCHED, 0, writes)
    progress(f"watch: haru, {sizes.watchers:,} watchers, {writes:,} writes at {sizes.watch_rate:,.0f}/s")
    haru_watch = await _watch_case.measure_watch(
        lambda rev, log: haru.watch_into(prefix, rev, log), haru.put, items,
        haru.store.revision, sizes.watchers, sizes.watch_rate,
    )
    notes = ["every watcher watches the whole prefix, so each write is delivered once per watcher; "
             "latency = delivery time - time the write's await returned (durable ack)",
             f"haru: {haru_watch.describe()}"] + [f"haru problem: {p}" for p in haru_watch.problems]
    etcd_watch = None
    if etcd is not None:
        etcd_writes = int(sizes.watch_rate * sizes.etcd_watch_seconds)
        etcd_items = build_items(NS_WATCHED, writes, etcd_writes)
        progress(f"watch: etcd, {sizes.etcd_watchers:,} aetcd watchers, {etcd_writes:,} writes")
        etcd_watch = await _watch_case.measure_watch(
            lambda rev, log: etcd.watch_into(prefix, rev, log), etcd.put, etcd_items,
            await etcd.revision(), sizes.etcd_watchers, sizes.watch_rate,
        )
        notes.append(f"etcd, for context only: {etcd_watch.describe()}")
        notes.append("etcd's figure is bound by the aetcd client in this Python process (one Event "
                     "object per watcher per event), not by etcd alone")
        notes += [f"etcd problem: {p}" for p in etcd_watch.problems]
    complete = haru_watch.complete_watchers == haru_watch.watchers
    return Row(
        case=f"watch: {sizes.watchers:,} watchers, {sizes.watch_rate:,.0f} ev/s, ack->delivered p99",
        unit="ms", haru=haru_watch.p99_ack_ms if complete else float("nan"),
        etcd=etcd_watch.p99_ack_ms if etcd_watch else None,
        etcd_label=f"{sizes.etcd_watchers} watchers" if etcd_watch else "",
        show_ratio=False, higher_is_better=False, limit=50.0, limit_label="<= 50 ms (haru only)",
        notes=notes,
    )


async def compaction_row(sizes: Sizes, parent: Path, progress: Any) -> Row:
    """Paced writes with and without compaction, on a store of its own that never compacts by itself."""
    from bench._haru_side import HaruSide
    from storage import Retention

    progress(f"compaction: {sizes.history:,}-event history, paced writes with and without compaction")
    side = await HaruSide.open(
        parent / "haru-compaction",
        Retention(max_events=10 * sizes.history + 100_000, max_age_seconds=10 * 86400.0),
    )
    try:
        paced = int(sizes.compaction_rate * sizes.compaction_seconds)
        result = await _compaction_case.measure_compaction(
            side,
            ((pod_key(NS_HISTORY, i), pod_object(NS_HISTORY, i)) for i in range(sizes.history)),
            build_items(NS_BASELINE, 0, paced),
            build_items(NS_DURING, 0, paced),
            sizes.compaction_rate,
            sizes.compaction_rounds,
        )
    finally:
        await side.close()
    baseline_p99 = result.baseline_p99_ms
    return Row(
        case=f"p99 write latency while compaction runs ({sizes.compaction_rate:,.0f} writes/s paced)",
        unit="ms", haru=result.during_p99_ms if result.during else float("nan"),
        higher_is_better=False, limit=2 * baseline_p99,
        limit_label=f"<= 2x p99 without ({baseline_p99:.2f} ms)",
        notes=[result.describe()],
    )
