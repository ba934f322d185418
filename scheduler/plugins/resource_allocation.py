"""The resource-allocation scorers NodeResourcesFit and NodeResourcesBalancedAllocation share
(upstream's resource_allocation.go, least/most_allocated.go, requested_to_capacity_ratio.go).

`ResourceScorer.score` builds, for each configured resource, the node's allocatable and what would
be requested with the pod on it, then hands both vectors to a strategy. Fit scores with non-zero
requests (containers that ask for nothing count 100m CPU and 200Mi, so empty pods still spread);
BalancedAllocation uses the real requests. Extended resources the pod does not request, and
resources the node does not have, are left out, except that an extended resource served by DRA
counts its devices (`extended_resource_devices.py`). Integer arithmetic, as upstream's int64.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.framework.interfaces import MAX_NODE_SCORE
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.resources import CPU, EPHEMERAL_STORAGE, MEMORY, Resource, pod_requests
from scheduler.plugins.extended_resource_devices import ExtendedResourceDevices

Obj = dict[str, Any]
Strategy = Callable[[Sequence[int], Sequence[int]], int]
MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10  # shape scores are 0..10 in the config, scaled to 0..100
_SCORERS = itertools.count(1)
DEFAULT_RESOURCES = ({"name": CPU, "weight": 1}, {"name": MEMORY, "weight": 1})


@dataclass(frozen=True)
class ResourceSpec:
    name: str
    weight: int


def resource_specs(raw: Sequence[Obj] | None, field: str) -> list[ResourceSpec]:
    """The `resources` list with v1 defaults (cpu and memory, weight 1; a 0 weight means 1), validated."""
    specs = []
    for i, entry in enumerate(raw if raw else DEFAULT_RESOURCES):
        name = entry.get("name") or ""
        weight = int(entry.get("weight") or 1)
        if not name:
            raise ValueError(f"{field}[{i}].name: Required value")
        if not 1 <= weight <= 100:
            raise ValueError(f"{field}[{i}].weight: Invalid value: {weight}: resource weight of {name} "
                             f"should be in the range [1, 100]")
        specs.append(ResourceSpec(name, weight))
    return specs


def is_scalar(name: str) -> bool:
    return name not in (CPU, MEMORY, EPHEMERAL_STORAGE, "pods")


def _trunc_div(a: int, b: int) -> int:
    """Go's integer division (towards zero), which decreasing shape segments depend on."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def least_allocated(specs: Sequence[ResourceSpec]) -> Strategy:
    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, alloc in zip(specs, requested, allocatable):
            if alloc == 0:
                continue
            total += (0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc) * spec.weight
            weights += spec.weight
        return total // weights if weights else 0
    return score


