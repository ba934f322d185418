"""The history policy (`Retention`) and how it becomes compaction work.

`Store.open` takes a `Retention`; `storage/group_commit.py` calls `plan_for` to size the compaction
step it piggybacks on each write batch, and `enforce` runs as a background task that nudges the
committer now and then so that an idle store also drops events that aged out. The step itself is in
`storage/compaction.py`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Protocol

from storage.compaction import CompactionPlan


@dataclass(frozen=True)
class Retention:
    """How much event history the store keeps for watch resumption and lists at old revisions.

    The log is compacted down to at most `max_events` entries, and entries older than
    `max_age_seconds` are removed too. `check_interval_seconds` is how often an idle store looks
    for entries that aged out (a busy store compacts a little in every commit).
    """

    max_events: int = 100_000
    max_age_seconds: float = 600.0
    check_interval_seconds: float = 1.0

    def __post_init__(self) -> None:
        if self.max_events < 0:
            raise ValueError("Retention.max_events must be >= 0")
        if self.max_age_seconds <= 0:
            raise ValueError("Retention.max_age_seconds must be > 0")
        if self.check_interval_seconds <= 0:
            raise ValueError("Retention.check_interval_seconds must be > 0")


def plan_for(
    retention: Retention, revision: int, requested_target: int, max_entries: int
) -> CompactionPlan:
    """The step to take now: the explicit target, the count rule and the age rule combined."""
    target = max(requested_target, revision - retention.max_events)
    return CompactionPlan(target, time.time() - retention.max_age_seconds, max_entries)


class _Nudgeable(Protocol):
    def nudge_compaction(self) -> None: ...


async def enforce(retention: Retention, committer: _Nudgeable) -> None:
    """Forever: every check interval, let the committer run compaction steps if any are due."""
    while True:
        await asyncio.sleep(retention.check_interval_seconds)
        committer.nudge_compaction()
