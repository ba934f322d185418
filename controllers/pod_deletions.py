"""Deleting a controller's surplus pods at once, as the ReplicaSet and DaemonSet controllers do.

`delete_all(client, expectations, key, pods, record)` notes the deletions it expects, sends every
DELETE concurrently, records SuccessfulDelete or FailedDelete through `record(type, reason,
message)` with upstream's texts, forgets the expectation of a delete that failed, and answers the
first failure (a pod already gone is no failure). Used by `replica_set.py` and `daemon_set.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from client import cache, errors
from client.resources import PODS
from client.rest import RestClient
from controllers.expectations import Expectations

Obj = dict[str, Any]
Record = Callable[[str, str, str], Awaitable[Any]]


def error_text(exc: BaseException) -> str:
    return exc.message if isinstance(exc, errors.APIError) and exc.message else str(exc)


async def delete_all(client: RestClient, expectations: Expectations, key: str, pods: list[Obj],
                     record: Record) -> errors.APIError | None:
    if not pods:
        return None
    expectations.expect_deletions(key, [cache.key_of(p) for p in pods])

    async def one(pod: Obj) -> errors.APIError | None:
        meta = pod.get("metadata") or {}
        try:
            await client.delete(PODS, meta["name"], meta["namespace"])
        except errors.APIError as exc:
            expectations.deletion_observed(key, cache.key_of(pod))
            if errors.is_not_found(exc):
                return None
            await record("Warning", "FailedDelete", f"Error deleting: {error_text(exc)}")
            return exc
        await record("Normal", "SuccessfulDelete", f"Deleted pod: {meta['name']}")
        return None

    failures = [f for f in await asyncio.gather(*(one(p) for p in pods)) if f is not None]
    return failures[0] if failures else None
