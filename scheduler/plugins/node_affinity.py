"""NodeAffinity: `spec.nodeSelector`, required and preferred node affinity, and the profile's
`addedAffinity` (NodeAffinityArgs) that every pod of the profile must also satisfy.

PreFilter compiles the pod's required terms once (Skip when there are none) and, when every term
pins `metadata.name` with In, narrows the cycle to those nodes. Filter rejects, unresolvably, a
node the added affinity or the pod's own selector does not match. PreScore/Score sum the weights
of the matching preferred terms; NormalizeScore scales them to 0..100. The queue retries a pod
when a node is added or relabelled so that it now matches. Terms: `node_selectors.py`.
"""

from __future__ import annotations

from typing import Any

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle, NodeScore, PreFilterResult
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status
from scheduler.plugins import names, normalize_score
from scheduler.plugins.node_selectors import NAME_FIELD, NodeSelector, PreferredTerms, RequiredNodeAffinity, SelectorError

Obj = dict[str, Any]
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
PRE_FILTER_KEY = "PreFilter" + names.NODE_AFFINITY
PRE_SCORE_KEY = "PreScore" + names.NODE_AFFINITY


def _required_terms(pod: Obj) -> Obj | None:
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    return affinity.get("requiredDuringSchedulingIgnoredDuringExecution")


def _preferred_terms(pod: Obj) -> PreferredTerms | None:
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
    return PreferredTerms.compile(terms) if terms is not None else None


def pinned_node_names(required: Obj) -> set[str] | None:
    """The only nodes the required terms can match, when every term pins metadata.name; else None."""
    names_: set[str] | None = None
    for term in required.get("nodeSelectorTerms") or []:
        term_names: set[str] | None = None
        for expr in term.get("matchFields") or []:
            if expr.get("key") == NAME_FIELD and expr.get("operator") == "In":
                values = set(expr.get("values") or [])
                term_names = values if term_names is None else term_names & values  # ANDed in a term
        if term_names is None:
            return None  # this term allows any node, and terms are ORed
        names_ = term_names if names_ is None else names_ | term_names
    return names_


class NodeAffinity:
    name = names.NODE_AFFINITY

    def __init__(self, added_required: NodeSelector | None, added_preferred: PreferredTerms | None,
                 queue_hints: bool = True) -> None:
        self.added_required = added_required
        self.added_preferred = added_preferred
        self.queue_hints = queue_hints

    def pre_filter(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        required = _required_terms(pod)
        if required is None and self.added_required is None and (pod.get("spec") or {}).get("nodeSelector") is None:
            return None, Status.skip()
        state.write(PRE_FILTER_KEY, RequiredNodeAffinity.of(pod))
        if required is None or not required.get("nodeSelectorTerms"):
            return None, None
        pinned = pinned_node_names(required)
        if pinned is None:
            return None, None
        if not pinned:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(node_names=pinned), None

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        if node.node is None:
            return Status.as_error("node not found")
        if self.added_required is not None and not self.added_required.matches(node.node):
            return Status.unresolvable(ERR_REASON_ENFORCED)
        required = state.get(PRE_FILTER_KEY) or RequiredNodeAffinity.of(pod)
        if not required.matches(node.node):
            return Status.unresolvable(ERR_REASON_POD)
        return None

    def pre_score(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> Status | None:
        try:
            preferred = _preferred_terms(pod)
        except SelectorError as e:
            return Status.as_error(e)
        if preferred is None and self.added_preferred is None:
            return Status.skip()
        state.write(PRE_SCORE_KEY, preferred)
        return None

    def score(self, state: CycleState, pod: Obj, node: NodeInfo) -> tuple[int, Status | None]:
        count = self.added_preferred.score(node.node or {}) if self.added_preferred is not None else 0
        try:
            preferred = state.read(PRE_SCORE_KEY)
        except KeyError:  # PreScore disabled in this profile
            try:
                preferred = _preferred_terms(pod)
            except SelectorError as e:
                return 0, Status.as_error(e)
        if preferred is not None:
            count += preferred.score(node.node or {})
        return count, None

    def normalize_score(self, state: CycleState, pod: Obj, scores: list[NodeScore]) -> Status | None:
        normalize_score.default_normalize(scores, reverse=False)
        return None

    def normalize_values(self, state: CycleState, pod: Obj, values: list[int]) -> list[int]:
        return normalize_score.default_normalize_values(values, reverse=False)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not self.queue_hints:
            actions |= ActionType.UPDATE_NODE_TAINT
        return [ClusterEventWithHint(ClusterEvent(Resource.NODE, actions), self._after_node_change)]

    def _after_node_change(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        if new is None:
            return QueueingHint.SKIP
        if self.added_required is not None and not self.added_required.matches(new):
            return QueueingHint.SKIP
        required = RequiredNodeAffinity.of(pod)
        if not required.matches(new):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        # An update matters only when it turns a non-matching node into a matching one.
        return QueueingHint.SKIP if required.matches(old) else QueueingHint.QUEUE


def new(args: dict[str, Any], handle: Handle, features: Features) -> NodeAffinity:
    added = (args or {}).get("addedAffinity") or {}
    added_required = added_preferred = None
    required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        try:
            added_required = NodeSelector.compile(required, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                                                            ".nodeSelectorTerms")
        except SelectorError as e:
            raise ValueError(f"parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: {e}") from None
    preferred = added.get("preferredDuringSchedulingIgnoredDuringExecution")
    if preferred:
        try:
            added_preferred = PreferredTerms.compile(preferred, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution")
        except SelectorError as e:
            raise ValueError(f"parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: {e}") from None
    return NodeAffinity(added_required, added_preferred, queue_hints=features.get("SchedulerQueueingHints", True))
