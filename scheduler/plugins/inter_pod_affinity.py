"""InterPodAffinity: required and preferred pod (anti-)affinity, upstream's plugin.

PreFilter counts, per topology pair (key, value), the existing pods that match the incoming pod's
required affinity and anti-affinity terms, and the existing pods whose required anti-affinity
terms match the incoming pod; Filter answers from those counts, and `add_pod`/`remove_pod` keep
them right while preemption edits a node. PreScore sums preferred-term weights (and existing
pods' required affinity, times hardPodAffinityWeight) per topology pair; Score reads the node's
pairs and normalize_score scales them to 0..100. Namespace selectors are read from the
Namespaces store. Built by `scheduler/registry.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from client import resources
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import MAX_NODE_SCORE, Features, Handle, NodeScore
from scheduler.framework.node_info import NodeInfo, PodInfo
from scheduler.framework.status import Status
from scheduler.plugins import label_selectors, names
from scheduler.plugins.label_selectors import Requirement, Selector

Obj = dict[str, Any]
Pair = tuple[str, str]  # (topology key, value)

NAME = names.INTER_POD_AFFINITY
ERR_AFFINITY_RULES = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
# InterPodAffinityArgs as pkg/scheduler/apis/config/v1 defaults them.
DEFAULT_ARGS: Obj = {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}

_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME


def _meta(pod: Obj) -> Obj:
    return pod.get("metadata") or {}


@dataclass(frozen=True)
class Term:
    """A v1.PodAffinityTerm compiled: the namespaces it names, its namespace selector, its selector."""

    namespaces: frozenset[str]
    namespace_selector: Selector
    selector: Selector
    topology_key: str
    weight: int = 0  # for preferred terms

    def matches(self, pod: Obj, ns_labels: dict[str, str] | None) -> bool:
        meta = _meta(pod)
        if meta.get("namespace", "") in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(meta.get("labels") or {})
        return False


def compile_term(owner: Obj, term: Obj, weight: int = 0) -> Term:
    """Namespaces default to the owner's own when neither namespaces nor a selector is given;
    matchLabelKeys/mismatchLabelKeys add In/NotIn requirements with the owner's label values,
    as the API server's merge does (doing it again here is harmless when it already has)."""
    meta = _meta(owner)
    owner_labels = meta.get("labels") or {}
    namespaces = frozenset(term.get("namespaces") or [])
    ns_selector_spec = term.get("namespaceSelector")
    if not namespaces and ns_selector_spec is None:
        namespaces = frozenset([meta.get("namespace", "")])
    selector = label_selectors.label_selector(term.get("labelSelector"))
    extra = [Requirement(k, "In", frozenset([owner_labels[k]])) for k in term.get("matchLabelKeys") or []
             if k in owner_labels]
    extra += [Requirement(k, "NotIn", frozenset([owner_labels[k]])) for k in term.get("mismatchLabelKeys") or []
              if k in owner_labels]
    if extra:
        selector = selector.adding(*extra)
    return Term(namespaces, label_selectors.label_selector(ns_selector_spec), selector, term.get("topologyKey", ""), weight)


@dataclass
class PodTerms:
    required_affinity: list[Term]
    required_anti_affinity: list[Term]
    preferred_affinity: list[Term]
    preferred_anti_affinity: list[Term]


def pod_terms(pod: Obj) -> PodTerms:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    aff = affinity.get("podAffinity") or {}
    anti = affinity.get("podAntiAffinity") or {}

    def required(group: Obj) -> list[Term]:
        return [compile_term(pod, t) for t in group.get("requiredDuringSchedulingIgnoredDuringExecution") or []]

    def preferred(group: Obj) -> list[Term]:
        return [compile_term(pod, w.get("podAffinityTerm") or {}, int(w.get("weight") or 0))
                for w in group.get("preferredDuringSchedulingIgnoredDuringExecution") or []]

    return PodTerms(required(aff), required(anti), preferred(aff), preferred(anti))


def matches_all(terms: Sequence[Term], pod: Obj) -> bool:
    # The incoming pod's namespace selectors are merged into its namespaces, so no labels here.
    return bool(terms) and all(t.matches(pod, None) for t in terms)


