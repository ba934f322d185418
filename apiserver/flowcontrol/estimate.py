"""How many seats a request occupies while it runs: upstream's work estimator, by object count.

Most requests take one seat. A LIST (and a WATCH that starts with initial events: resourceVersion
unset or "0", or `sendInitialEvents=true`) takes one seat per 100 objects it will go through —
the collection's count when served from memory (haru always is, like upstream's watch cache),
twice the page when a `limit` + `continue` or an exact resourceVersion reads the store, the count
plus the page when it also filters by selector — at least 1, at most 10 and never more than the
level's limit. A LIST naming one object (`metadata.name=` field selector) takes one seat. Counts are
looked up in the store at most once per `COUNT_TTL` per collection, as upstream's object-count
tracker refreshes them periodically. Called by `filter.py` once the request is classified.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Mapping

OBJECTS_PER_SEAT = 100
MAX_SEATS = 10
COUNT_TTL = 5.0  # seconds


class Estimator:
    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self._counts: dict[str, tuple[float, int]] = {}

    def seats(self, verb: str, prefix: str | None, query: Mapping[str, Any], level_limit: int) -> int:
        if verb not in ("list", "watch") or prefix is None:
            return 1
        if verb == "watch":
            initial = query.get("sendInitialEvents") == "true" or query.get("resourceVersion", "") in ("", "0")
            if not initial:
                return 1
        if "metadata.name=" in query.get("fieldSelector", "") and "," not in query.get("fieldSelector", ""):
            return 1
        stored = self._stored(prefix)
        limit = _int(query.get("limit"))
        page = limit if 0 < limit < stored else stored
        from_store = verb == "list" and (query.get("continue") or query.get("resourceVersionMatch") == "Exact")
        if not from_store:
            objects = stored
        elif query.get("fieldSelector") or query.get("labelSelector"):
            objects = stored + page
        else:
            objects = 2 * page
        return max(1, min(math.ceil(objects / OBJECTS_PER_SEAT), MAX_SEATS, level_limit))

    def _stored(self, prefix: str) -> int:
        now = time.monotonic()
        cached = self._counts.get(prefix)
        if cached is not None and now - cached[0] < COUNT_TTL:
            return cached[1]
        n = self._count(prefix)
        self._counts[prefix] = (now, n)
        return n


def _int(raw: Any) -> int:
    try:
        return int(raw) if raw else 0
    except ValueError:
        return 0
