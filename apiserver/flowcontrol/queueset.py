"""One priority level's seats and queues: who runs now, who waits, in which order, who is refused.

A level has a concurrency limit in seats (`config.py` computes it from the shares). A request asks
for `seats` (its work estimate, `estimate.py`) and gets them at once when nothing waits and they
fit. Otherwise:
  - a `Reject` level (catch-all) refuses it (`Rejected("concurrency-limit")`);
  - a `Queue` level deals the flow a hand of `handSize` queues out of `queues` by shuffle sharding
    (the hand depends only on the flow's hash), puts the request on the hand's shortest queue, and
    refuses it if that queue already holds `queueLengthLimit` requests (`"queue-full"`); a request
    still waiting after `wait_limit` seconds leaves and is refused (`"time-out"`).
Dispatch is fair queuing over the queues: each queue has a virtual start time; the non-empty queue
whose head starts first goes next, and is charged the request's seats times its running time (a
guess `G` at dispatch, corrected when the request finishes) — so a flow of wide, slow LISTs pays
for what it uses and a flow of quick one-seat writes keeps getting turns. A head that does not fit
in the free seats waits for them (nothing overtakes it), as upstream's queueset does.
The exempt level never waits and never refuses. Everything runs on the API server's event loop,
so there are no locks. `filter.py` calls `acquire` and `Ticket.release`.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

G = 0.01  # seconds: the service time charged at dispatch, before the real one is known


class Rejected(Exception):
    """The request is not served: `reason` is upstream's label (queue-full, concurrency-limit, time-out)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Waiter:
    seats: int
    queue: "_Queue"
    future: asyncio.Future[None]
    enqueued: float


@dataclass
class _Queue:
    index: int
    waiting: deque[_Waiter] = field(default_factory=deque)
    virtual_start: float = 0.0
    executing_seats: int = 0
    waiting_seats: int = 0


class Ticket:
    """Seats held by one request; `release()` gives them back (once, however often it is called)."""

    __slots__ = ("_level", "seats", "_queue", "_started", "released", "stats")

    def __init__(self, level: "Level", seats: int, queue: _Queue | None) -> None:
        self._level = level
        self.seats = seats
        self.stats: Any = None  # the holder's counters (config.FlowStats): `executing` drops on release
        self._queue = queue
        # Only a queued request's running time is charged to its queue (fair queuing).
        self._started = time.monotonic() if queue is not None else 0.0
        self.released = False

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        if self.stats is not None:
            self.stats.executing -= 1
        self._level._finished(self)


