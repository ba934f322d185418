"""The order the PodGroup cycle tries a group's pods in: like sub-groups together, by priority.

Pods with the same scheduling signature (what the Filter and Score plugins read: requests,
node selection, tolerations, spread, claims; KEP-5598's Opportunistic Batching signature) form
one sub-group, so a gang of identical workers plus a launcher is tried as two runs. Sub-groups go
highest priority first (ties: the one whose first pod came first), and so do pods inside one.
Called by `group_cycle.py` before the placement loop.
"""

from __future__ import annotations

import json
from typing import Any

Obj = dict[str, Any]
# The PodSpec fields a node choice depends on; containers' resources are read separately.
_SIGNATURE_FIELDS = ("nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "resourceClaims",
                     "schedulerName", "priorityClassName", "runtimeClassName", "overhead", "nodeName",
                     "hostNetwork", "volumes", "resources")


def signature(pod: Obj) -> str:
    """Equal for pods every plugin would treat alike."""
    spec = pod.get("spec") or {}
    parts: dict[str, Any] = {name: spec.get(name) for name in _SIGNATURE_FIELDS if spec.get(name) is not None}
    for kind in ("initContainers", "containers"):
        parts[kind] = [[(c.get("resources") or {}), c.get("ports"), c.get("restartPolicy")]
                       for c in spec.get(kind) or []]
    return json.dumps(parts, sort_keys=True, default=str)


def priority(pod: Obj) -> int:
    return int((pod.get("spec") or {}).get("priority") or 0)


def order(pods: list[Obj]) -> list[Obj]:
    """`pods` sorted into like sub-groups, highest priority first, otherwise in arrival order."""
    runs: dict[str, list[Obj]] = {}
    for pod in pods:
        runs.setdefault(signature(pod), []).append(pod)
    ranked = sorted(enumerate(runs.values()), key=lambda item: (-max(priority(p) for p in item[1]), item[0]))
    out: list[Obj] = []
    for _, run in ranked:
        out.extend(sorted(run, key=lambda p: -priority(p)))  # stable: arrival order among equals
    return out
