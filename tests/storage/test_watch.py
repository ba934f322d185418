"""Watch: replay from the log then live, in order, without gaps or duplicates; bounded memory."""

from __future__ import annotations

import asyncio
import tracemalloc

import msgspec
import pytest

from storage import Event, Retention, Store, Watcher, errors, watch_hub
from tests.storage.conftest import OpenStore
from tests.storage.samples import pod, pod_key

decode = msgspec.json.decode


async def collect(watcher: Watcher, count: int, timeout: float = 5.0) -> list[Event]:
    events: list[Event] = []
    async with asyncio.timeout(timeout):
        while len(events) < count:
            events += await watcher.next_batch()
    return events


async def test_replay_then_live_in_order_with_no_gaps_or_duplicates(store: Store) -> None:
    for i in range(5):
        await store.create(pod_key(f"p{i}"), pod(f"p{i}"))
    watcher = store.watch("/registry/pods/ns/", 2)

    async def write_more() -> None:
        for i in range(5, 30):
            await store.create(pod_key(f"p{i}"), pod(f"p{i}"))
            if i % 3 == 0:
                await store.create(pod_key(f"q{i}", "other"), pod(f"q{i}", "other"))

    writer = asyncio.create_task(write_more())
    events = await collect(watcher, 28)
    await writer
    mine = [r.revision for r in store.list("/registry/pods/ns/").records if r.revision > 2]
    assert [e.revision for e in events] == sorted(mine)
    assert all(e.key.startswith("/registry/pods/ns/") for e in events)
    assert len({e.revision for e in events}) == len(events)


async def test_event_payloads(store: Store) -> None:
    watcher = store.watch("", 0)
    created = await store.create(pod_key("a"), pod("a"))
    updated = await store.update(pod_key("a"), pod("a", status={"phase": "Running"}))
    deleted = await store.delete(pod_key("a"))

    added, modified, gone = await collect(watcher, 3)
    assert (added.type, added.value, added.prev_value) == ("ADDED", created.value, None)
    assert (modified.type, modified.value, modified.prev_value) == (
        "MODIFIED", updated.value, created.value
    )
    assert (gone.type, gone.value, gone.prev_value) == ("DELETED", deleted.value, updated.value)
    assert decode(gone.value)["metadata"]["resourceVersion"] == "3"
    assert decode(gone.value)["status"] == {"phase": "Running"}

    # The same payloads come back when replayed from the LMDB log after a restart-free ring miss.
    replayed = await collect(store.watch("", 0), 3)
    assert replayed == [added, modified, gone]


async def test_a_watch_older_than_the_compaction_mark_is_too_old(store: Store) -> None:
    for i in range(6):
        await store.create(pod_key(f"p{i}"), pod(f"p{i}"))
    await store.compact(4)
    with pytest.raises(errors.TooOldResourceVersion) as raised:
        store.watch("", 3)
    assert (raised.value.revision, raised.value.compacted) == (3, 4)
    assert [e.revision for e in await store.watch("", 4).next_batch()] == [5, 6]


async def test_replay_comes_from_the_log_after_a_restart(open_store: OpenStore, tmp_path) -> None:
    path = tmp_path / "replay"
    store = await open_store(path)
    for i in range(4):
        await store.create(pod_key(f"p{i}"), pod(f"p{i}"))
    await store.delete(pod_key("p1"))
    await store.close()

    reopened = await open_store(path)
    watcher = reopened.watch("/registry/pods/", 1)
    await reopened.create(pod_key("p9"), pod("p9"))
    events = await collect(watcher, 5)
    assert [(e.type, e.revision) for e in events] == [
        ("ADDED", 2), ("ADDED", 3), ("ADDED", 4), ("DELETED", 5), ("ADDED", 6)
    ]


