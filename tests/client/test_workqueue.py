"""The work queue: one entry per key, no key processed twice at once, delays and backoff."""

from __future__ import annotations

import asyncio

import pytest

from client.workqueue import ExponentialBackoff, ShutDown, WorkQueue


async def test_a_key_added_many_times_is_queued_once() -> None:
    queue = WorkQueue()
    for _ in range(3):
        queue.add("a")
    queue.add("b")
    assert len(queue) == 2
    assert [await queue.get(), await queue.get()] == ["a", "b"]


async def test_a_key_added_while_being_processed_comes_back_after_done_not_before() -> None:
    queue = WorkQueue()
    queue.add("a")
    key = await queue.get()
    queue.add("a")
    assert len(queue) == 0, "never handed to a second worker while the first holds it"
    queue.done(key)
    assert await asyncio.wait_for(queue.get(), 1) == "a"


async def test_a_waiting_worker_wakes_up_for_a_new_key() -> None:
    queue = WorkQueue()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.add("x")
    assert await asyncio.wait_for(getter, 1) == "x"


async def test_add_after_keeps_the_earliest_request() -> None:
    queue = WorkQueue()
    queue.add_after("k", 10.0)
    queue.add_after("k", 0.01)
    queue.add_after("k", 5.0)
    assert await asyncio.wait_for(queue.get(), 1) == "k"
    queue.done("k")
    await asyncio.sleep(0.05)
    assert len(queue) == 0


def test_backoff_doubles_per_failure_up_to_its_cap_and_forget_starts_over() -> None:
    backoff = ExponentialBackoff(base=0.1, cap=0.5)
    assert [backoff.when("k") for _ in range(5)] == [0.1, 0.2, 0.4, 0.5, 0.5]
    assert backoff.when("other") == 0.1
    backoff.forget("k")
    assert backoff.when("k") == 0.1


async def test_shut_down_releases_waiting_workers() -> None:
    queue = WorkQueue()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.shut_down()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, 1)
    queue.add("ignored")
    assert len(queue) == 0
