"""What the workload controllers read off a pod: active, ready, available, and the order to delete in.

`is_active` (not Succeeded/Failed, not being deleted), `is_ready` (the Ready condition is True),
`is_available(pod, min_ready_seconds, now)` (ready for longer than minReadySeconds), and
`deletion_order(pods, related, now)`: upstream's ActivePodsWithRanks, the pods most worth
deleting first — unscheduled, pending, not ready, cheaper by pod-deletion-cost, doubled up on a
node, ready more recently, restarted more, created more recently (log2 time buckets, then uid).
Used by `replica_set.py`.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from datetime import datetime, timezone
from typing import Any

Obj = dict[str, Any]
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}


def parse_time(value: str | None) -> float | None:
    """An RFC 3339 timestamp as epoch seconds; None when absent or unreadable."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def format_time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _status(pod: Obj) -> Obj:
    return pod.get("status") or {}


def is_active(pod: Obj) -> bool:
    return _status(pod).get("phase") not in ("Succeeded", "Failed") and \
        not (pod.get("metadata") or {}).get("deletionTimestamp")


def is_terminating(pod: Obj) -> bool:
    """Being deleted but not yet finished: what status.terminatingReplicas counts."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and \
        _status(pod).get("phase") not in ("Succeeded", "Failed")


def ready_condition(pod: Obj) -> Obj | None:
    for condition in _status(pod).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition  # type: ignore[no-any-return]
    return None


def is_ready(pod: Obj) -> bool:
    condition = ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def is_available(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    if not is_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    since = parse_time((ready_condition(pod) or {}).get("lastTransitionTime"))
    return since is not None and since + min_ready_seconds < now


def ready_since(pod: Obj) -> float | None:
    return parse_time((ready_condition(pod) or {}).get("lastTransitionTime")) if is_ready(pod) else None


def deletion_cost(pod: Obj) -> int:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST)
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        return 0  # the API server refuses bad values; an old object keeps the default


def max_restarts(pod: Obj) -> int:
    return max((c.get("restartCount") or 0 for c in _status(pod).get("containerStatuses") or []), default=0)


def _log_bucket(moment: float, now: float) -> int:
    age_ns = (now - moment) * 1e9
    return int(math.log2(age_ns)) if age_ns > 0 else -1


def _newer_first(t1: float | None, t2: float | None, now: float, uid1: str, uid2: str) -> int:
    """-1 when the first goes first: a missing time, then the younger by log2 bucket, then by uid."""
    if t1 is None or t2 is None:
        return -1 if t1 is None else 1
    bucket = _log_bucket(t1, now) - _log_bucket(t2, now)
    if bucket == 0:
        return -1 if uid1 < uid2 else (1 if uid1 > uid2 else 0)
    return -1 if bucket < 0 else 1


def _compare(a: tuple[Obj, int], b: tuple[Obj, int], now: float) -> int:
    (p, rank_p), (q, rank_q) = a, b
    node_p, node_q = (p.get("spec") or {}).get("nodeName") or "", (q.get("spec") or {}).get("nodeName") or ""
    if node_p != node_q and (not node_p or not node_q):
        return -1 if not node_p else 1
    phase_p, phase_q = _PHASE_ORDER.get(_status(p).get("phase") or "", 0), _PHASE_ORDER.get(_status(q).get("phase") or "", 0)
    if phase_p != phase_q:
        return -1 if phase_p < phase_q else 1
    if is_ready(p) != is_ready(q):
        return -1 if not is_ready(p) else 1
    if deletion_cost(p) != deletion_cost(q):
        return -1 if deletion_cost(p) < deletion_cost(q) else 1
    if rank_p != rank_q:
        return -1 if rank_p > rank_q else 1
    uid_p, uid_q = (p.get("metadata") or {}).get("uid") or "", (q.get("metadata") or {}).get("uid") or ""
    if is_ready(p) and is_ready(q):
        since_p, since_q = ready_since(p), ready_since(q)
        if since_p != since_q:
            order = _newer_first(since_p, since_q, now, uid_p, uid_q)
            if order:
                return order
    if max_restarts(p) != max_restarts(q):
        return -1 if max_restarts(p) > max_restarts(q) else 1
    born_p = parse_time((p.get("metadata") or {}).get("creationTimestamp"))
    born_q = parse_time((q.get("metadata") or {}).get("creationTimestamp"))
    if born_p != born_q:
        return _newer_first(born_p, born_q, now, uid_p, uid_q)
    return 0


def deletion_order(pods: list[Obj], related: list[Obj], now: float) -> list[Obj]:
    """`pods` sorted most-deletable first; a pod's rank is how many active `related` pods share its node."""
    on_node = Counter((r.get("spec") or {}).get("nodeName") or "" for r in related if is_active(r))
    ranked = [(pod, on_node[(pod.get("spec") or {}).get("nodeName") or ""]) for pod in pods]
    ranked.sort(key=functools.cmp_to_key(lambda a, b: _compare(a, b, now)))
    return [pod for pod, _ in ranked]
