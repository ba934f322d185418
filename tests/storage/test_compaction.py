"""Compaction: bounded steps interleaved with writes; retention by count and by age."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from storage import Retention, Store, compaction, errors, writer
from tests.storage.conftest import OpenStore
from tests.storage.samples import pod, pod_key


class StepSpy:
    """Records, per transaction, how many log entries its compaction step removed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.steps: list[tuple[str, int]] = []  # ("alone" | "with writes", entries removed)
        self.writes_batches = 0
        real_commit = writer.Writer.commit
        real_step = writer.compact_step
        spy = self

        def commit(inner: writer.Writer, batch: list[Any], *args: Any) -> writer.BatchOutcome:
            spy._batch = batch
            if batch:
                spy.writes_batches += 1
            return real_commit(inner, batch, *args)

        def step(txn: Any, dbs: Any, plan: compaction.CompactionPlan, last: int) -> Any:
            before = txn.stat(dbs.log)["entries"]
            result = real_step(txn, dbs, plan, last)
            removed = before - txn.stat(dbs.log)["entries"]
            assert removed <= plan.max_entries
            if removed:
                spy.steps.append(("with writes" if spy._batch else "alone", removed))
            return result

        monkeypatch.setattr(writer.Writer, "commit", commit)
        monkeypatch.setattr(writer, "compact_step", step)


async def test_compaction_runs_in_small_steps_while_writes_go_on(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for start in range(0, 3000, 500):
        await asyncio.gather(
            *(store.create(pod_key(f"p{i:05d}"), pod(f"p{i:05d}")) for i in range(start, start + 500))
        )
    spy = StepSpy(monkeypatch)
    acked_during_compaction: list[int] = []
    compacting = asyncio.create_task(store.compact(2900))

    async def keep_writing() -> None:
        i = 0
        while not compacting.done():
            record = await store.update(pod_key(f"p{i:05d}"), pod(f"p{i:05d}", data={"i": i}))
            acked_during_compaction.append(record.revision)
            i += 1

    await asyncio.gather(compacting, keep_writing())
    assert store.compacted_revision >= 2900
    assert sum(removed for _, removed in spy.steps) == store.compacted_revision
    assert len(spy.steps) >= 3000 // compaction.STANDALONE_ENTRIES
    assert max(removed for _, removed in spy.steps) <= compaction.STANDALONE_ENTRIES
    assert len(acked_during_compaction) >= 2  # writes were acknowledged between the steps
    assert acked_during_compaction == list(range(3001, 3001 + len(acked_during_compaction)))
    with pytest.raises(errors.TooOldResourceVersion):
        store.watch("", 2899)


async def test_retention_by_count_keeps_the_log_bounded(open_store: OpenStore) -> None:
    store = await open_store(retention=Retention(max_events=50, max_age_seconds=3600))
    for start in range(0, 300, 10):
        await asyncio.gather(
            *(store.create(pod_key(f"p{i:03d}"), pod(f"p{i:03d}")) for i in range(start, start + 10))
        )
    # Each batch compacts down to max_events entries behind the revision it started at, so the
    # log holds at most max_events + one batch.
    assert store.revision - store.compacted_revision <= 50 + 10
    assert store.compacted_revision >= 240
    events = await store.watch("", store.compacted_revision).next_batch()
    assert [e.revision for e in events] == list(range(store.compacted_revision + 1, 301))
    with pytest.raises(errors.TooOldResourceVersion):
        store.watch("", 100)
    with pytest.raises(errors.Expired):
        store.list("/registry/pods/", revision=100)
    assert store.count("/registry/pods/") == 300  # compaction drops history, never objects


async def test_retention_by_age_compacts_an_idle_store(open_store: OpenStore) -> None:
    store = await open_store(
        retention=Retention(max_events=10_000, max_age_seconds=0.2, check_interval_seconds=0.05)
    )
    for i in range(20):
        await store.create(pod_key(f"p{i}"), pod(f"p{i}"))
    assert store.compacted_revision == 0
    async with asyncio.timeout(5):
        while store.compacted_revision < 20:
            await asyncio.sleep(0.05)
    assert store.get(pod_key("p3")) is not None
    later = await store.create(pod_key("late"), pod("late"))
    assert [e.revision for e in await store.watch("", 20).next_batch()] == [later.revision]


async def test_compaction_survives_a_restart(open_store: OpenStore, tmp_path) -> None:
    path = tmp_path / "compacted"
    store = await open_store(path)
    for i in range(10):
        await store.create(pod_key(f"p{i}"), pod(f"p{i}"))
    await store.compact(6)
    await store.close()
    reopened = await open_store(path)
    assert (reopened.revision, reopened.compacted_revision) == (10, 6)
    with pytest.raises(errors.TooOldResourceVersion):
        reopened.watch("", 5)


async def test_compacting_to_a_future_revision_is_refused(store: Store) -> None:
    await store.create(pod_key("a"), pod("a"))
    with pytest.raises(ValueError):
        await store.compact(5)
    await store.compact(1)
    await store.compact(1)  # already there: returns at once
    assert store.compacted_revision == 1


async def test_compact_called_while_a_stale_standalone_step_is_in_flight(store: Store) -> None:
    """The retention nudge's step was planned before compact() raised the target; the next step
    must serve the compact(), not fail it."""
    for i in range(20):
        await store.create(pod_key(f"p{i}"), pod(f"p{i}"))
    for target in (5, 12, 20):
        store._committer.nudge_compaction()  # a standalone step with the old target, in flight
        await store.compact(target)
        assert store.compacted_revision == target
