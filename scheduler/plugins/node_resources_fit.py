"""NodeResourcesFit: the node must have room for the pod's requests; scoring by allocation.

PreFilter computes the pod's effective requests (`framework/resources.py`) and, when extended
resources may be served by DRA (KEP-5004), the DeviceClass mapping from extended-resource names
to classes. Filter lists every shortfall ("Too many pods", "Insufficient cpu", ...); it is
unresolvable when the request exceeds the node's whole allocatable, since preemption cannot help.
An extended resource a DeviceClass maps and the node does not advertise in allocatable is left to
DynamicResources (`served_by_dra`). Score uses the configured strategy (LeastAllocated,
MostAllocated, RequestedToCapacityRatio) from `resource_allocation.py`, with non-zero requests.
ScorePlacement (PodGroup cycle, KEP-5732) always packs: `node_resources_fit_placement.py`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from client import resources as kinds
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle, PreFilterResult
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.pod_group import Placement, PodGroupAssignment, PodGroupInfo
from scheduler.framework.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from scheduler.framework.resources import Resource as Requests
from scheduler.framework.resources import pod_requests
from scheduler.framework.status import Status
from scheduler.plugins import names, resource_allocation
from scheduler.plugins import extended_resource_devices, node_resources_fit_placement
from scheduler.plugins.extended_resource_devices import (IMPLICIT_CLASS_PREFIX, ExtendedResourceDevices,
                                                        device_class_mapping)

Obj = dict[str, Any]
PRE_FILTER_KEY = "PreFilter" + names.NODE_RESOURCES_FIT
PRE_SCORE_KEY = "PreScore" + names.NODE_RESOURCES_FIT
LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO = "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"


def is_extended_resource_name(name: str) -> bool:
    """Upstream's IsExtendedResourceName: a prefixed name outside kubernetes.io, not a quota name."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def served_by_dra(name: str, node: NodeInfo, mapping: Mapping[str, str] | None) -> bool:
    """Does DynamicResources, not this plugin, decide `name` on this node? Yes when a DeviceClass
    maps it and the node does not list it in allocatable (a device plugin would)."""
    return mapping is not None and name in mapping and name not in node.allocatable.scalar


@dataclass
class InsufficientResource:
    name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool  # more than the node's whole allocatable: preemption cannot make room


@dataclass
class PreFilterState:
    requests: Requests
    device_classes: dict[str, str] | None  # None: DRA extended resources are off or the pod asks none

    def clone(self) -> "PreFilterState":
        return self  # unchanged by adding or removing other pods


def insufficient_resources(requests: Requests, node: NodeInfo, ignored: frozenset[str] = frozenset(),
                           ignored_groups: frozenset[str] = frozenset(),
                           device_classes: Mapping[str, str] | None = None) -> list[InsufficientResource]:
    out = []
    allowed = node.allocatable.allowed_pod_number
    if len(node.pods) + 1 > allowed:
        out.append(InsufficientResource(PODS, "Too many pods", 1, len(node.pods), allowed, False))
    if not (requests.milli_cpu or requests.memory or requests.ephemeral_storage or requests.scalar):
        return out
    for name, asked, used, have in ((CPU, requests.milli_cpu, node.requested.milli_cpu, node.allocatable.milli_cpu),
                                    (MEMORY, requests.memory, node.requested.memory, node.allocatable.memory),
                                    (EPHEMERAL_STORAGE, requests.ephemeral_storage, node.requested.ephemeral_storage,
                                     node.allocatable.ephemeral_storage)):
        if asked > 0 and asked > have - used:
            out.append(InsufficientResource(name, f"Insufficient {name}", asked, used, have, asked > have))
    for name, asked in requests.scalar.items():
        if asked == 0:
            continue
        if is_extended_resource_name(name) and (name in ignored or name.split("/", 1)[0] in ignored_groups):
            continue
        if served_by_dra(name, node, device_classes):
            continue
        have = node.allocatable.scalar.get(name, 0)
        used = node.requested.scalar.get(name, 0)
        if asked > have - used:
            out.append(InsufficientResource(name, f"Insufficient {name}", asked, used, have, asked > have))
    return out


def _node_info(node: Obj) -> NodeInfo:
    info = NodeInfo()
    info.set_node(node)
    return info