def most_allocated(specs: Sequence[ResourceSpec]) -> Strategy:
    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, alloc in zip(specs, requested, allocatable):
            if alloc == 0:
                continue
            total += (min(req, alloc) * MAX_NODE_SCORE // alloc) * spec.weight  # overcommit counts as full
            weights += spec.weight
        return total // weights if weights else 0
    return score


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """Upstream's BuildBrokenLinearFunction over (utilization, score) points sorted by utilization."""
    def f(p: int) -> int:
        for i, (util, value) in enumerate(shape):
            if p <= util:
                if i == 0:
                    return value
                prev_util, prev_value = shape[i - 1]
                return prev_value + _trunc_div((value - prev_value) * (p - prev_util), util - prev_util)
        return shape[-1][1]
    return f


def requested_to_capacity_ratio(specs: Sequence[ResourceSpec], points: Sequence[Obj]) -> Strategy:
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear([(int(p.get("utilization") or 0), int(p.get("score") or 0) * scale) for p in points])

    def resource_score(req: int, alloc: int) -> int:
        if alloc == 0 or req > alloc:
            return raw(MAX_UTILIZATION)
        return raw(req * MAX_UTILIZATION // alloc)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, alloc in zip(specs, requested, allocatable):
            if alloc == 0:
                continue
            value = resource_score(req, alloc)
            if value > 0:  # upstream leaves zero-scoring resources out of the weighted mean
                total += value * spec.weight
                weights += spec.weight
        return math.floor(total / weights + 0.5) if weights else 0  # Go's math.Round, values are >= 0
    return score


def balanced(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """(1 - standard deviation of the requested fractions) x 100; fractions above 1 count as 1."""
    fractions = [min(req / alloc, 1.0) for req, alloc in zip(requested, allocatable) if alloc != 0]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


# A strategy over many nodes for the default resources, cpu then memory: (nodes, pod's cpu, pod's
# memory, use_requested) -> each node's score, the ints `strategy` gives node by node.
CpuMemoryBatch = Callable[[Sequence[NodeInfo], int, int, bool], list[int]]


def least_allocated_cpu_memory(specs: Sequence[ResourceSpec]) -> CpuMemoryBatch | None:
    """`least_allocated` over many nodes when `specs` are cpu then memory (else None), inlined per node."""
    if len(specs) != 2 or specs[0].name != CPU or specs[1].name != MEMORY:
        return None
    cpu_weight, memory_weight = specs[0].weight, specs[1].weight

    def score_nodes(nodes: Sequence[NodeInfo], cpu: int, memory: int, use_requested: bool) -> list[int]:
        out = []
        for node in nodes:
            used, have = (node.requested if use_requested else node.non_zero_requested), node.allocatable
            alloc_cpu, alloc_memory = have.milli_cpu, have.memory
            total = weights = 0
            if alloc_cpu:
                req = used.milli_cpu + cpu
                total += (0 if req > alloc_cpu else (alloc_cpu - req) * MAX_NODE_SCORE // alloc_cpu) * cpu_weight
                weights += cpu_weight
            if alloc_memory:
                req = used.memory + memory
                total += (0 if req > alloc_memory else (alloc_memory - req) * MAX_NODE_SCORE // alloc_memory) * memory_weight
                weights += memory_weight
            out.append(total // weights if weights else 0)
        return out
    return score_nodes


def balanced_cpu_memory(nodes: Sequence[NodeInfo], cpu: int, memory: int, use_requested: bool) -> list[int]:
    """`balanced` over many nodes for cpu and memory: the same float steps, so the same ints."""
    out = []
    for node in nodes:
        used, have = (node.requested if use_requested else node.non_zero_requested), node.allocatable
        alloc_cpu, alloc_memory = have.milli_cpu, have.memory
        if alloc_cpu and alloc_memory:
            # min(x, 1.0) spelled out: a builtin call per node is a third of this loop.
            cpu_fraction = (used.milli_cpu + cpu) / alloc_cpu
            if cpu_fraction > 1.0:
                cpu_fraction = 1.0
            memory_fraction = (used.memory + memory) / alloc_memory
            if memory_fraction > 1.0:
                memory_fraction = 1.0
            out.append(int((1 - abs((cpu_fraction - memory_fraction) / 2)) * MAX_NODE_SCORE))
        else:
            out.append(int((1 - 0.0) * MAX_NODE_SCORE))  # one fraction or none: no deviation
    return out


@dataclass
class ResourceScorer:
    specs: list[ResourceSpec]
    strategy: Strategy
    use_requested: bool  # False: non-zero requests for cpu and memory (Fit); True: real requests (Balanced)
    cpu_memory: CpuMemoryBatch | None = None  # `strategy` over many nodes, for the default specs

    def __post_init__(self) -> None:
        # Names this scorer's answers in NodeInfo.memo: profiles share the snapshot and may
        # configure the same plugin differently, so the key is the scorer's, not the plugin's.
        self._memo_prefix = f"score#{next(_SCORERS)}"

    def pod_requests(self, pod: Obj) -> list[int]:
        requests: Resource = pod_requests(pod, non_zero=not self.use_requested)
        return [requests.get(spec.name) for spec in self.specs]

    def allocatable_and_requested(self, node: NodeInfo, name: str, pod_request: int,
                                  dra: ExtendedResourceDevices | None = None) -> tuple[int, int]:
        if pod_request == 0 and is_scalar(name):
            return 0, 0  # an extended resource the pod does not ask for takes no part
        requested = node.requested if self.use_requested else node.non_zero_requested
        if name == CPU:
            return node.allocatable.milli_cpu, requested.milli_cpu + pod_request
        if name == MEMORY:
            return node.allocatable.memory, requested.memory + pod_request
        if name == EPHEMERAL_STORAGE:
            return node.allocatable.ephemeral_storage, node.requested.ephemeral_storage + pod_request
        have = node.allocatable.scalar.get(name, 0)
        if have == 0 and dra is not None and node.node is not None:
            # Not a device-plugin resource here: count the DRA devices behind it instead.
            devices, in_use = dra.totals(node.node, name)
            if devices > 0:
                return devices, in_use + pod_request
        if name in node.allocatable.scalar:
            return have, node.requested.scalar.get(name, 0) + pod_request
        return 0, 0

    def scalar_requested(self, pod_requests: Sequence[int]) -> list[str]:
        """The configured extended resources the pod asks for (the ones DRA devices may back)."""
        return [spec.name for spec, req in zip(self.specs, pod_requests) if req and is_scalar(spec.name)]

    def score_nodes(self, nodes: Sequence[NodeInfo], pod_requests: Sequence[int],
                    dra: ExtendedResourceDevices | None = None) -> list[int]:
        """`score` for each of `nodes`; the default cpu+memory case without a call per node and resource."""
        specs = self.specs
        if len(specs) != 2 or specs[0].name != CPU or specs[1].name != MEMORY:
            return [self.score(node, pod_requests, dra) for node in nodes]
        cpu, memory = pod_requests[0], pod_requests[1]
        strategy, use_requested = self.strategy, self.use_requested
        if self.cpu_memory is not None:
            # Remembered per NodeInfo for these requests: only nodes that changed since an
            # earlier pod with the same requests looked at them are scored again.
            key = sys.intern(f"{self._memo_prefix} {cpu} {memory}")
            out = [node.memo.get(key) for node in nodes]
            if None not in out:
                return out  # type: ignore[return-value]
            missing = [i for i, score in enumerate(out) if score is None]
            for i, score in zip(missing, self.cpu_memory([nodes[i] for i in missing], cpu, memory, use_requested)):
                out[i] = nodes[i].memo[key] = score
            return out  # type: ignore[return-value]
        out = []
        for node in nodes:
            used, have = (node.requested if use_requested else node.non_zero_requested), node.allocatable
            alloc_cpu, alloc_memory = have.milli_cpu, have.memory
            out.append(strategy((used.milli_cpu + cpu if alloc_cpu else 0, used.memory + memory if alloc_memory else 0),
                                (alloc_cpu, alloc_memory)))
        return out

    def score(self, node: NodeInfo, pod_requests: Sequence[int], dra: ExtendedResourceDevices | None = None) -> int:
        requested, allocatable = [0] * len(self.specs), [0] * len(self.specs)
        used = node.requested if self.use_requested else node.non_zero_requested
        for i, spec in enumerate(self.specs):
            # cpu and memory inline: this runs per pod and node, twice (Fit and BalancedAllocation).
            name = spec.name
            if name == CPU:
                alloc, req = node.allocatable.milli_cpu, used.milli_cpu + pod_requests[i]
            elif name == MEMORY:
                alloc, req = node.allocatable.memory, used.memory + pod_requests[i]
            else:
                alloc, req = self.allocatable_and_requested(node, name, pod_requests[i], dra)
            if alloc:
                allocatable[i], requested[i] = alloc, req
        return self.strategy(requested, allocatable)