class Level:
    """A priority level's live state. Reconfiguring (`configure`) keeps who runs and who waits."""

    def __init__(self, name: str, *, limit: int, exempt: bool = False, queues: int = 0, hand_size: int = 0,
                 queue_length_limit: int = 0, wait_limit: float = 15.0) -> None:
        self.name = name
        self.executing_seats = 0
        self.executing_requests = 0
        self.waiting_requests = 0
        self.rejected: dict[str, int] = {}
        self._virtual_now = 0.0
        self._queues: list[_Queue] = []
        self._hands: dict[int, tuple[int, ...]] = {}
        self.configure(limit=limit, exempt=exempt, queues=queues, hand_size=hand_size,
                       queue_length_limit=queue_length_limit, wait_limit=wait_limit)

    def configure(self, *, limit: int, exempt: bool, queues: int, hand_size: int, queue_length_limit: int,
                  wait_limit: float) -> None:
        self.limit = max(limit, 1)
        self.exempt = exempt
        self.hand_size = max(1, min(hand_size, queues)) if queues else 0
        self.queue_length_limit = queue_length_limit
        self.wait_limit = wait_limit
        if queues != len(self._queues):
            old = [w for q in self._queues for w in q.waiting]
            self._queues = [_Queue(i) for i in range(queues)]
            self._hands.clear()
            for waiter in old:  # fewer queues, or none (now Reject): whoever waited is let in below
                waiter.queue = self._queues[waiter.queue.index % queues] if queues else waiter.queue
                if queues:
                    waiter.queue.waiting.append(waiter)
                    waiter.queue.waiting_seats += waiter.seats
                elif not waiter.future.done():
                    waiter.future.set_exception(Rejected("concurrency-limit"))
                    self.waiting_requests -= 1
        self._dispatch()

    @property
    def queuing(self) -> bool:
        return bool(self._queues)

    def try_acquire(self, seats: int) -> Ticket | None:
        """The seats at once if they are free and nobody waits (no coroutine: the common case)."""
        if seats > self.limit:
            seats = self.limit
        if self.exempt or (not self.waiting_requests and self.executing_seats + seats <= self.limit):
            self.executing_seats += seats
            self.executing_requests += 1
            return Ticket(self, seats, None)
        return None

    async def acquire(self, flow_hash: int, seats: int) -> Ticket:
        ticket = self.try_acquire(seats)
        if ticket is not None:
            return ticket
        seats = max(1, min(seats, self.limit))
        if not self._queues:
            raise self._reject("concurrency-limit")
        queue = self._shortest(flow_hash)
        if len(queue.waiting) >= self.queue_length_limit:
            raise self._reject("queue-full")
        if not queue.waiting:  # an idle queue rejoins at the present, not with credit from the past
            queue.virtual_start = max(queue.virtual_start, self._virtual_now)
        waiter = _Waiter(seats, queue, asyncio.get_running_loop().create_future(), time.monotonic())
        queue.waiting.append(waiter)
        queue.waiting_seats += seats
        self.waiting_requests += 1
        self._dispatch()
        try:
            await asyncio.wait_for(asyncio.shield(waiter.future), self.wait_limit)
        except asyncio.TimeoutError:
            if waiter.future.done() and waiter.future.exception() is None:
                return Ticket(self, seats, waiter.queue)  # dispatched as the clock ran out: take it
            self._forget(waiter)
            raise self._reject("time-out") from None
        except asyncio.CancelledError:  # the client went away while waiting
            if waiter.future.done() and not waiter.future.cancelled() and waiter.future.exception() is None:
                Ticket(self, seats, waiter.queue).release()
            else:
                self._forget(waiter)
            raise
        return Ticket(self, seats, waiter.queue)

    def _reject(self, reason: str) -> Rejected:
        self.rejected[reason] = self.rejected.get(reason, 0) + 1
        return Rejected(reason)

    def _forget(self, waiter: _Waiter) -> None:
        try:
            waiter.queue.waiting.remove(waiter)
        except ValueError:
            return
        waiter.queue.waiting_seats -= waiter.seats
        self.waiting_requests -= 1
        self._dispatch()

    def _finished(self, ticket: Ticket) -> None:
        self.executing_seats -= ticket.seats
        self.executing_requests -= 1
        queue = ticket._queue
        if queue is not None and queue.index < len(self._queues) and self._queues[queue.index] is queue:
            queue.executing_seats -= ticket.seats
            # Charge the queue what the request really cost (G was charged at dispatch).
            queue.virtual_start += ticket.seats * (time.monotonic() - ticket._started - G)
        if self.waiting_requests:
            self._dispatch()

    def _dispatch(self) -> None:
        while self.waiting_requests:
            queue = min((q for q in self._queues if q.waiting), key=lambda q: q.virtual_start, default=None)
            if queue is None:
                return
            head = queue.waiting[0]
            if self.executing_seats + head.seats > self.limit:
                return  # the head waits for seats; nothing overtakes it
            queue.waiting.popleft()
            queue.waiting_seats -= head.seats
            self.waiting_requests -= 1
            self._virtual_now = queue.virtual_start
            queue.virtual_start += head.seats * G
            self.executing_seats += head.seats
            self.executing_requests += 1
            queue.executing_seats += head.seats
            if not head.future.done():
                head.future.set_result(None)

    def _shortest(self, flow_hash: int) -> _Queue:
        hand = self._hands.get(flow_hash)
        if hand is None:
            if len(self._hands) > 10_000:
                self._hands.clear()
            hand = self._hands[flow_hash] = deal(flow_hash, len(self._queues), self.hand_size)
        return min((self._queues[i] for i in hand), key=lambda q: q.waiting_seats + q.executing_seats)


def deal(value: int, deck: int, hand: int) -> tuple[int, ...]:
    """Shuffle sharding: `hand` distinct cards out of `deck`, picked by the digits of `value` in a
    mixed radix (deck, deck-1, …), so different flows rarely share a whole hand."""
    remaining = list(range(deck))
    cards = []
    for i in range(hand):
        value, pick = divmod(value, deck - i)
        cards.append(remaining.pop(pick))
    return tuple(cards)
