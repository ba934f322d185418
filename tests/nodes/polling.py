"""`until`: await a check again and again until it holds or a bound passes (the device tests share it).

It returns the last answer rather than raising, so each test asserts on what it got and says why.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def until(check: Any, timeout: float = 20.0) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got = await check()
        if got or loop.time() > deadline:
            return got
        await asyncio.sleep(0.05)