async def test_a_slow_watcher_reads_on_from_the_log_and_is_closed_only_once_compacted(
    open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch_hub, "LOG_CHUNK", 50)
    store = await open_store(
        watch_ring_capacity=8, retention=Retention(max_events=10_000, max_age_seconds=3600)
    )
    behind, ahead = store.watch("", 0), store.watch("", 0)
    idle = [store.watch("/registry/pods/", 0) for _ in range(50)]
    for start in range(0, 200, 20):
        await asyncio.gather(
            *(store.create(pod_key(f"p{i:03d}"), pod(f"p{i:03d}")) for i in range(start, start + 20))
        )
        assert store.watch_ring_size <= 16  # the ring stays bounded, whoever lags

    # Far behind the ring, nothing compacted: both catch up from the log in bounded chunks.
    assert [e.revision for e in await behind.next_batch()] == list(range(1, 51))
    got: list[Event] = []
    while len(got) < 150:
        batch = await ahead.next_batch()
        assert len(batch) <= 50
        got += batch
    assert [e.revision for e in got] == list(range(1, 151))

    # Compact past `behind` but not past `ahead`: only the watchers whose position is gone close.
    await store.compact(100)
    with pytest.raises(errors.WatchClosed):
        await behind.next_batch()
    with pytest.raises(errors.WatchClosed):
        await idle[0].next_batch()
    with pytest.raises(errors.WatchClosed):
        async for _ in idle[1]:
            pass
    rest = await collect(ahead, 50)
    assert [e.revision for e in rest] == list(range(151, 201))


async def test_many_waiting_watchers_share_one_commit_future(store: Store) -> None:
    watchers = [store.watch("/registry/pods/ns/", 0) for _ in range(200)]
    waiting = [asyncio.create_task(w.next_batch()) for w in watchers]
    await asyncio.sleep(0)
    assert len({id(w._hub.commit_future("/registry/pods/ns/")) for w in watchers}) == 1
    await store.create(pod_key("a"), pod("a"))
    batches = await asyncio.gather(*waiting)
    assert all([e.revision for e in batch] == [1] for batch in batches)


async def test_a_commit_wakes_only_the_watchers_of_prefixes_it_touched(store: Store) -> None:
    here = store.watch("/registry/pods/here/", 0)
    there = store.watch("/registry/pods/there/", 0)
    waiting_here = asyncio.create_task(here.next_batch())
    waiting_there = asyncio.create_task(there.next_batch(timeout=0.3))
    await asyncio.sleep(0.01)
    await store.create("/registry/pods/here/a", pod("a"))
    assert [e.key for e in await waiting_here] == ["/registry/pods/here/a"]
    assert not waiting_there.done()  # nothing under its prefix: still asleep
    assert await waiting_there == []
    # Timed out with nothing of its own committed: it skipped past what others wrote.
    assert there.cursor == store.revision
    await store.create("/registry/pods/there/b", pod("b"))
    assert [e.key for e in await there.next_batch()] == ["/registry/pods/there/b"]


@pytest.mark.parametrize("prefix", ["", "/", "/registry/", "/registry/pods/", "/registry/pods/here/",
                                    "/registry/pods/here/a", "/registry/pods/he", "/registry/pods/here/ab"])
async def test_a_commit_wakes_every_prefix_of_its_keys_ended_by_a_slash_or_not(store: Store, prefix: str) -> None:
    elsewhere = store.watch("/registry/nodes/", 0)
    watcher = store.watch(prefix, 0)
    waiting = asyncio.create_task(watcher.next_batch())
    waiting_elsewhere = asyncio.create_task(elsewhere.next_batch(timeout=0.2))
    await asyncio.sleep(0.01)
    await store.create("/registry/pods/here/abc", pod("abc"))
    assert [e.key for e in await asyncio.wait_for(waiting, 5)] == ["/registry/pods/here/abc"]
    assert await waiting_elsewhere == []


async def test_cancelling_one_waiting_watcher_does_not_disturb_the_others(store: Store) -> None:
    a, b = store.watch("", 0), store.watch("", 0)
    task_a = asyncio.create_task(a.next_batch())
    task_b = asyncio.create_task(b.next_batch())
    await asyncio.sleep(0.01)
    task_a.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task_a
    await asyncio.sleep(0.01)
    assert not task_b.done()
    await store.create(pod_key("a"), pod("a"))
    assert [e.revision for e in await task_b] == [1]
    assert [e.revision for e in await a.next_batch()] == [1]


