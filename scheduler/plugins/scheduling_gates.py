"""SchedulingGates: a pod with `spec.schedulingGates` waits outside activeQ until they are all gone.

PreEnqueue answers UnschedulableAndUnresolvable with upstream's message, `waiting for scheduling
gates: [a b]`; the queue re-runs it when the pod's update removes its gates (the event below).
"""

from __future__ import annotations

from typing import Any

from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle
from scheduler.framework.status import Status
from scheduler.plugins import names

Obj = dict[str, Any]


def _gates(pod: Obj | None) -> list[str]:
    return [g.get("name", "") for g in ((pod or {}).get("spec") or {}).get("schedulingGates") or []]


class SchedulingGates:
    name = names.SCHEDULING_GATES

    def pre_enqueue(self, pod: Obj) -> Status | None:
        gates = _gates(pod)
        if not gates:
            return None
        return Status.unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                                     self._gates_removed)]

    @staticmethod
    def _gates_removed(pod: Obj, old: Any, new: Any) -> QueueingHint:
        # Only the pod's own update can lift its gates.
        same = ((new or {}).get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid")
        return QueueingHint.QUEUE if same and not _gates(new) else QueueingHint.SKIP


def new(args: dict[str, Any], handle: Handle, features: Features) -> SchedulingGates:
    return SchedulingGates()
