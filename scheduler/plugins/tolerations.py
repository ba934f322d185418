"""Whether a pod tolerates a node's taints, as component-helpers' toleration matching answers it.

`untolerated_taint(taints, tolerations)` finds the first NoSchedule or NoExecute taint that no
toleration covers (upstream's `FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`).
PodTopologySpread calls it for `nodeTaintsPolicy: Honor`.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


def tolerates(toleration: Obj, taint: Obj) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if operator == "Exists":
        return True  # an empty key with Exists tolerates every taint
    if operator == "Equal":
        return bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def untolerated_taint(taints: list[Obj] | None, tolerations: list[Obj] | None) -> Obj | None:
    for taint in taints or []:
        if taint.get("effect") not in _DO_NOT_SCHEDULE:
            continue
        if not any(tolerates(t, taint) for t in tolerations or []):
            return taint
    return None
