"""Group commit: concurrent writes share commits, acks follow durable commits, failures roll back."""

from __future__ import annotations

import asyncio
from typing import Any

import lmdb
import pytest

from storage import Store, errors, writer
from tests.storage.samples import pod, pod_key


class CommitSpy:
    """Wraps `Writer.commit` to note, on the writer thread, what each transaction made durable."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.durable_revision = 0
        self.batch_sizes: list[int] = []
        original = writer.Writer.commit

        def commit(inner: writer.Writer, batch: list[Any], *args: Any) -> writer.BatchOutcome:
            outcome = original(inner, batch, *args)
            if outcome.failure is None:
                # commit() returned, so LMDB's fsync'ed commit is done.
                self.durable_revision = outcome.revision
                if batch:
                    self.batch_sizes.append(len(batch))
            return outcome

        monkeypatch.setattr(writer.Writer, "commit", commit)


async def test_concurrent_writes_share_few_commits_and_are_acked_after_theirs(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = CommitSpy(monkeypatch)
    acked_before_durable: list[int] = []

    async def write(i: int) -> int:
        record = await store.create(pod_key(f"p{i:04d}"), pod(f"p{i:04d}"))
        if record.revision > spy.durable_revision:
            acked_before_durable.append(record.revision)
        return record.revision

    commits_before = store.commit_count
    revisions = await asyncio.gather(*(write(i) for i in range(500)))

    assert sorted(revisions) == list(range(1, 501))
    assert acked_before_durable == []
    assert store.commit_count - commits_before == len(spy.batch_sizes)
    assert len(spy.batch_sizes) <= 10, spy.batch_sizes
    assert max(spy.batch_sizes) > 1


async def test_writers_that_write_again_right_after_their_ack_join_the_next_batch_together(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 64 writers, each writing again as soon as its write is acknowledged. The first writer's write
    # starts a batch alone; from then on every batch carries all 64, because the next batch starts
    # only after the acknowledged writers have had their turn. (Starting it at once, with whatever
    # was pending, kept splitting them into two alternating halves.)
    spy = CommitSpy(monkeypatch)

    async def writer(w: int) -> None:
        for i in range(5):
            await store.create(pod_key(f"w{w:02d}-{i}"), pod(f"w{w:02d}-{i}"))

    await asyncio.gather(*(writer(w) for w in range(64)))

    assert sum(spy.batch_sizes) == 320
    assert spy.batch_sizes[1:5] == [64, 64, 64, 64], spy.batch_sizes


async def test_a_batch_validates_each_write_against_earlier_writes_of_the_same_batch(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = CommitSpy(monkeypatch)
    created = await store.create(pod_key("a"), pod("a"))
    # A write in flight makes the next five queue up and leave together as one batch.
    plug = asyncio.create_task(store.create(pod_key("plug"), pod("plug")))
    await asyncio.sleep(0)
    results = await asyncio.gather(
        store.update(pod_key("a"), pod("a", data={"w": 1}), expected_revision=created.revision),
        store.update(pod_key("a"), pod("a", data={"w": 2}), expected_revision=created.revision),
        store.create(pod_key("b"), pod("b")),
        store.create(pod_key("b"), pod("b")),
        store.delete(pod_key("a")),
        return_exceptions=True,
    )
    assert spy.batch_sizes[-1] == 5  # all five rode in one transaction
    assert (await plug).revision == 2
    first, second, made, duplicate, deleted = results
    assert first.revision == 3  # type: ignore[union-attr]
    assert isinstance(second, errors.Conflict) and second.actual == 3
    assert made.revision == 4  # type: ignore[union-attr]
    assert isinstance(duplicate, errors.KeyExists)
    assert deleted.revision == 5  # type: ignore[union-attr]
    assert store.revision == 5


async def test_a_failed_commit_fails_its_whole_batch_and_leaves_no_gap(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.create(pod_key("before"), pod("before"))
    real_step = writer.compact_step
    calls = {"n": 0}

    def failing_step(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # the plug's transaction passes, the next one fails at the disk
            raise lmdb.DiskError("injected: the disk said no")
        return real_step(*args)

    monkeypatch.setattr(writer, "compact_step", failing_step)
    plug = asyncio.create_task(store.create(pod_key("plug"), pod("plug")))
    await asyncio.sleep(0)
    results = await asyncio.gather(
        *(store.create(pod_key(f"p{i}"), pod(f"p{i}")) for i in range(5)), return_exceptions=True
    )
    assert (await plug).revision == 2
    assert all(isinstance(r, errors.StorageUnavailable) for r in results), results
    assert store.revision == 2
    assert store.count("/registry/pods/") == 2
    assert store.get(pod_key("before")) is not None

    after = await store.create(pod_key("after"), pod("after"))
    assert after.revision == 3
    assert [e.revision for e in await store.watch("", 0).next_batch()] == [1, 2, 3]


async def test_a_write_cancelled_before_its_batch_starts_is_not_written(store: Store) -> None:
    first = asyncio.create_task(store.create(pod_key("a"), pod("a")))
    await asyncio.sleep(0)  # `a` is now in flight; the next write waits for the next batch
    second = asyncio.create_task(store.create(pod_key("b"), pod("b")))
    await asyncio.sleep(0)
    second.cancel()
    await first
    with pytest.raises(asyncio.CancelledError):
        await second
    third = await store.create(pod_key("c"), pod("c"))
    assert store.get(pod_key("b")) is None
    assert third.revision == 2


async def test_the_event_loop_keeps_running_while_a_batch_commits(store: Store) -> None:
    """The write transaction runs on the writer thread: a ticker on the loop keeps ticking."""
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    ticking = asyncio.create_task(ticker())
    await store.create(pod_key("a"), pod("a"))
    ticks_during_one_write = ticks
    stop.set()
    await ticking
    assert ticks_during_one_write > 1


async def test_a_batch_too_big_for_one_transaction_is_split(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = CommitSpy(monkeypatch)
    real_commit = writer.Writer.commit  # already the spy's wrapper

    def commit_at_most_three(inner: writer.Writer, batch: list[Any], *args: Any) -> writer.BatchOutcome:
        if len(batch) > 3:  # what LMDB says when a transaction dirties too many pages
            return writer.BatchOutcome([], [], args[0], None, False, lmdb.TxnFullError("too big"))
        return real_commit(inner, batch, *args)

    monkeypatch.setattr(writer.Writer, "commit", commit_at_most_three)
    plug = asyncio.create_task(store.create(pod_key("plug"), pod("plug")))
    await asyncio.sleep(0)
    records = await asyncio.gather(*(store.create(pod_key(f"p{i}"), pod(f"p{i}")) for i in range(10)))
    await plug
    assert sorted(r.revision for r in records) == list(range(2, 12))
    assert max(spy.batch_sizes) <= 3