class Counts(dict):
    """topologyToMatchedTermCount: pairs with a non-zero count only, so len() says "any match"."""

    def bump(self, node_labels: dict[str, str], key: str, delta: int) -> None:
        if key not in node_labels:
            return
        pair = (key, node_labels[key])
        value = self.get(pair, 0) + delta
        if value:
            self[pair] = value
        else:
            self.pop(pair, None)

    def affinity_terms(self, terms: Sequence[Term], pod: Obj, node_labels: dict[str, str], delta: int) -> None:
        # Affinity counts a pod only when it matches all the terms.
        if matches_all(terms, pod):
            for t in terms:
                self.bump(node_labels, t.topology_key, delta)

    def anti_affinity_terms(self, terms: Sequence[Term], pod: Obj, ns_labels: dict[str, str] | None,
                            node_labels: dict[str, str], delta: int) -> None:
        for t in terms:
            if t.matches(pod, ns_labels):
                self.bump(node_labels, t.topology_key, delta)


class PreFilterState:
    def __init__(self, pod: Obj, terms: PodTerms, ns_labels: dict[str, str], existing_anti: Counts,
                 affinity: Counts, anti_affinity: Counts) -> None:
        self.pod = pod
        self.terms = terms
        self.ns_labels = ns_labels
        self.existing_anti = existing_anti
        self.affinity = affinity
        self.anti_affinity = anti_affinity

    def clone(self) -> "PreFilterState":
        return PreFilterState(self.pod, self.terms, self.ns_labels, Counts(self.existing_anti), Counts(self.affinity),
                              Counts(self.anti_affinity))

    def update_with_pod(self, other: Obj, node_labels: dict[str, str], delta: int) -> None:
        other_terms = pod_terms(other)
        self.existing_anti.anti_affinity_terms(other_terms.required_anti_affinity, self.pod, self.ns_labels,
                                               node_labels, delta)
        self.affinity.affinity_terms(self.terms.required_affinity, other, node_labels, delta)
        self.anti_affinity.anti_affinity_terms(self.terms.required_anti_affinity, other, None, node_labels, delta)


@dataclass
class PreScoreState:
    topology_score: dict[str, dict[str, int]]


