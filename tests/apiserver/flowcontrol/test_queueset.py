"""A priority level's seats and queues (`queueset.Level`): admit, queue fairly, refuse as upstream.

Each test drives one Level on the test's own event loop with futures it controls; no timing is
asserted, only who is admitted, in which order, and why one is refused.
"""

from __future__ import annotations

import asyncio

import pytest

from apiserver.flowcontrol import queueset


def _level(**kw) -> queueset.Level:
    shape = dict(limit=2, queues=8, hand_size=2, queue_length_limit=3, wait_limit=30.0)
    shape.update(kw)
    return queueset.Level("test", **shape)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_requests_that_fit_run_at_once_and_the_rest_wait_for_released_seats():
    level = _level()
    first, second = await level.acquire(1, 1), await level.acquire(2, 1)
    third = asyncio.ensure_future(level.acquire(3, 1))
    await _settle()
    assert not third.done() and level.waiting_requests == 1 and level.executing_seats == 2
    first.release()
    ticket = await asyncio.wait_for(third, 5)
    assert level.executing_seats == 2 and level.waiting_requests == 0
    first.release()  # a second release gives nothing back twice
    assert level.executing_seats == 2
    second.release()
    ticket.release()
    assert level.executing_seats == 0


async def test_a_wide_request_takes_its_seats_and_a_head_that_does_not_fit_is_not_overtaken():
    level = _level(limit=4, queues=1, hand_size=1)
    wide = await level.acquire(1, 3)
    assert wide.seats == 3
    big = asyncio.ensure_future(level.acquire(2, 3))  # does not fit: waits
    await _settle()
    small = asyncio.ensure_future(level.acquire(2, 1))  # would fit, but queues behind the head that does not
    await _settle()
    assert not big.done() and not small.done()
    wide.release()
    (await asyncio.wait_for(big, 5)).release()
    (await asyncio.wait_for(small, 5)).release()


async def test_seats_asked_beyond_the_limit_are_capped_at_it():
    level = _level(limit=2)
    ticket = await level.acquire(1, 10)
    assert ticket.seats == 2


async def test_a_reject_level_refuses_when_full_with_reason_concurrency_limit():
    level = _level(queues=0)
    held = await level.acquire(1, 2)
    with pytest.raises(queueset.Rejected) as refused:
        await level.acquire(1, 1)
    assert refused.value.reason == "concurrency-limit" and level.rejected == {"concurrency-limit": 1}
    held.release()


async def test_a_full_queue_refuses_with_reason_queue_full():
    level = _level(limit=1, queues=1, hand_size=1, queue_length_limit=2)
    held = await level.acquire(1, 1)
    waiting = [asyncio.ensure_future(level.acquire(1, 1)) for _ in range(2)]
    await _settle()
    with pytest.raises(queueset.Rejected) as refused:
        await level.acquire(1, 1)
    assert refused.value.reason == "queue-full"
    held.release()
    for w in waiting:
        (await asyncio.wait_for(w, 5)).release()


async def test_a_request_still_waiting_at_the_wait_limit_leaves_with_reason_time_out():
    level = _level(limit=1, wait_limit=0.01)
    held = await level.acquire(1, 1)
    with pytest.raises(queueset.Rejected) as refused:
        await level.acquire(2, 1)
    assert refused.value.reason == "time-out" and level.waiting_requests == 0
    held.release()
    assert level.executing_seats == 0


async def test_the_exempt_level_never_waits():
    level = _level(limit=1, exempt=True)
    tickets = [await level.acquire(i, 1) for i in range(10)]
    assert level.executing_requests == 10
    for t in tickets:
        t.release()


async def test_fair_queuing_gives_a_quiet_flow_its_turn_ahead_of_a_busy_flows_backlog():
    level = _level(limit=1, queues=64, hand_size=1, queue_length_limit=50)
    busy_hash, quiet_hash = 0, 1  # hand size 1: one queue each, different queues
    assert queueset.deal(busy_hash, 64, 1) != queueset.deal(quiet_hash, 64, 1)
    held = await level.acquire(busy_hash, 1)
    order: list[str] = []

    async def one(name: str, flow: int) -> None:
        ticket = await level.acquire(flow, 1)
        order.append(name)
        await asyncio.sleep(0)
        ticket.release()
    busy = [asyncio.ensure_future(one(f"busy-{i}", busy_hash)) for i in range(5)]
    await _settle()
    quiet = asyncio.ensure_future(one("quiet", quiet_hash))
    await _settle()
    held.release()
    await asyncio.wait_for(asyncio.gather(*busy, quiet), 5)
    assert order.index("quiet") <= 1, order  # not behind the busy flow's whole backlog


async def test_a_client_that_goes_away_while_waiting_leaves_its_queue():
    level = _level(limit=1)
    held = await level.acquire(1, 1)
    waiter = asyncio.ensure_future(level.acquire(2, 1))
    await _settle()
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert level.waiting_requests == 0
    held.release()
    assert level.executing_seats == 0


def test_shuffle_sharding_deals_distinct_cards_from_the_deck():
    for value in (0, 1, 12345678901234567, 2**64 - 1):
        hand = queueset.deal(value, 128, 6)
        assert len(set(hand)) == 6 and all(0 <= c < 128 for c in hand)
    assert queueset.deal(7, 128, 6) == queueset.deal(7, 128, 6)
