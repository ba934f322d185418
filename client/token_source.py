"""`CachedTokenSource`: a bearer token fetched when first needed and again before it expires.

client-go's transport.NewCachedTokenSource wrapped by ResettableTokenSourceWrapTransport: the
`fetch` callable answers `(token, seconds it may be used)`; callers that ask at the same time share
one fetch; a failed fetch is not cached (the next request asks again); `reset()` (a 401 answer)
drops the token so the next request fetches a fresh one. `rest.RestClient(token_source=...)` asks
it before every request. `controllers/client_builder.py` makes one per controller.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

Fetch = Callable[[], Awaitable[tuple[str, float]]]


class TokenSource(Protocol):
    async def token(self) -> str: ...

    def reset(self) -> None: ...


class CachedTokenSource:
    def __init__(self, fetch: Fetch, clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch
        self._clock = clock
        self._token = ""
        self._expiry = 0.0
        self._pending: asyncio.Future[str] | None = None

    async def token(self) -> str:
        if self._token and self._clock() < self._expiry:
            return self._token
        return await asyncio.shield(self.refresh())

    def refresh(self) -> asyncio.Future[str]:
        """The fetch under way, or a new one (also what a prefetch at start-up calls)."""
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._refresh())
            self._pending.add_done_callback(_retrieved)
        return self._pending

    async def _refresh(self) -> str:
        try:
            token, seconds = await self._fetch()
            self._token, self._expiry = token, self._clock() + seconds
            return token
        finally:
            self._pending = None

    def reset(self) -> None:
        self._expiry = 0.0


def _retrieved(future: asyncio.Future[str]) -> None:
    # A prefetch nobody awaited may fail; its caller will fetch again and see the error then.
    if not future.cancelled():
        future.exception()