class NodeResourcesFit:
    name = names.NODE_RESOURCES_FIT

    def __init__(self, handle: Handle, scorer: resource_allocation.ResourceScorer, ignored: frozenset[str],
                 ignored_groups: frozenset[str], dra_extended: bool, queue_hints: bool) -> None:
        self.handle = handle
        self.scorer = scorer
        self.ignored = ignored
        self.ignored_groups = ignored_groups
        self.dra_extended = dra_extended
        self.queue_hints = queue_hints
        self.placement_scorer = node_resources_fit_placement.most_allocated_scorer(scorer.specs)

    def _device_classes(self, requests: Requests) -> dict[str, str] | None:
        if not self.dra_extended or not any(requests.scalar.values()):
            return None
        return device_class_mapping(self.handle.store(kinds.DEVICECLASSES).list())

    def pre_filter(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        requests = pod_requests(pod)
        state.write(PRE_FILTER_KEY, PreFilterState(requests, self._device_classes(requests)))
        return None, None

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        try:
            s: PreFilterState = state.read(PRE_FILTER_KEY)
        except KeyError as e:
            return Status.as_error(e)
        r, have, used = s.requests, node.allocatable, node.requested
        # Fast path for the common pod (no extended resources) on a node with room: Filter runs per node.
        if (not r.scalar and len(node.pods) < have.allowed_pod_number and r.milli_cpu <= have.milli_cpu - used.milli_cpu
                and r.memory <= have.memory - used.memory
                and r.ephemeral_storage <= have.ephemeral_storage - used.ephemeral_storage):
            return None
        short = insufficient_resources(r, node, self.ignored, self.ignored_groups, s.device_classes)
        if not short:
            return None
        status = Status.unschedulable(*(r.reason for r in short))
        if any(r.unresolvable for r in short):
            status = Status.unresolvable(*status.reasons)
        return status

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> dict[int, Status]:
        s: PreFilterState = state.read(PRE_FILTER_KEY)  # raises without PreFilter: asked node by node
        r = s.requests
        if r.scalar:
            suspects = range(len(nodes))  # extended resources: the full check on every node
        else:
            # `filter`'s fast path, inlined and remembered per NodeInfo (NodeInfo.memo) for these
            # requests: only a node that might be short gets the full check.
            cpu, memory, storage = r.milli_cpu, r.memory, r.ephemeral_storage
            key = sys.intern(f"{self.name} fits {cpu} {memory} {storage}")
            suspects = []
            for i, node in enumerate(nodes):
                memo = node.memo
                room = memo.get(key)
                if room is None:
                    have, used = node.allocatable, node.requested
                    room = memo[key] = (len(node.pods) < have.allowed_pod_number
                                        and cpu <= have.milli_cpu - used.milli_cpu
                                        and memory <= have.memory - used.memory
                                        and storage <= have.ephemeral_storage - used.ephemeral_storage)
                if not room:
                    suspects.append(i)
            # A node that is short keeps its verdict in the memo too: a pod that must preempt is
            # turned down by every node, attempt after attempt, for the same few reasons. Statuses
            # are never changed once made (the runner only stamps this plugin's name), so the
            # attempts may share one.
            verdict = sys.intern(f"{key} verdict")
            found = {}
            for i in suspects:
                memo = nodes[i].memo
                if verdict in memo:
                    status = memo[verdict]
                else:
                    status = memo[verdict] = self.filter(state, pod, nodes[i])
                if status is not None:
                    found[i] = status
            return found
        found = {}
        for i in suspects:
            status = self.filter(state, pod, nodes[i])
            if status is not None:
                found[i] = status
        return found

    def pre_score(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_KEY, self._score_inputs(pod))
        return None

    def _score_inputs(self, pod: Obj) -> tuple[list[int], ExtendedResourceDevices | None]:
        requests = self.scorer.pod_requests(pod)
        return requests, extended_resource_devices.for_scoring(
            self.handle, self.scorer.scalar_requested(requests), self.dra_extended)

    def score(self, state: CycleState, pod: Obj, node: NodeInfo) -> tuple[int, Status | None]:
        inputs = state.get(PRE_SCORE_KEY)
        if inputs is None:  # PreScore disabled in this profile
            inputs = self._score_inputs(pod)
        return self.scorer.score(node, *inputs), None

    def score_nodes(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> list[int]:
        inputs = state.get(PRE_SCORE_KEY)
        if inputs is None:
            inputs = self._score_inputs(pod)
        return self.scorer.score_nodes(nodes, *inputs)

    def score_placement(self, state: CycleState, group: PodGroupInfo, placement: Placement,
                        assignment: PodGroupAssignment) -> tuple[int, Status | None]:
        """The placementScore point: MostAllocated over the whole placement (`node_resources_fit_placement`)."""
        return node_resources_fit_placement.score(self.placement_scorer, group.pods, placement, assignment), None

    # Queueing hints.

    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
        if not self.queue_hints:
            node_actions |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        events = [
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
                                 self._after_pod_event),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, node_actions), self._after_node_change),
        ]
        if self.dra_extended:
            events.append(ClusterEventWithHint(ClusterEvent(Resource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
                                               self._after_device_class_change))
        return events

    def _after_pod_event(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        if new is None:  # deleted: only a pod that held (or was promised) room frees any
            spec, status = (old or {}).get("spec") or {}, (old or {}).get("status") or {}
            if old is not None and not spec.get("nodeName") and not status.get("nominatedNodeName"):
                return QueueingHint.SKIP
            return QueueingHint.QUEUE
        if (new.get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid"):
            return QueueingHint.QUEUE  # the pod itself asks for less now
        if not (new.get("spec") or {}).get("nodeName") or old is None:
            return QueueingHint.SKIP
        before, after, wanted = pod_requests(old), pod_requests(new), pod_requests(pod)
        for name in [CPU, MEMORY, EPHEMERAL_STORAGE, *wanted.scalar]:
            if wanted.get(name) and before.get(name) > after.get(name):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _after_node_change(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        if new is None:
            return QueueingHint.SKIP
        requests = pod_requests(pod)
        classes = self._device_classes(requests)
        modified = _node_info(new)
        if insufficient_resources(requests, modified, device_classes=classes):
            return QueueingHint.SKIP  # even an empty node of this shape would not take the pod
        if old is None:
            return QueueingHint.QUEUE
        original = _node_info(old)
        if modified.allocatable.allowed_pod_number > original.allocatable.allowed_pod_number:
            return QueueingHint.QUEUE
        for name in [CPU, MEMORY, EPHEMERAL_STORAGE, *requests.scalar]:
            if not requests.get(name):
                continue
            if modified.allocatable.get(name) > original.allocatable.get(name):
                return QueueingHint.QUEUE
            if served_by_dra(name, modified, classes):
                return QueueingHint.QUEUE  # left to DynamicResources, which may now place it
        return QueueingHint.SKIP

    def _after_device_class_change(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        if new is None:
            return QueueingHint.SKIP
        asked = pod_requests(pod).scalar
        served = {IMPLICIT_CLASS_PREFIX + ((new.get("metadata") or {}).get("name") or ""),
                  (new.get("spec") or {}).get("extendedResourceName") or ""}
        return QueueingHint.QUEUE if any(asked.get(name) for name in served if name) else QueueingHint.SKIP


def _scorer(strategy: Obj) -> resource_allocation.ResourceScorer:
    kind = strategy.get("type") or LEAST_ALLOCATED
    specs = resource_allocation.resource_specs(strategy.get("resources"), "scoringStrategy.resources")
    if kind == LEAST_ALLOCATED:
        return resource_allocation.ResourceScorer(specs, resource_allocation.least_allocated(specs), use_requested=False,
                                                  cpu_memory=resource_allocation.least_allocated_cpu_memory(specs))
    if kind == MOST_ALLOCATED:
        return resource_allocation.ResourceScorer(specs, resource_allocation.most_allocated(specs), use_requested=False)
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        shape = ((strategy.get("requestedToCapacityRatio") or {}).get("shape")) or []
        _validate_shape(shape)
        return resource_allocation.ResourceScorer(
            specs, resource_allocation.requested_to_capacity_ratio(specs, shape), use_requested=False)
    raise ValueError(f"scoringStrategy.type: Unsupported value: {kind!r}: supported values: "
                     f"\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"")


def _validate_shape(shape: list[Obj]) -> None:
    field = "scoringStrategy.requestedToCapacityRatio.shape"
    if not shape:
        raise ValueError(f"{field}: Required value: at least one point must be specified")
    previous = -1
    for i, point in enumerate(shape):
        utilization, score = int(point.get("utilization") or 0), int(point.get("score") or 0)
        if not 0 <= utilization <= 100:
            raise ValueError(f"{field}[{i}].utilization: Invalid value: {utilization}: not in valid range [0, 100]")
        if utilization <= previous:
            raise ValueError(f"{field}[{i}].utilization: Invalid value: {utilization}: "
                             f"utilization values must be sorted in increasing order")
        if not 0 <= score <= resource_allocation.MAX_CUSTOM_PRIORITY_SCORE:
            raise ValueError(f"{field}[{i}].score: Invalid value: {score}: not in valid range [0, 10]")
        previous = utilization


def new(args: dict[str, Any], handle: Handle, features: Features) -> NodeResourcesFit:
    args = args or {}
    groups = list(args.get("ignoredResourceGroups") or [])
    for i, group in enumerate(groups):
        if "/" in group:
            raise ValueError(f"ignoredResourceGroups[{i}]: Invalid value: {group!r}: resource group name can't contain '/'")
    return NodeResourcesFit(
        handle, _scorer(args.get("scoringStrategy") or {}), frozenset(args.get("ignoredResources") or []),
        frozenset(groups),
        dra_extended=features.get("DynamicResourceAllocation", True) and features.get("DRAExtendedResource", True),
        queue_hints=features.get("SchedulerQueueingHints", True))
