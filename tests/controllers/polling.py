"""`eventually(check)`: poll an async check until it holds, for tests that wait on controllers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(check: Callable[[], Awaitable[T | None]], timeout: float = 5.0, interval: float = 0.05) -> T:
    """Await `check()` until it returns something truthy; fail with its last value after `timeout`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await check()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"condition not met after {timeout}s (last: {value!r})")
        await asyncio.sleep(interval)
