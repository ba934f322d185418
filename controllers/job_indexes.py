"""Completion indexes of Indexed Jobs: the interval text of `status.completedIndexes` and
`failedIndexes` ("1,3-5,7"), and the index a pod carries.

Upstream's indexed_job_utils.go keeps sorted intervals; here a set of ints is turned to and from
that text. `index_of(pod)` reads the `batch.kubernetes.io/job-completion-index` annotation (the
label as a fallback) and answers None for a missing or malformed one, as upstream's
getCompletionIndex does. Used by `job.py`, `job_success_policy.py` and `job_failure_policy.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

INDEX_KEY = "batch.kubernetes.io/job-completion-index"
INDEX_ENV = "JOB_COMPLETION_INDEX"


def parse(text: str | None, completions: int | None = None) -> set[int]:
    """The indexes an interval text names; indexes at or past `completions` are dropped (the
    count may have shrunk), a malformed part is ignored as upstream's parser does."""
    found: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        try:
            first, last = int(low), int(high) if high else int(low)
        except ValueError:
            continue
        if completions is not None:
            last = min(last, completions - 1)
        found.update(range(first, last + 1))
    return found


def format(indexes: Iterable[int]) -> str:
    """Sorted intervals: consecutive runs of two or more are written `a-b`."""
    ordered = sorted(set(indexes))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def index_of(pod: dict[str, Any]) -> int | None:
    meta = pod.get("metadata") or {}
    for source in (meta.get("annotations") or {}, meta.get("labels") or {}):
        value = source.get(INDEX_KEY)
        if value is None:
            continue
        if isinstance(value, str) and value.isdigit() and (value == "0" or not value.startswith("0")):
            return int(value)
        return None
    return None
