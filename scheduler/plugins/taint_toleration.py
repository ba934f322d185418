"""TaintToleration: NoSchedule/NoExecute taints a pod does not tolerate keep it off a node;
PreferNoSchedule taints it does not tolerate make the node score lower.

Filter rejects on the first untolerated taint, with a reason that names none (unresolvable: preemption
removes no taints). PreScore keeps the pod's tolerations that can apply to PreferNoSchedule;
Score counts the intolerable PreferNoSchedule taints and NormalizeScore reverses the counts, so
the node with fewest scores 100. The queue retries on a node whose taints stop rejecting the pod,
or when the pod's own tolerations change.
"""

from __future__ import annotations

import operator
from typing import Any

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle, NodeScore
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status
from scheduler.plugins import names, normalize_score, tolerations

Obj = dict[str, Any]
PRE_SCORE_KEY = "PreScore" + names.TAINT_TOLERATION
_TAINTS = operator.attrgetter("taints")


def _blocks_scheduling(taint: Obj) -> bool:
    return taint.get("effect") in (tolerations.NO_SCHEDULE, tolerations.NO_EXECUTE)


def untolerated_taint(node: Obj | None, pod: Obj) -> Obj | None:
    return tolerations.first_untolerated(tolerations.node_taints(node), tolerations.pod_tolerations(pod),
                                         _blocks_scheduling)


def _prefer_no_schedule_tolerations(pod: Obj) -> list[Obj]:
    return [t for t in tolerations.pod_tolerations(pod)
            if (t.get("effect") or "") in ("", tolerations.PREFER_NO_SCHEDULE)]


UNTOLERATED = "node(s) had untolerated taint(s)"


class TaintToleration:
    name = names.TAINT_TOLERATION

    def __init__(self, queue_hints: bool = True) -> None:
        self.queue_hints = queue_hints

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        if not node.taints:
            return None  # the usual node, looked at per pod and node: nothing to tolerate
        taint = untolerated_taint(node.node, pod)
        if taint is None:
            return None
        # Since kubernetes#134740 (1.35, back-ported to 1.34) the reason names no taint: keys and
        # values can be sensitive, and the message lands in pod status and events.
        return Status.unresolvable(UNTOLERATED)

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> dict[int, Status]:
        if not any(map(_TAINTS, nodes)):
            return {}  # the usual batch: no node has a taint, found by a C-level scan
        found = {}
        for i in [i for i, node in enumerate(nodes) if node.taints]:  # untainted nodes pass
            status = self.filter(state, pod, nodes[i])
            if status is not None:
                found[i] = status
        return found

    def pre_score(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_KEY, _prefer_no_schedule_tolerations(pod))
        return None

    def score(self, state: CycleState, pod: Obj, node: NodeInfo) -> tuple[int, Status | None]:
        if not node.taints:
            return 0, None
        tols = state.get(PRE_SCORE_KEY)
        if tols is None:  # PreScore disabled in this profile
            tols = _prefer_no_schedule_tolerations(pod)
        count = sum(1 for taint in tolerations.node_taints(node.node)
                    if taint.get("effect") == tolerations.PREFER_NO_SCHEDULE and not tolerations.any_tolerates(tols, taint))
        return count, None

    def score_nodes(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> list[int]:
        if not any(map(_TAINTS, nodes)):
            return [0] * len(nodes)
        return [self.score(state, pod, node)[0] if node.taints else 0 for node in nodes]

    def normalize_score(self, state: CycleState, pod: Obj, scores: list[NodeScore]) -> Status | None:
        normalize_score.default_normalize(scores, reverse=True)
        return None

    def normalize_values(self, state: CycleState, pod: Obj, values: list[int]) -> list[int]:
        return normalize_score.default_normalize_values(values, reverse=True)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        events = [ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                                       self._after_node_change)]
        if self.queue_hints:
            events.append(ClusterEventWithHint(
                ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS), self._after_toleration_change))
        return events

    def _after_node_change(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        if new is None:
            return QueueingHint.SKIP
        was_rejected = old is None or untolerated_taint(old, pod) is not None
        if was_rejected and untolerated_taint(new, pod) is None:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _after_toleration_change(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        # The event only fires when tolerations were added, so the rejected pod itself is worth a retry.
        if new is not None and (new.get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid"):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP


def new(args: dict[str, Any], handle: Handle, features: Features) -> TaintToleration:
    return TaintToleration(queue_hints=features.get("SchedulerQueueingHints", True))
