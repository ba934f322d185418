"""NodeName: a pod that names its node (`spec.nodeName`) fits only that node.

Filter only; the rejection is unresolvable (preemption cannot rename a node). The queue retries
such a pod when a node with that name is added. Built by `scheduler/registry.py`.
"""

from __future__ import annotations

from typing import Any

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status
from scheduler.plugins import names

Obj = dict[str, Any]
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Obj, node: Obj | None) -> bool:
    wanted = (pod.get("spec") or {}).get("nodeName") or ""
    return not wanted or (node is not None and wanted == ((node.get("metadata") or {}).get("name") or ""))


class NodeName:
    name = names.NODE_NAME

    def __init__(self, queue_hints: bool = True) -> None:
        self.queue_hints = queue_hints

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        if not (pod.get("spec") or {}).get("nodeName"):
            return None  # the usual pod, filtered on every node: nothing to compare
        if not fits(pod, node.node):
            return Status.unresolvable(ERR_REASON)
        return None

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> dict[int, Status]:
        if not (pod.get("spec") or {}).get("nodeName"):
            return {}
        return {i: Status.unresolvable(ERR_REASON) for i, node in enumerate(nodes) if not fits(pod, node.node)}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Without queueing hints upstream also listens to taint and label updates, because its
        # pre-check may have hidden the Node/Add; with hints only an added node can help.
        actions = ActionType.ADD
        if not self.queue_hints:
            actions |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [ClusterEventWithHint(ClusterEvent(Resource.NODE, actions), self._after_node_add)]

    def _after_node_add(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QUEUE if fits(pod, new) else QueueingHint.SKIP


def new(args: dict[str, Any], handle: Handle, features: Features) -> NodeName:
    return NodeName(queue_hints=features.get("SchedulerQueueingHints", True))