async def test_close_ends_iteration_and_wakes_a_waiting_reader(store: Store) -> None:
    watcher = store.watch("", 0)
    received: list[Event] = []

    async def consume() -> None:
        async for event in watcher:
            received.append(event)

    consumer = asyncio.create_task(consume())
    await store.create(pod_key("a"), pod("a"))
    await asyncio.sleep(0.01)
    watcher.close()
    async with asyncio.timeout(2):
        await consumer
    assert [e.revision for e in received] == [1]
    assert await watcher.next_batch() == []


async def test_closing_the_store_closes_watchers_with_watch_closed(open_store: OpenStore) -> None:
    store = await open_store()
    watcher = store.watch("", 0)
    waiting = asyncio.create_task(watcher.next_batch())
    await asyncio.sleep(0.01)
    await store.close()
    with pytest.raises(errors.WatchClosed):
        await waiting


async def test_a_watch_from_the_future_waits_for_its_revision(store: Store) -> None:
    watcher = store.watch("", 3)
    for i in range(5):
        await store.create(pod_key(f"p{i}"), pod(f"p{i}"))
    assert [e.revision for e in await collect(watcher, 2)] == [4, 5]


async def test_lagging_watchers_cost_no_memory_per_event(open_store: OpenStore) -> None:
    """300 watchers that never read, 1,000 events: memory grows by the bounded ring plus a few
    hundred bytes per watcher, not by events × watchers."""
    store = await open_store(
        watch_ring_capacity=16, retention=Retention(max_events=100_000, max_age_seconds=3600)
    )
    await store.create(pod_key("warm"), pod("warm"))
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        watchers = [store.watch("/registry/pods/", 0) for _ in range(300)]
        for start in range(0, 1000, 50):
            await asyncio.gather(*(
                store.create(pod_key(f"p{i:04d}"), pod(f"p{i:04d}", data={"blob": "x" * 2000}))
                for i in range(start, start + 50)
            ))
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    # Holding the 1,000 events (~2 KB each) even once would take over 2 MB.
    assert grown < 1 << 20, f"memory grew by {grown} bytes"
    assert store.watch_ring_size <= 32
    # ... and every one of them can still read the whole history, from the log.
    assert len(await collect(watchers[-1], 1001)) == 1001


async def test_next_batch_with_a_timeout_returns_empty_and_disturbs_no_one(store: Store) -> None:
    timed, patient = store.watch("", 0), store.watch("", 0)
    patient_batch = asyncio.create_task(patient.next_batch())
    await asyncio.sleep(0)
    shared = patient._hub.commit_future()

    started = asyncio.get_running_loop().time()
    assert await timed.next_batch(timeout=0.05) == []
    assert asyncio.get_running_loop().time() - started >= 0.05
    assert not timed.closed
    assert not patient_batch.done() and not shared.done()

    # Cancelling a timed wait cancels only that wait.
    cancelled = asyncio.create_task(timed.next_batch(timeout=10))
    await asyncio.sleep(0.01)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert not shared.done()

    waiting = asyncio.create_task(timed.next_batch(timeout=10))
    await asyncio.sleep(0.01)
    await store.create(pod_key("a"), pod("a"))
    assert [e.revision for e in await waiting] == [1]
    assert [e.revision for e in await patient_batch] == [1]
    assert [e.revision for e in await timed.next_batch(timeout=0)] == []


async def test_close_wakes_a_timed_wait(store: Store) -> None:
    watcher = store.watch("", 0)
    waiting = asyncio.create_task(watcher.next_batch(timeout=30))
    await asyncio.sleep(0.01)
    watcher.close()
    async with asyncio.timeout(1):
        assert await waiting == []


async def test_last_change_moves_only_with_writes_under_its_prefix(store: Store) -> None:
    await store.create(pod_key("a"), pod("a"))
    first = store.last_change("/registry/pods/other/")  # not followed yet: the current revision
    assert first == store.revision
    await store.create(pod_key("b"), pod("b"))
    assert store.last_change("/registry/pods/other/") == first  # a write elsewhere
    created = await store.create(pod_key("c", "other"), pod("c", "other"))
    await store.create(pod_key("d"), pod("d"))
    assert store.last_change("/registry/pods/other/") == created.revision
    deleted = await store.delete(pod_key("c", "other"))
    assert store.last_change("/registry/pods/other/") == deleted.revision
