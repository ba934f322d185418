"""The event loop haru's long-running processes run on: uvloop where it is installed, else asyncio's.

uvloop's loop and transports are written in C; measured, they take 13-18 % off the cost of each
HTTP request (`shared/reference/measurements.md` §1.5) and more off a create. Nothing in haru
depends on which loop runs: tests run the in-process server on asyncio's and `haru up` on uvloop,
so both stay exercised. It lives in `client/` because every co-process (controllers now, the scheduler
and the hollow nodes next) imports `client` and may not import the supervisor's `cluster`. Callers:
`cluster.cli` (`haru up`), `python -m controllers`, the bench's server children.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Coroutine, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:  # a platform without uvloop (Windows): asyncio's own loop
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run on the fastest loop available."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
