"""When `rest.RestClient` sends a request again, and after how long — client-go's rules.

- **Retry-After.** A 429, or a 5xx carrying `Retry-After`, is retried for any verb after the
  seconds the server asked for. client-go does this 10 times (`maxRetries` in rest/request.go)
  and caps each wait.
- **Idempotent reads.** A GET that lost its connection, or got a 5xx without Retry-After, is
  retried with exponential backoff: the server may simply be restarting.
- **Writes.** Writes are not resent after a lost connection: they may have been applied.
`Retry(attempts=0)` switches retries off. Pure policy: `RestClient.request` asks `delay(...)`.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

import aiohttp

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS"})
TRANSPORT_ERRORS = (aiohttp.ClientConnectionError, aiohttp.ServerDisconnectedError, ConnectionError,
                    asyncio.TimeoutError)


@dataclass(frozen=True)
class Retry:
    attempts: int = 10  # retries after the first try
    initial: float = 0.1
    maximum: float = 5.0
    retry_after_cap: float = 10.0

    def delay(self, attempt: int, method: str, *, status: int | None = None, retry_after: str | None = None,
              transport_error: bool = False) -> float | None:
        """Seconds to wait before try `attempt + 1`, or None: give up and surface the failure."""
        if attempt >= self.attempts:
            return None
        if status is not None and (status == 429 or status >= 500) and retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), self.retry_after_cap)
            except ValueError:
                return self._backoff(attempt)
        if status == 429:
            return self._backoff(attempt)
        if method.upper() in IDEMPOTENT and (transport_error or (status is not None and status >= 500)):
            return self._backoff(attempt)
        return None

    def _backoff(self, attempt: int) -> float:
        base = min(self.initial * (2 ** attempt), self.maximum)
        return base * (0.5 + random.random() / 2)


NEVER = Retry(attempts=0)
