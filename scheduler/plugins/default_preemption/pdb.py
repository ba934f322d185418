"""Which victims would break a PodDisruptionBudget (upstream's filterPodsWithPDBViolation).

Each PDB in the victim's namespace whose selector matches it spends one of its
`status.disruptionsAllowed`; a victim that drives a budget below zero is "violating". Pods already
listed in a PDB's `status.disruptedPods` were counted by the API server and spend nothing. The
grouping keeps the input order, so a list sorted by importance stays sorted. Called by the plugin's
victim selection (`plugin.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.framework.node_info import PodInfo

Obj = dict[str, Any]


class InvalidSelector(ValueError):
    pass


def _requirement_matches(requirement: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key = requirement.get("key") or ""
    operator = requirement.get("operator")
    values = requirement.get("values") or []
    if operator == "In":
        if not values:
            raise InvalidSelector(f"{key}: for 'in', 'notin' operators, values set can't be empty")
        return key in labels and labels[key] in values
    if operator == "NotIn":
        if not values:
            raise InvalidSelector(f"{key}: for 'in', 'notin' operators, values set can't be empty")
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    raise InvalidSelector(f"{operator!r} is not a valid label selector operator")


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelectorAsSelector(...).Matches, except that a nil or empty selector matches
    nothing: that is what a PDB's selector means (an invalid one raises InvalidSelector)."""
    if not selector:
        return False
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return False
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    # Evaluate every requirement even after a miss, so an invalid one is never silently accepted.
    results = [_requirement_matches(r, labels) for r in expressions]
    return all(results)


def split_by_violation(victims: Sequence[PodInfo],
                       pdbs: Sequence[Obj]) -> tuple[list[PodInfo], list[PodInfo]]:
    """(violating, non-violating) victims, each in the order given."""
    allowed = [int((pdb.get("status") or {}).get("disruptionsAllowed") or 0) for pdb in pdbs]
    violating: list[PodInfo] = []
    fine: list[PodInfo] = []
    for info in victims:
        meta = info.pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        broken = False
        if labels:  # a pod without labels matches no PDB
            for i, pdb in enumerate(pdbs):
                pdb_meta = pdb.get("metadata") or {}
                if pdb_meta.get("namespace") != meta.get("namespace"):
                    continue
                try:
                    if not selector_matches((pdb.get("spec") or {}).get("selector"), labels):
                        continue
                except InvalidSelector:
                    continue  # an invalid selector matches nothing
                if meta.get("name") in ((pdb.get("status") or {}).get("disruptedPods") or {}):
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    broken = True
        (violating if broken else fine).append(info)
    return violating, fine
