"""NodeUnschedulable: a cordoned node (`spec.unschedulable`) takes only pods that tolerate it.

Tolerating the `node.kubernetes.io/unschedulable:NoSchedule` taint is what lets a pod through, as
upstream decides (DaemonSet pods carry that toleration). The queue retries a rejected pod when a
node is added schedulable or uncordoned, or when the pod itself gains the toleration.
"""

from __future__ import annotations

import operator
from typing import Any

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status
from scheduler.plugins import names, tolerations

Obj = dict[str, Any]
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
_CORDONED, _NODE = operator.attrgetter("unschedulable"), operator.attrgetter("node")
_UNSCHEDULABLE_TAINT = {"key": tolerations.UNSCHEDULABLE_TAINT_KEY, "effect": tolerations.NO_SCHEDULE}


def _cordoned(node: Obj | None) -> bool:
    return bool(((node or {}).get("spec") or {}).get("unschedulable"))


def _tolerates_cordon(pod: Obj) -> bool:
    return tolerations.any_tolerates(tolerations.pod_tolerations(pod), _UNSCHEDULABLE_TAINT)


class NodeUnschedulable:
    name = names.NODE_UNSCHEDULABLE

    def __init__(self, queue_hints: bool = True) -> None:
        self.queue_hints = queue_hints

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        if node.node is None:
            return Status.unresolvable(ERR_REASON_UNKNOWN_CONDITION)
        if node.unschedulable and not _tolerates_cordon(pod):
            return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
        return None

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> dict[int, Status]:
        # Only a cordoned node (or one whose Node object is gone) can fail: look at those alone,
        # found with C-level scans since the usual batch has none (a Node object is a non-empty
        # dict, so `all` finds a missing one; an odd empty one just takes the slow path).
        if not any(map(_CORDONED, nodes)) and all(map(_NODE, nodes)):
            return {}
        suspects = [i for i, node in enumerate(nodes) if node.unschedulable or node.node is None]
        found = {}
        for i in suspects:
            status = self.filter(state, pod, nodes[i])
            if status is not None:
                found[i] = status
        return found

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A spec.unschedulable change is classified as a taint update, as upstream does.
        events = [ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                                       self._after_node_change)]
        if self.queue_hints:
            events.append(ClusterEventWithHint(
                ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS), self._after_toleration_change))
        return events

    def _after_node_change(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        # Queue on an added schedulable node or an uncordon; anything else leaves the verdict as it was.
        if new is None:
            return QueueingHint.SKIP
        if (old is None and not _cordoned(new)) or (old is not None and _cordoned(old) and not _cordoned(new)):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _after_toleration_change(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        # Tolerations can only be added, so a rejected pod that now tolerates the taint is new news.
        same_pod = new is not None and (new.get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid")
        if same_pod and _tolerates_cordon(new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP


def new(args: dict[str, Any], handle: Handle, features: Features) -> NodeUnschedulable:
    return NodeUnschedulable(queue_hints=features.get("SchedulerQueueingHints", True))
