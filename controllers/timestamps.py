"""RFC 3339 timestamps as the API server writes them (second precision, `Z`), to and from epoch
seconds. The Job, TTL-after-finished and CronJob controllers take an injectable clock returning
epoch seconds and use these to write and read status times.
"""

from __future__ import annotations

from datetime import datetime, timezone


def format(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
