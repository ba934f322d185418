"""What the PodGroup cycle tells about a group: its `PodGroupScheduled` condition and its events.

`condition(...)` builds the metav1.Condition (True once the group passed Permit, reason
Scheduled; False with reason Unschedulable or SchedulerError and the cycle's message, as
KEP-5832's status lifecycle says); `changed(pod_group, condition)` says whether writing it would
change anything (the transition time is kept while the status stays the same). The cycle sends
it through `podgroups/status` and records a FailedScheduling or Scheduled event on the PodGroup,
which is what `kubectl describe podgroup` shows. Called by `group_cycle.py`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

Obj = dict[str, Any]
POD_GROUP_SCHEDULED = "PodGroupScheduled"
SCHEDULED, UNSCHEDULABLE, SCHEDULER_ERROR = "Scheduled", "Unschedulable", "SchedulerError"
API_VERSION, KIND = "scheduling.k8s.io/v1alpha2", "PodGroup"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def current(pod_group: Obj) -> Obj | None:
    conditions = (pod_group.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == POD_GROUP_SCHEDULED), None)


def condition(pod_group: Obj, scheduled: bool, reason: str, message: str) -> Obj:
    old = current(pod_group)
    status = "True" if scheduled else "False"
    since = old.get("lastTransitionTime") if old is not None and old.get("status") == status else None
    out: Obj = {"type": POD_GROUP_SCHEDULED, "status": status, "reason": reason, "message": message,
                "lastTransitionTime": since or _now()}
    generation = (pod_group.get("metadata") or {}).get("generation")
    if generation:
        out["observedGeneration"] = generation
    return out


def changed(pod_group: Obj, new: Obj) -> bool:
    old = current(pod_group)
    return old is None or any(old.get(k) != new.get(k) for k in ("status", "reason", "message", "observedGeneration"))


def regarding(pod_group: Obj) -> Obj:
    """The PodGroup as an event's `regarding` (informer objects may lack kind and apiVersion)."""
    return {**pod_group, "apiVersion": API_VERSION, "kind": KIND}
