"""The arithmetic of a PodDisruptionBudget's status, as upstream's disruption controller does it.

`scaled(value, total)` reads minAvailable / maxUnavailable (an int or "N%", percentages rounded
up); `desired_healthy(spec, pod_count, expected_scale)` gives (expectedPods, desiredHealthy);
`disrupted_pods(pdb, pods, now)` keeps the evictions not yet seen as deletions for two minutes
(with the moment to look again and the pods that overstayed); `current_healthy` counts ready pods
neither deleting nor disrupted; `status(...)` builds the new status with the DisruptionAllowed
condition. Pure functions; `disruption.py` feeds them from its informers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from controllers import pod_states, timestamps

Obj = dict[str, Any]
DELETION_TIMEOUT = 120.0  # upstream's DeletionTimeout: how long an eviction may wait for its pod's deletion
CONDITION = "DisruptionAllowed"


class BudgetError(ValueError):
    """The status cannot be computed; the controller writes the SyncFailed condition with this text."""


def scaled(value: int | str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent with rounding up."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise BudgetError(f"invalid value for IntOrString: invalid type: string is not a percentage")
    try:
        percent = int(value[:-1])
    except ValueError:
        raise BudgetError(f"invalid value {value!r}: strconv.Atoi: parsing {value[:-1]!r}: invalid syntax") from None
    return math.ceil(percent * total / 100)


def desired_healthy(spec: Obj, pod_count: int, expected_scale: Callable[[], int]) -> tuple[int, int]:
    """(expectedPods, desiredHealthy). The controllers' scale is asked only when a rule needs it:
    maxUnavailable always, minAvailable only as a percentage (an integer counts the pods there are)."""
    if spec.get("maxUnavailable") is not None:
        expected = expected_scale()
        return expected, max(expected - scaled(spec["maxUnavailable"], expected), 0)
    minimum = spec.get("minAvailable")
    if minimum is None:
        return 0, 0
    if isinstance(minimum, int):
        return pod_count, minimum
    expected = expected_scale()
    return expected, scaled(minimum, expected)


def disrupted_pods(pdb: Obj, pods: list[Obj], now: float) -> tuple[dict[str, str], float | None, list[Obj]]:
    """The disruptedPods entries still pending, the earliest time one expires, and the pods whose
    eviction expired without a deletion (upstream warns about them with a NotDeleted event)."""
    recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
    kept: dict[str, str] = {}
    recheck: float | None = None
    overdue: list[Obj] = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") or meta.get("name") not in recorded:
            continue
        since = timestamps.parse(recorded[meta["name"]])
        if since is None:
            continue
        expires = since + DELETION_TIMEOUT
        if expires < now:
            overdue.append(pod)
            continue
        kept[meta["name"]] = recorded[meta["name"]]
        recheck = expires if recheck is None else min(recheck, expires)
    return kept, recheck, overdue


def current_healthy(pods: list[Obj], disrupted: dict[str, str]) -> int:
    return sum(1 for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")
               and (p.get("metadata") or {}).get("name") not in disrupted and pod_states.is_ready(p))


def set_condition(conditions: list[Obj], wanted: Obj, now: str) -> list[Obj]:
    """meta.SetStatusCondition: the transition time moves only when the status changes."""
    result = []
    found = False
    for condition in conditions:
        if condition.get("type") != wanted["type"]:
            result.append(condition)
            continue
        found = True
        since = condition.get("lastTransitionTime") if condition.get("status") == wanted["status"] else now
        result.append({**wanted, "lastTransitionTime": since or now})
    if not found:
        result.append({**wanted, "lastTransitionTime": now})
    return result


def allowed_condition(allowed: int, generation: int) -> Obj:
    if allowed > 0:
        return {"type": CONDITION, "status": "True", "observedGeneration": generation, "reason": "SufficientPods",
                "message": ""}
    return {"type": CONDITION, "status": "False", "observedGeneration": generation, "reason": "InsufficientPods",
            "message": ""}


def status(pdb: Obj, healthy: int, desired: int, expected: int, disrupted: dict[str, str], now: str) -> Obj:
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    generation = (pdb.get("metadata") or {}).get("generation") or 0
    old = pdb.get("status") or {}
    new: Obj = {"observedGeneration": generation, "disruptionsAllowed": allowed, "currentHealthy": healthy,
                "desiredHealthy": desired, "expectedPods": expected}
    if disrupted:
        new["disruptedPods"] = disrupted
    new["conditions"] = set_condition(old.get("conditions") or [], allowed_condition(allowed, generation), now)
    return new


def failed_status(pdb: Obj, message: str, now: str) -> Obj:
    """upstream's failSafe: no disruptions allowed, and the SyncFailed condition says why."""
    old = dict(pdb.get("status") or {})
    generation = old.get("observedGeneration") or 0
    old["disruptionsAllowed"] = 0
    old["conditions"] = set_condition(old.get("conditions") or [], {
        "type": CONDITION, "status": "False", "observedGeneration": generation, "reason": "SyncFailed",
        "message": message}, now)
    return old


def same(old: Obj, new: Obj) -> bool:
    """Whether writing `new` would change nothing that matters (transition times aside)."""
    keys = ("observedGeneration", "disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")
    if any((old.get(k) or 0) != (new.get(k) or 0) for k in keys):
        return False
    if (old.get("disruptedPods") or {}) != (new.get("disruptedPods") or {}):
        return False
    strip = lambda cs: [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in cs or []]  # noqa: E731
    return strip(old.get("conditions")) == strip(new.get("conditions"))


def format_time(epoch: float) -> str:
    return timestamps.format(epoch)
