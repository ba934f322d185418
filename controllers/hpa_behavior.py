"""How far the HPA may move at once: stabilization windows and scaling policies (horizontal.go's
normalizeDesiredReplicas and its `behavior` twin), pure over recorded recommendations and events.

Without `behavior`: the highest recommendation of the last 300 s (scale-down stabilization), then at
most max(2 × current, 4) and within min/max. With it: the recommendation is held between the lowest
of the scale-up window and the highest of the scale-down window (default 300 s down, 0 up), then
the policies of the direction (Pods or Percent per period, Max/Min/Disabled) limit the change from
the replica count at the start of each period. Each step answers the condition reason and message
upstream sets (AbleToScale, ScalingLimited). `State` keeps one HPA's history; times are epoch seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

DEFAULT_DOWN_WINDOW = 300
MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)
SCALE_UP_DEFAULT = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                 {"type": "Percent", "value": 100, "periodSeconds": 15}]}
SCALE_DOWN_DEFAULT = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}

READY = ("ReadyForNewScale", "recommended size matches current size")
DOWN_STABILIZED = ("ScaleDownStabilized",
                   "recent recommendations were higher than current one, applying the highest recent recommendation")
UP_STABILIZED = ("ScaleUpStabilized",
                 "recent recommendations were lower than current one, applying the lowest recent recommendation")
WITHIN_RANGE = ("DesiredWithinRange", "the desired count is within the acceptable range")
UP_LIMIT = ("ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
DOWN_LIMIT = ("ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")
TOO_MANY = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
TOO_FEW = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")


@dataclass
class Recommendation:
    replicas: int
    at: float


@dataclass
class ScaleEvent:
    change: int
    at: float


@dataclass
class State:
    recommendations: list[Recommendation] = field(default_factory=list)
    ups: list[ScaleEvent] = field(default_factory=list)
    downs: list[ScaleEvent] = field(default_factory=list)


@dataclass(frozen=True)
class Outcome:
    replicas: int
    able_to_scale: tuple[str, str]  # reason, message of AbleToScale True
    limited: bool  # ScalingLimited status
    limit: tuple[str, str]


def rules(behavior: dict[str, Any] | None, direction: str) -> dict[str, Any]:
    """One direction's rules with the API's defaults filled in (GenerateHPAScale*Rules)."""
    given = (behavior or {}).get(direction) or {}
    default = SCALE_UP_DEFAULT if direction == "scaleUp" else SCALE_DOWN_DEFAULT
    filled = {**default, **{k: v for k, v in given.items() if v is not None}}
    if direction == "scaleDown" and filled.get("stabilizationWindowSeconds") is None:
        filled["stabilizationWindowSeconds"] = DEFAULT_DOWN_WINDOW
    return filled


def _record(state: State, replicas: int, now: float, old: int | None) -> None:
    if old is None:
        state.recommendations.append(Recommendation(replicas, now))
    else:
        state.recommendations[old] = Recommendation(replicas, now)


def without_behavior(state: State, current: int, desired: int, min_replicas: int, max_replicas: int, now: float,
                     window: float = DEFAULT_DOWN_WINDOW) -> Outcome:
    highest, old = desired, None
    for i, rec in enumerate(state.recommendations):
        if rec.at < now - window:
            old = i
        elif rec.replicas > highest:
            highest = rec.replicas
    _record(state, desired, now, old)
    able = DOWN_STABILIZED if highest != desired else READY
    up_limit = max(2 * current, 4)
    maximum, limit = (up_limit, UP_LIMIT) if max_replicas > up_limit else (max_replicas, TOO_MANY)
    if highest < min_replicas:
        replicas, limit = min_replicas, TOO_FEW
    elif highest > maximum:
        replicas = maximum
    else:
        replicas, limit = highest, WITHIN_RANGE
    return Outcome(replicas, able, replicas != highest, limit)


def _changed_within(period: float, events: list[ScaleEvent], now: float) -> int:
    return sum(e.change for e in events if e.at > now - period)


def scale_up_limit(current: int, state: State, scale_up: dict[str, Any], now: float) -> int:
    select = scale_up.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    result, pick = (MAX_INT32, min) if select == "Min" else (MIN_INT32, max)
    for policy in scale_up.get("policies") or []:
        period = policy.get("periodSeconds") or 0
        start = current - _changed_within(period, state.ups, now) + _changed_within(period, state.downs, now)
        if policy.get("type") == "Pods":
            proposed = start + policy.get("value", 0)
        else:  # Percent, rounded up so a small target can still grow
            proposed = math.ceil(start * (1 + policy.get("value", 0) / 100))
        result = pick(result, proposed)
    return result


def scale_down_limit(current: int, state: State, scale_down: dict[str, Any], now: float) -> int:
    select = scale_down.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    result, pick = (MIN_INT32, max) if select == "Min" else (MAX_INT32, min)
    for policy in scale_down.get("policies") or []:
        period = policy.get("periodSeconds") or 0
        start = current - _changed_within(period, state.ups, now) + _changed_within(period, state.downs, now)
        if policy.get("type") == "Pods":
            proposed = start - policy.get("value", 0)
        else:
            proposed = int(start * (1 - policy.get("value", 0) / 100))
        result = pick(result, proposed)
    return result


def with_behavior(state: State, behavior: dict[str, Any], current: int, desired: int, min_replicas: int,
                  max_replicas: int, now: float) -> Outcome:
    up, down = rules(behavior, "scaleUp"), rules(behavior, "scaleDown")
    up_cutoff = now - (up.get("stabilizationWindowSeconds") or 0)
    down_cutoff = now - (down.get("stabilizationWindowSeconds") or 0)
    up_rec = down_rec = desired
    old = None
    for i, rec in enumerate(state.recommendations):
        if rec.at > up_cutoff:
            up_rec = min(rec.replicas, up_rec)
        if rec.at > down_cutoff:
            down_rec = max(rec.replicas, down_rec)
        if rec.at < up_cutoff and rec.at < down_cutoff:
            old = i
    stabilized = min(max(current, up_rec), down_rec)
    _record(state, desired, now, old)
    if stabilized != desired:
        able = UP_STABILIZED if desired >= current else DOWN_STABILIZED
    else:
        able = READY
    replicas, limit = stabilized, WITHIN_RANGE
    if stabilized > current:
        allowed = max(scale_up_limit(current, state, up, now), current)
        maximum, why = (allowed, UP_LIMIT) if max_replicas > allowed else (max_replicas, TOO_MANY)
        if stabilized > maximum:
            replicas, limit = maximum, why
    elif stabilized < current:
        allowed = min(scale_down_limit(current, state, down, now), current)
        minimum, why = (allowed, DOWN_LIMIT) if min_replicas < allowed else (min_replicas, TOO_FEW)
        if stabilized < minimum:
            replicas, limit = minimum, why
    return Outcome(replicas, able, replicas != stabilized, limit)


def record_scale(state: State, behavior: dict[str, Any] | None, change: int, now: float) -> None:
    """Remember a rescale for the policies' periods; forget what no period can see any more."""
    if behavior is None or change == 0:
        return
    longest = max([p.get("periodSeconds") or 0 for d in ("scaleUp", "scaleDown")
                   for p in rules(behavior, d).get("policies") or []] or [0])
    events = state.ups if change > 0 else state.downs
    events[:] = [e for e in events if e.at > now - longest]
    events.append(ScaleEvent(abs(change), now))
