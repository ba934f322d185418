"""NodeResourcesBalancedAllocation: prefer nodes whose resources stay evenly used with the pod.

Score is (1 - the standard deviation of requested/allocatable across the configured resources)
x 100 (`resource_allocation.balanced`), with real requests, not the non-zero defaults. PreScore
answers Skip for a pod that requests none of the resources, so best-effort pods are not all drawn
to one node (upstream issue 129138); DRA-served extended resources count their devices, as in
NodeResourcesFit. Args: `resources` (default cpu, memory, weight 1). Score only: no events.
"""

from __future__ import annotations

from typing import Any

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Features, Handle
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status
from scheduler.plugins import extended_resource_devices, names, resource_allocation

Obj = dict[str, Any]
PRE_SCORE_KEY = "PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION


class NodeResourcesBalancedAllocation:
    name = names.NODE_RESOURCES_BALANCED_ALLOCATION

    def __init__(self, handle: Handle, scorer: resource_allocation.ResourceScorer, dra_extended: bool) -> None:
        self.handle = handle
        self.scorer = scorer
        self.dra_extended = dra_extended

    def pre_score(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> Status | None:
        requests = self.scorer.pod_requests(pod)
        if not any(requests):
            return Status.skip()
        state.write(PRE_SCORE_KEY, (requests, self._devices(requests)))
        return None

    def _devices(self, requests: list[int]) -> extended_resource_devices.ExtendedResourceDevices | None:
        return extended_resource_devices.for_scoring(self.handle, self.scorer.scalar_requested(requests),
                                                     self.dra_extended)

    def score(self, state: CycleState, pod: Obj, node: NodeInfo) -> tuple[int, Status | None]:
        inputs = state.get(PRE_SCORE_KEY)
        if inputs is None:  # PreScore disabled in this profile
            requests = self.scorer.pod_requests(pod)
            if not any(requests):
                return 0, None
            inputs = (requests, self._devices(requests))
        return self.scorer.score(node, *inputs), None

    def score_nodes(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> list[int]:
        inputs = state.get(PRE_SCORE_KEY)
        if inputs is None:
            requests = self.scorer.pod_requests(pod)
            if not any(requests):
                return [0] * len(nodes)
            inputs = (requests, self._devices(requests))
        return self.scorer.score_nodes(nodes, *inputs)


def new(args: dict[str, Any], handle: Handle, features: Features) -> NodeResourcesBalancedAllocation:
    specs = resource_allocation.resource_specs((args or {}).get("resources"), "resources")
    return NodeResourcesBalancedAllocation(
        handle, resource_allocation.ResourceScorer(specs, resource_allocation.balanced, use_requested=True,
                                                   cpu_memory=resource_allocation.balanced_cpu_memory),
        dra_extended=features.get("DynamicResourceAllocation", True) and features.get("DRAExtendedResource", True))
