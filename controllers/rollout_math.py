"""The numbers of a rollout: maxSurge and maxUnavailable resolved, and how many pods each ReplicaSet gets.

Upstream's deployment/util arithmetic, pure: `scaled_value` (an int or a percent of a total, rounded
up for surge and down for unavailability), `fenceposts` (both 0 becomes unavailable 1),
`max_surge`/`max_unavailable` of a Deployment, `new_rs_replicas` (how far the new ReplicaSet may
grow under maxSurge), and `proportions` (a scale of a Deployment in mid-rollout shared between its
active ReplicaSets by their size, as `scale` in sync.go does). Used by `deployment.py`.
"""

from __future__ import annotations

import math
import re
from typing import Any

Obj = dict[str, Any]
_PERCENT = re.compile(r"^([0-9]+)%$")


def scaled_value(value: int | str | None, total: int, round_up: bool) -> int:
    """GetScaledValueFromIntOrPercent."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    match = _PERCENT.match(value)
    if match is None:
        raise ValueError(f"invalid value for IntOrString: invalid value {value!r}")
    exact = int(match.group(1)) * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def fenceposts(max_surge: int | str | None, max_unavailable: int | str | None, desired: int) -> tuple[int, int]:
    surge = scaled_value(max_surge, desired, True)
    unavailable = scaled_value(max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1  # a rollout that may neither add nor remove a pod could never move
    return surge, unavailable


def replicas(deployment: Obj) -> int:
    value = (deployment.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def _rolling(deployment: Obj) -> Obj | None:
    strategy = (deployment.get("spec") or {}).get("strategy") or {}
    if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
        return None
    return strategy.get("rollingUpdate") or {"maxSurge": "25%", "maxUnavailable": "25%"}


def max_surge(deployment: Obj) -> int:
    rolling = _rolling(deployment)
    if rolling is None:
        return 0
    return fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), replicas(deployment))[0]


def max_unavailable(deployment: Obj) -> int:
    rolling = _rolling(deployment)
    wanted = replicas(deployment)
    if rolling is None or wanted == 0:
        return 0
    return min(wanted, fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), wanted)[1])


def spec_replicas(rs: Obj | None) -> int:
    return int(((rs or {}).get("spec") or {}).get("replicas") or 0)


def new_rs_replicas(deployment: Obj, all_rs: list[Obj], new_rs: Obj) -> int:
    """NewRSNewReplicas: RollingUpdate grows the new ReplicaSet as far as maxSurge allows; Recreate
    goes straight to the desired count."""
    wanted = replicas(deployment)
    if _rolling(deployment) is None:
        return wanted
    current = spec_replicas(new_rs)
    total = sum(spec_replicas(rs) for rs in all_rs)
    ceiling = wanted + max_surge(deployment)
    if total >= ceiling:
        return current
    return current + max(0, min(ceiling - total, wanted - current))


def _round_half_away(value: float) -> int:
    return int(value + 0.5) if value >= 0 else int(value - 0.5)


def fraction(rs: Obj, deployment: Obj, max_replicas_annotation: int | None) -> int:
    """getReplicaSetFraction: how many replicas `rs` gains (or loses) when the Deployment is resized."""
    wanted = replicas(deployment)
    if wanted == 0:
        return -spec_replicas(rs)
    target = wanted + max_surge(deployment)
    annotated = max_replicas_annotation
    if annotated is None:
        annotated = int((deployment.get("status") or {}).get("replicas") or 0)
    if annotated == 0:
        return 0
    return _round_half_away(spec_replicas(rs) * target / annotated) - spec_replicas(rs)


def proportions(deployment: Obj, active: list[Obj], max_replicas: list[int | None]) -> list[int]:
    """The new size of each of `active` (given sorted as upstream sorts them: by size, newest first
    when growing, oldest first when shrinking) so their sum becomes replicas + maxSurge."""
    wanted = replicas(deployment)
    allowed = wanted + max_surge(deployment) if wanted > 0 else 0
    to_add = allowed - sum(spec_replicas(rs) for rs in active)
    sizes, added = [], 0
    for rs, annotated in zip(active, max_replicas):
        share = 0
        if spec_replicas(rs) and to_add and to_add != added:
            part, room = fraction(rs, deployment, annotated), to_add - added
            share = min(part, room) if to_add > 0 else max(part, room)
        sizes.append(spec_replicas(rs) + share)
        added += share
    if sizes and to_add != added:
        sizes[0] = max(0, sizes[0] + to_add - added)  # the rounding's leftover goes to the first
    return sizes