class InterPodAffinity:
    name = NAME

    def __init__(self, args: Obj, handle: Handle, features: Features) -> None:
        merged = {**DEFAULT_ARGS, **(args or {})}
        weight = int(merged["hardPodAffinityWeight"])
        if not 0 <= weight <= 100:
            raise ValueError(f"hardPodAffinityWeight: Invalid value: {weight}: not in valid range [0-100]")
        self.hard_pod_affinity_weight = weight
        self.ignore_preferred_terms_of_existing_pods = bool(merged["ignorePreferredTermsOfExistingPods"])
        self.handle = handle
        handle.store(resources.NAMESPACES)  # started and synced with the scheduler's informers

    # --- namespaces

    def _namespace_labels(self, namespace: str) -> dict[str, str]:
        ns = self.handle.store(resources.NAMESPACES).get(namespace)
        return dict(_meta(ns).get("labels") or {}) if ns else {}

    def _merge_namespaces(self, terms: list[Term]) -> list[Term]:
        """Resolve a namespace selector into the namespaces it selects now (upstream's
        mergeAffinityTermNamespacesIfNotEmpty); a selector that selects everything stays."""
        out = []
        for t in terms:
            if t.namespace_selector.empty or t.namespace_selector.nothing:
                out.append(t)
                continue
            chosen = {_meta(ns).get("name", "") for ns in self.handle.store(resources.NAMESPACES).list()
                      if t.namespace_selector.matches(_meta(ns).get("labels") or {})}
            out.append(Term(t.namespaces | chosen, label_selectors.NOTHING, t.selector, t.topology_key, t.weight))
        return out

    # --- PreFilter and its extensions

    def pre_filter(self, state: CycleState, pod: Obj, nodes: Sequence[NodeInfo]) -> tuple[None, Status | None]:
        try:
            terms = pod_terms(pod)
        except ValueError as exc:
            return None, Status.unresolvable(f"parsing pod: {exc}")
        terms.required_affinity = self._merge_namespaces(terms.required_affinity)
        terms.required_anti_affinity = self._merge_namespaces(terms.required_anti_affinity)
        ns_labels = self._namespace_labels(_meta(pod).get("namespace", ""))

        existing_anti = Counts()
        for info in self.handle.snapshot.with_pods_with_required_anti_affinity():
            for existing in info.pods_with_required_anti_affinity:
                try:
                    anti = pod_terms(existing.pod).required_anti_affinity
                except ValueError:
                    continue
                existing_anti.anti_affinity_terms(anti, pod, ns_labels, info.labels, 1)

        if not existing_anti and not terms.required_affinity and not terms.required_anti_affinity:
            return None, Status.skip()

        affinity, anti_affinity = Counts(), Counts()
        if terms.required_affinity or terms.required_anti_affinity:
            for info in self.handle.snapshot.node_infos:
                node_labels = info.labels
                for existing in info.pods:
                    affinity.affinity_terms(terms.required_affinity, existing.pod, node_labels, 1)
                    anti_affinity.anti_affinity_terms(terms.required_anti_affinity, existing.pod, None, node_labels, 1)
        state.write(_PRE_FILTER_KEY, PreFilterState(pod, terms, ns_labels, existing_anti, affinity, anti_affinity))
        return None, None

    def add_pod(self, state: CycleState, pod: Obj, to_add: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(_PRE_FILTER_KEY)
        if s is None:
            return Status.as_error(f'error reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        s.update_with_pod(to_add.pod, node.labels, 1)
        return None

    def remove_pod(self, state: CycleState, pod: Obj, to_remove: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(_PRE_FILTER_KEY)
        if s is None:
            return Status.as_error(f'error reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        s.update_with_pod(to_remove.pod, node.labels, -1)
        return None

    # --- Filter

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        s: PreFilterState | None = state.get(_PRE_FILTER_KEY)
        if s is None:
            return Status.as_error(f'error reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        node_labels = node.labels
        if not _satisfies_affinity(s, node_labels):
            return Status.unresolvable(ERR_AFFINITY_RULES)
        if s.anti_affinity:
            for t in s.terms.required_anti_affinity:
                value = node_labels.get(t.topology_key)
                if value is not None and s.anti_affinity.get((t.topology_key, value), 0) > 0:
                    return Status.unschedulable(ERR_ANTI_AFFINITY_RULES)
        if s.existing_anti:
            for pair in node_labels.items():
                if s.existing_anti.get(pair, 0) > 0:
                    return Status.unschedulable(ERR_EXISTING_ANTI_AFFINITY)
        return None

    # --- PreScore, Score, NormalizeScore

    def pre_score(self, state: CycleState, pod: Obj, nodes: Sequence[NodeInfo]) -> Status | None:
        if not nodes:
            return Status.skip()
        terms = pod_terms(pod)
        has_constraints = bool(terms.preferred_affinity or terms.preferred_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip()
        # Without preferred terms of its own, only nodes hosting pods with affinity can score.
        candidates = self.handle.snapshot.node_infos if has_constraints else self.handle.snapshot.with_pods_with_affinity()
        terms.preferred_affinity = self._merge_namespaces(terms.preferred_affinity)
        terms.preferred_anti_affinity = self._merge_namespaces(terms.preferred_anti_affinity)
        ns_labels = self._namespace_labels(_meta(pod).get("namespace", ""))

        score: dict[str, dict[str, int]] = {}

        def add(ts: Iterable[Term], target: Obj, labels_: dict[str, str] | None, node_labels: dict[str, str],
                multiplier: int, weight: int | None = None) -> None:
            for t in ts:
                if not t.matches(target, labels_):
                    continue
                value = node_labels.get(t.topology_key)
                if value is None:
                    continue
                by_value = score.setdefault(t.topology_key, {})
                by_value[value] = by_value.get(value, 0) + (t.weight if weight is None else weight) * multiplier

        for info in candidates:
            node_labels = info.labels
            if not node_labels:
                continue
            for existing in (info.pods if has_constraints else info.pods_with_affinity):
                # The incoming pod's preferred terms against the existing pod.
                add(terms.preferred_affinity, existing.pod, None, node_labels, 1)
                add(terms.preferred_anti_affinity, existing.pod, None, node_labels, -1)
                if not existing.has_affinity:
                    continue
                other = pod_terms(existing.pod)
                # The existing pod's terms against the incoming pod.
                if self.hard_pod_affinity_weight > 0:
                    add(other.required_affinity, pod, ns_labels, node_labels, 1, self.hard_pod_affinity_weight)
                # (With ignorePreferredTermsOfExistingPods we only get here when the incoming pod
                # has preferred terms of its own, and then the existing pods' count too.)
                add(other.preferred_affinity, pod, ns_labels, node_labels, 1)
                add(other.preferred_anti_affinity, pod, ns_labels, node_labels, -1)
        if not score:
            return Status.skip()
        state.write(_PRE_SCORE_KEY, PreScoreState(score))
        return None

    def score(self, state: CycleState, pod: Obj, node: NodeInfo) -> tuple[int, Status | None]:
        s: PreScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None:
            return 0, Status.as_error(f'error reading "{_PRE_SCORE_KEY}" from cycleState: not found')
        node_labels = node.labels
        total = 0
        for key, by_value in s.topology_score.items():
            value = node_labels.get(key)
            if value is not None:
                total += by_value.get(value, 0)
        return total, None

    def normalize_score(self, state: CycleState, pod: Obj, scores: list[NodeScore]) -> Status | None:
        s: PreScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None or not s.topology_score or not scores:
            return None
        low = min(ns.score for ns in scores)
        high = max(ns.score for ns in scores)
        spread = high - low
        for ns in scores:
            # int() truncates toward zero, as Go's int64(float64) does.
            ns.score = int(MAX_NODE_SCORE * ((ns.score - low) / spread)) if spread > 0 else 0
        return None

    # --- queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                                 self._after_pod_change),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                                 self._after_node_change),
        ]

    def _after_pod_change(self, pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
        # Only pods on nodes take part in affinity.
        if any(p is not None and not (p.get("spec") or {}).get("nodeName") for p in (old, new)):
            return QueueingHint.SKIP
        terms = pod_terms(pod)
        terms.required_affinity = self._merge_namespaces(terms.required_affinity)
        terms.required_anti_affinity = self._merge_namespaces(terms.required_anti_affinity)
        if old is not None and new is not None:
            # A label change matters if it makes the pod match all the incoming pod's affinity
            # terms (one pod must satisfy all of them), or stop matching an anti-affinity term.
            if _labels(old) == _labels(new):
                return QueueingHint.SKIP
            if not matches_all(terms.required_affinity, old) and matches_all(terms.required_affinity, new):
                return QueueingHint.QUEUE
            for t in terms.required_anti_affinity:
                if t.matches(old, None) and not t.matches(new, None):
                    return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            # An added pod can satisfy the incoming pod's required affinity.
            return QueueingHint.QUEUE if matches_all(terms.required_affinity, new) else QueueingHint.SKIP
        deleted = old or {}
        if any(t.matches(deleted, None) for t in terms.required_anti_affinity):
            return QueueingHint.QUEUE
        # The deleted pod's own anti-affinity may have been what kept the incoming pod out.
        ns_labels = self._namespace_labels(_meta(pod).get("namespace", ""))
        if any(t.matches(pod, ns_labels) for t in pod_terms(deleted).required_anti_affinity):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _after_node_change(self, pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
        # A node added or relabelled matters when it carries a topology key of the pod's terms.
        terms = pod_terms(pod)
        labels = _labels(new if new is not None else old)
        keys = {t.topology_key for t in [*terms.required_affinity, *terms.required_anti_affinity]}
        return QueueingHint.QUEUE if any(k in labels for k in keys) else QueueingHint.SKIP


def _labels(obj: Obj | None) -> dict[str, str]:
    return _meta(obj or {}).get("labels") or {}


def _satisfies_affinity(s: PreFilterState, node_labels: dict[str, str]) -> bool:
    pods_exist = True
    for t in s.terms.required_affinity:
        value = node_labels.get(t.topology_key)
        if value is None:
            return False  # the node lacks the topology key: never satisfiable here
        if s.affinity.get((t.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: no pod anywhere matches yet, and the pod
    # matches all its own terms, so it may go to any node that has the topology keys.
    return not s.affinity and matches_all(s.terms.required_affinity, s.pod)


def new(args: Obj, handle: Handle, features: Features) -> InterPodAffinity:
    return InterPodAffinity(args, handle, features)
