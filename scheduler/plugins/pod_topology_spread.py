"""PodTopologySpread: keep matching pods spread over topology domains, upstream's plugin.

PreFilter counts, per hard (DoNotSchedule) constraint, the matching pods in each domain; Filter
rejects a node whose domain would exceed maxSkew over the global minimum (0 below minDomains).
PreScore/Score/normalize_score favour domains with fewer matching pods for soft constraints. A pod
without constraints gets the profile's defaults (System: hostname maxSkew 3, zone maxSkew 5, both
ScheduleAnyway) with the selectors of the Services and controller that select it. Built by
`scheduler/registry.py`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from client import resources
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import MAX_NODE_SCORE, Features, Handle, NodeScore
from scheduler.framework.node_info import NodeInfo, PodInfo
from scheduler.framework.status import Status
from scheduler.plugins import label_selectors, names, node_selectors, tolerations
from scheduler.plugins.label_selectors import Requirement, Selector

Obj = dict[str, Any]

NAME = names.POD_TOPOLOGY_SPREAD
ERR_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_NODE_LABEL_NOT_MATCH = ERR_CONSTRAINTS_NOT_MATCH + " (missing required label)"

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"

SYSTEM_DEFAULT_CONSTRAINTS: list[Obj] = [
    {"topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
]
# PodTopologySpreadArgs as pkg/scheduler/apis/config/v1 defaults them.
DEFAULT_ARGS: Obj = {"defaultConstraints": [], "defaultingType": "System"}

_PRE_FILTER_KEY = "PreFilter" + NAME
_DEFAULT_SELECTOR_SOURCES = (resources.SERVICES, resources.REPLICATIONCONTROLLERS, resources.REPLICASETS,
                             resources.STATEFULSETS)
_PRE_SCORE_KEY = "PreScore" + NAME


@dataclass(frozen=True)
class Constraint:
    """A v1.TopologySpreadConstraint with its selector compiled and its defaults filled in."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"

    def includes_node(self, pod: Obj, node: Obj, affinity: node_selectors.RequiredNodeAffinity) -> bool:
        """nodeAffinityPolicy / nodeTaintsPolicy: does `node` count as a domain member for `pod`?"""
        if self.node_affinity_policy == "Honor" and not affinity.matches(node):
            return False
        if self.node_taints_policy == "Honor":
            if tolerations.first_untolerated(tolerations.node_taints(node), tolerations.pod_tolerations(pod),
                                             _does_not_schedule) is not None:
                return False
        return True


def _does_not_schedule(taint: Obj) -> bool:
    """helper.DoNotScheduleTaintsFilterFunc: the taints that keep pods off a node."""
    return taint.get("effect") in (tolerations.NO_SCHEDULE, tolerations.NO_EXECUTE)


