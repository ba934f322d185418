"""client/token_source.py: one fetch for callers that ask together, the token kept until its time is
up, a 401's reset and a failed fetch both fetch again, on a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from client.token_source import CachedTokenSource


class Fetches:
    def __init__(self) -> None:
        self.calls = 0
        self.fail = False
        self.gate = asyncio.Event()
        self.gate.set()

    async def __call__(self) -> tuple[str, float]:
        self.calls += 1
        await self.gate.wait()
        if self.fail:
            raise RuntimeError("token request refused")
        return f"token-{self.calls}", 100.0


async def test_callers_asking_together_share_one_fetch() -> None:
    fetch = Fetches()
    fetch.gate.clear()
    source = CachedTokenSource(fetch, clock=lambda: 0.0)
    waiting = [asyncio.ensure_future(source.token()) for _ in range(3)]
    await asyncio.sleep(0)
    fetch.gate.set()
    assert await asyncio.gather(*waiting) == ["token-1"] * 3
    assert fetch.calls == 1


async def test_the_token_is_kept_until_its_time_is_up_or_a_reset() -> None:
    now = [0.0]
    fetch = Fetches()
    source = CachedTokenSource(fetch, clock=lambda: now[0])
    assert await source.token() == "token-1"
    now[0] = 99.0
    assert await source.token() == "token-1"
    now[0] = 100.0
    assert await source.token() == "token-2"
    source.reset()
    assert await source.token() == "token-3"


async def test_a_failed_fetch_is_not_kept_and_a_prefetch_failure_is_quiet() -> None:
    fetch = Fetches()
    fetch.fail = True
    source = CachedTokenSource(fetch, clock=lambda: 0.0)
    source.refresh()  # nobody awaits it: its error waits for the next caller's own fetch
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError):
        await source.token()
    fetch.fail = False
    assert await source.token() == f"token-{fetch.calls}"
