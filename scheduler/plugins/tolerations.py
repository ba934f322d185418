"""Does a pod tolerate a node taint: upstream's `Toleration.ToleratesTaint` and friends.

TaintToleration (Filter on NoSchedule/NoExecute, Score on PreferNoSchedule) and NodeUnschedulable
(the `node.kubernetes.io/unschedulable` taint a cordoned node implies) both ask it. A toleration
with an empty key and `Exists` tolerates everything; an empty effect matches every effect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Obj = dict[str, Any]

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"


def tolerates(toleration: Obj, taint: Obj) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False  # an operator the API would have refused tolerates nothing


def any_tolerates(tolerations: Iterable[Obj], taint: Obj) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def first_untolerated(taints: Iterable[Obj], tolerations: list[Obj],
                      considered: Callable[[Obj], bool]) -> Obj | None:
    """The first taint `considered` selects that no toleration tolerates (upstream's FindMatchingUntoleratedTaint)."""
    for taint in taints:
        if considered(taint) and not any_tolerates(tolerations, taint):
            return taint
    return None


def pod_tolerations(pod: Obj) -> list[Obj]:
    return list((pod.get("spec") or {}).get("tolerations") or [])


def node_taints(node: Obj | None) -> list[Obj]:
    return list(((node or {}).get("spec") or {}).get("taints") or [])