def _labels(obj: Obj | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def _has_all_keys(node_labels: dict[str, str], constraints: Sequence[Constraint]) -> bool:
    return all(c.topology_key in node_labels for c in constraints)


def count_matching(pods: Sequence[PodInfo], selector: Selector, namespace: str) -> int:
    count = 0
    for info in pods:
        meta = info.pod.get("metadata") or {}
        # Terminating pods do not count (kubernetes#87621).
        if meta.get("deletionTimestamp") or meta.get("namespace", "") != namespace:
            continue
        if selector.matches(meta.get("labels") or {}):
            count += 1
    return count


def compile_constraints(specs: Sequence[Obj], pod_labels: dict[str, str], action: str) -> list[Constraint]:
    """The constraints of `specs` whose whenUnsatisfiable is `action`, with matchLabelKeys merged."""
    out = []
    for spec in specs:
        if spec.get("whenUnsatisfiable", DO_NOT_SCHEDULE) != action:
            continue
        selector = label_selectors.label_selector(spec.get("labelSelector"))
        keys = [k for k in spec.get("matchLabelKeys") or [] if k in pod_labels]
        if keys:
            # Upstream merges the pod's values in front of the selector's own requirements; a nil
            # selector (Nothing) then becomes just the pod's key/values.
            merged = tuple(Requirement(k, "In", frozenset([pod_labels[k]])) for k in keys)
            selector = Selector(merged + selector.requirements)
        out.append(Constraint(
            max_skew=int(spec.get("maxSkew") or 0), topology_key=spec.get("topologyKey", ""), selector=selector,
            min_domains=int(spec["minDomains"]) if spec.get("minDomains") is not None else 1,
            node_affinity_policy=spec.get("nodeAffinityPolicy") or "Honor",
            node_taints_policy=spec.get("nodeTaintsPolicy") or "Ignore"))
    return out


class PreFilterState:
    """Matching pods per domain for each hard constraint; cloned when preemption edits it."""

    def __init__(self, constraints: list[Constraint], counts: list[dict[str, int]]) -> None:
        self.constraints = constraints
        self.counts = counts
        self._mins: list[int | None] = [None] * len(constraints)

    def clone(self) -> "PreFilterState":
        return PreFilterState(self.constraints, [dict(c) for c in self.counts])

    def min_match(self, i: int) -> int:
        """The global minimum for constraint i; 0 while fewer than minDomains domains are eligible."""
        counts = self.counts[i]
        if len(counts) < self.constraints[i].min_domains:
            return 0
        if self._mins[i] is None:
            self._mins[i] = min(counts.values())
        return self._mins[i]  # type: ignore[return-value]

    def update(self, i: int, value: str, delta: int) -> None:
        self.counts[i][value] = self.counts[i].get(value, 0) + delta
        self._mins[i] = None


@dataclass
class PreScoreState:
    constraints: list[Constraint]
    ignored_nodes: set[str]
    counts: list[dict[str, int]]  # per constraint, domain -> matching pods (not for hostname keys)
    weights: list[float]


class PodTopologySpread:
    name = NAME

    def __init__(self, args: Obj, handle: Handle, features: Features) -> None:
        self.handle = handle
        merged = defaulted_args(args)
        validate_args(merged)
        self.system_defaulted = merged["defaultingType"] == "System"
        self.default_constraints: list[Obj] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else list(merged["defaultConstraints"]))
        if self.default_constraints:
            # Ask for the stores now, so the scheduler starts (and syncs) their informers before
            # the first cycle, as upstream's New sets its listers.
            for resource in _DEFAULT_SELECTOR_SOURCES:
                handle.store(resource)

    # --- constraints of a pod

    def _default_selector(self, pod: Obj) -> Selector:
        """helper.DefaultSelector: the selectors of the Services selecting the pod, plus its
        controller's (ReplicationController, ReplicaSet or StatefulSet) selector."""
        meta = pod.get("metadata") or {}
        namespace, labels = meta.get("namespace", ""), meta.get("labels") or {}
        merged: dict[str, str] = {}
        for svc in self.handle.store(resources.SERVICES).list():
            sel = (svc.get("spec") or {}).get("selector")
            # A Service without a selector selects nothing, not everything.
            if sel is None or (svc.get("metadata") or {}).get("namespace") != namespace:
                continue
            if label_selectors.from_set(sel).matches(labels):
                merged.update(sel)
        selector = label_selectors.from_set(merged)
        owner = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
        if owner is None:
            return selector
        kinds = {("v1", "ReplicationController"): resources.REPLICATIONCONTROLLERS,
                 ("apps/v1", "ReplicaSet"): resources.REPLICASETS, ("apps/v1", "StatefulSet"): resources.STATEFULSETS}
        resource = kinds.get((owner.get("apiVersion", ""), owner.get("kind", "")))
        if resource is None:
            return selector
        found = self.handle.store(resource).get(f"{namespace}/{owner.get('name', '')}")
        if found is None:
            return selector
        spec_selector = (found.get("spec") or {}).get("selector")
        if resource is resources.REPLICATIONCONTROLLERS:
            return label_selectors.from_set({**merged, **(spec_selector or {})})
        try:
            other = label_selectors.label_selector(spec_selector)
        except ValueError:
            return selector
        return selector.adding(*other.requirements)

    def _default_constraints(self, pod: Obj, action: str) -> list[Constraint]:
        constraints = compile_constraints(self.default_constraints, _labels(pod), action)
        if not constraints:
            return []
        selector = self._default_selector(pod)
        if selector.empty:
            return []
        return [Constraint(c.max_skew, c.topology_key, selector, c.min_domains, c.node_affinity_policy,
                           c.node_taints_policy) for c in constraints]

    def constraints(self, pod: Obj, action: str) -> list[Constraint]:
        specs = (pod.get("spec") or {}).get("topologySpreadConstraints") or []
        if specs:
            return compile_constraints(specs, _labels(pod), action)
        return self._default_constraints(pod, action)

    # --- PreFilter and its extensions

    def pre_filter(self, state: CycleState, pod: Obj, nodes: Sequence[NodeInfo]) -> tuple[None, Status | None]:
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except ValueError as exc:
            return None, Status.as_error(f"get constraints from pod: {exc}")
        if not constraints:
            return None, Status.skip()
        namespace = (pod.get("metadata") or {}).get("namespace", "")
        affinity = node_selectors.RequiredNodeAffinity.of(pod)
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for info in nodes:
            node = info.node or {}
            node_labels = _labels(node)
            if not _has_all_keys(node_labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.includes_node(pod, node, affinity):
                    continue
                value = node_labels[c.topology_key]
                counts[i][value] = counts[i].get(value, 0) + count_matching(info.pods, c.selector, namespace)
        state.write(_PRE_FILTER_KEY, PreFilterState(constraints, counts))
        return None, None

    def _update_with_pod(self, state: CycleState, pod: Obj, other: Obj, node: NodeInfo, delta: int) -> Status | None:
        s: PreFilterState | None = state.get(_PRE_FILTER_KEY)
        if s is None:
            return Status.as_error(f'reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        other_meta = other.get("metadata") or {}
        if node.node is None or other_meta.get("namespace", "") != (pod.get("metadata") or {}).get("namespace", ""):
            return None
        node_labels = node.labels
        if not _has_all_keys(node_labels, s.constraints):
            return None
        affinity = node_selectors.RequiredNodeAffinity.of(pod)
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(other_meta.get("labels") or {}):
                continue
            if not c.includes_node(pod, node.node, affinity):
                continue
            s.update(i, node_labels[c.topology_key], delta)
        return None

    def add_pod(self, state: CycleState, pod: Obj, to_add: PodInfo, node: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod, to_add.pod, node, 1)

    def remove_pod(self, state: CycleState, pod: Obj, to_remove: PodInfo, node: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod, to_remove.pod, node, -1)

    # --- Filter

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        s: PreFilterState | None = state.get(_PRE_FILTER_KEY)
        if s is None:
            return Status.as_error(f'reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        pod_labels = _labels(pod)
        node_labels = node.labels
        for i, c in enumerate(s.constraints):
            value = node_labels.get(c.topology_key)
            if value is None:
                return Status.unresolvable(ERR_NODE_LABEL_NOT_MATCH)
            self_match = 1 if c.selector.matches(pod_labels) else 0
            skew = s.counts[i].get(value, 0) + self_match - s.min_match(i)
            if skew > c.max_skew:
                return Status.unschedulable(ERR_CONSTRAINTS_NOT_MATCH)
        return None

    # --- PreScore, Score, NormalizeScore

    def pre_score(self, state: CycleState, pod: Obj, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self.handle.snapshot.node_infos
        if not all_nodes:
            return Status.skip()
        has_own = bool((pod.get("spec") or {}).get("topologySpreadConstraints"))
        try:
            constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        except ValueError as exc:
            return Status.as_error(f"calculating preScoreState: obtaining pod's soft topology spread constraints: {exc}")
        if not constraints:
            return Status.skip()
        # Only non-system-default rules need every topology label, so nodes without a zone label
        # still get hostname spreading from the system defaults.
        require_all = has_own or not self.system_defaulted
        ignored: set[str] = set()
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for info in nodes:
            node_labels = info.labels
            if require_all and not _has_all_keys(node_labels, constraints):
                ignored.add(info.name)
                continue
            for i, c in enumerate(constraints):
                # Without require_all a node lacking the key lands in the "" domain, as upstream's does.
                if c.topology_key != HOSTNAME:
                    counts[i].setdefault(node_labels.get(c.topology_key, ""), 0)
        weights = []
        for i, c in enumerate(constraints):
            size = len(nodes) - len(ignored) if c.topology_key == HOSTNAME else len(counts[i])
            weights.append(math.log(size + 2))
        namespace = (pod.get("metadata") or {}).get("namespace", "")
        affinity = node_selectors.RequiredNodeAffinity.of(pod)
        for info in all_nodes:
            node = info.node or {}
            node_labels = info.labels
            if require_all and not _has_all_keys(node_labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.includes_node(pod, node, affinity):
                    continue
                value = node_labels.get(c.topology_key, "")
                # Domains with no candidate node are not scored; hostname counts are made in Score.
                if c.topology_key == HOSTNAME or value not in counts[i]:
                    continue
                counts[i][value] += count_matching(info.pods, c.selector, namespace)
        state.write(_PRE_SCORE_KEY, PreScoreState(constraints, ignored, counts, weights))
        return None

    def score(self, state: CycleState, pod: Obj, node: NodeInfo) -> tuple[int, Status | None]:
        s: PreScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None:
            return 0, Status.as_error(f'error reading "{_PRE_SCORE_KEY}" from cycleState: not found')
        if node.name in s.ignored_nodes:
            return 0, None
        namespace = (pod.get("metadata") or {}).get("namespace", "")
        node_labels = node.labels
        total = 0.0
        for i, c in enumerate(s.constraints):
            value = node_labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == HOSTNAME:
                count = count_matching(node.pods, c.selector, namespace)
            else:
                count = s.counts[i].get(value, 0)
            # maxSkew-1 waters down the differences between domains, as upstream's scoreForCount.
            total += count * s.weights[i] + (c.max_skew - 1)
        return _round_half_away(total), None

    def normalize_score(self, state: CycleState, pod: Obj, scores: list[NodeScore]) -> Status | None:
        s: PreScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None:
            return None
        valid = [ns.score for ns in scores if ns.name not in s.ignored_nodes]
        min_score = min(valid) if valid else 0
        max_score = max([0, *valid])
        for ns in scores:
            if ns.name in s.ignored_nodes:
                ns.score = 0
            elif max_score == 0:
                ns.score = MAX_NODE_SCORE
            else:
                ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
        return None

    # --- queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATIONS | ActionType.DELETE
        node_actions = ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
        return [ClusterEventWithHint(ClusterEvent(Resource.POD, pod_actions), self._after_pod_change),
                ClusterEventWithHint(ClusterEvent(Resource.NODE, node_actions), self._after_node_change)]

    def _after_pod_change(self, pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
        meta = pod.get("metadata") or {}

        def involved(other: Obj) -> bool:
            other_meta = other.get("metadata") or {}
            if other_meta.get("uid") and other_meta.get("uid") == meta.get("uid"):
                return True
            return bool((other.get("spec") or {}).get("nodeName")) and other_meta.get("namespace") == meta.get("namespace")

        if (new is not None and not involved(new)) or (old is not None and not involved(old)):
            return QueueingHint.SKIP
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if old is not None and new is not None:
            if ((new.get("metadata") or {}).get("uid") == meta.get("uid")
                    and (new.get("spec") or {}).get("tolerations") != (old.get("spec") or {}).get("tolerations")
                    and any(c.node_taints_policy == "Honor" for c in constraints)):
                return QueueingHint.QUEUE
            if _labels(old) == _labels(new):
                return QueueingHint.SKIP
            changed = any(c.selector.matches(_labels(old)) != c.selector.matches(_labels(new)) for c in constraints)
            return QueueingHint.QUEUE if changed else QueueingHint.SKIP
        target = new if new is not None else old
        matches = any(c.selector.matches(_labels(target)) for c in constraints)
        return QueueingHint.QUEUE if matches else QueueingHint.SKIP

    def _after_node_change(self, pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        old_ok = old is not None and _has_all_keys(_labels(old), constraints)
        new_ok = new is not None and _has_all_keys(_labels(new), constraints)
        if old is not None and new is not None:
            if old_ok != new_ok:
                return QueueingHint.QUEUE
            keys_changed = any(_labels(old).get(c.topology_key) != _labels(new).get(c.topology_key) for c in constraints)
            taints_changed = (old.get("spec") or {}).get("taints") != (new.get("spec") or {}).get("taints")
            return QueueingHint.QUEUE if new_ok and (keys_changed or taints_changed) else QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_ok else QueueingHint.SKIP
        return QueueingHint.QUEUE if old_ok else QueueingHint.SKIP


def defaulted_args(args: Obj | None) -> Obj:
    """v1's SetDefaults_PodTopologySpreadArgs: List when constraints are given, else System."""
    out = dict(args or {})
    out.setdefault("defaultConstraints", [])
    if not out.get("defaultingType"):
        out["defaultingType"] = "List" if out["defaultConstraints"] else "System"
    return out


def validate_args(args: Obj) -> None:
    """ValidatePodTopologySpreadArgs; the first problem raises with upstream's field path and text."""
    defaulting = args["defaultingType"]
    if defaulting not in ("System", "List"):
        raise ValueError(f'defaultingType: Unsupported value: "{defaulting}": supported values: "List", "System"')
    constraints = args["defaultConstraints"] or []
    if defaulting == "System" and constraints:
        raise ValueError('defaultConstraints: Invalid value: when .defaultingType is "System"')
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(constraints):
        path = f"defaultConstraints[{i}]"
        if int(c.get("maxSkew") or 0) <= 0:
            raise ValueError(f"{path}.maxSkew: Invalid value: {c.get('maxSkew') or 0}: must be greater than zero")
        if not c.get("topologyKey"):
            raise ValueError(f"{path}.topologyKey: Required value: can not be empty")
        when = c.get("whenUnsatisfiable") or ""
        if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise ValueError(f'{path}.whenUnsatisfiable: Unsupported value: "{when}": supported values: '
                             f'"DoNotSchedule", "ScheduleAnyway"')
        if (c["topologyKey"], when) in seen:
            raise ValueError(f'{path}: Duplicate value: "{{{c["topologyKey"]}, {when}}}"')
        seen.add((c["topologyKey"], when))
        if c.get("labelSelector") is not None:
            raise ValueError(f"{path}.labelSelector: Forbidden: constraint must not define a selector, "
                             f"as they deduced for each pod")


def _round_half_away(x: float) -> int:
    """Go's math.Round: halves go away from zero (Python's round() goes to even)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def new(args: Obj, handle: Handle, features: Features) -> PodTopologySpread:
    return PodTopologySpread(args, handle, features)
