"""`NodeInfo` and `PodInfo`: one node and the pods on it, as the scheduler's snapshot holds them.

A NodeInfo sums what its pods request (`requested`, and `non_zero_requested` for scoring), which
host ports they hold, which of them have (anti-)affinity terms, and how often each image is
present in the cluster. The cache (`scheduler/cache.py`) keeps one per node, adds assumed pods
before they are bound, and clones the changed ones into each cycle's snapshot; plugins read them
and never write. Preemption clones a NodeInfo and removes victims from the copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler.framework.resources import Resource, pod_requests

Obj = dict[str, Any]


def pod_key(pod: Obj) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _host_ports(pod: Obj) -> list[tuple[str, str, int]]:
    spec = pod.get("spec") or {}
    ports = []
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                ports.append((port.get("hostIP") or "0.0.0.0", port.get("protocol") or "TCP", int(port["hostPort"])))
    return ports


# The spec fields a PodInfo is derived from. A pod's informer copies, its assumed copy (spec with
# nodeName set) and its re-queued versions all share them, and one pod is wrapped half a dozen
# times between its arrival and its binding: the derived values are kept per uid and reused
# while those fields are unchanged (readers never mutate them, so sharing them is safe).
_DERIVED_FROM = ("containers", "initContainers", "resources", "overhead", "affinity")
_DERIVED_LIMIT = 65536  # uids remembered; past it the memo starts over
_derived: dict[str, tuple[tuple[Any, ...], tuple[Resource, Resource, list[tuple[str, str, int]], bool, bool]]] = {}


@dataclass
class PodInfo:
    """A pod with what the scheduler derives from it once, not on every Filter call."""

    pod: Obj
    requests: Resource
    non_zero_requests: Resource
    host_ports: list[tuple[str, str, int]]
    has_affinity: bool
    has_required_anti_affinity: bool
    # Read by the queue's sort on every heap move: derived once (a pod's priority never changes).
    priority: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.priority = int((self.pod.get("spec") or {}).get("priority") or 0)

    @classmethod
    def of(cls, pod: Obj) -> "PodInfo":
        spec = pod.get("spec") or {}
        inputs = tuple(spec.get(f) for f in _DERIVED_FROM)
        uid = (pod.get("metadata") or {}).get("uid")
        known = _derived.get(uid) if uid else None
        if known is not None and all(a is b or a == b for a, b in zip(known[0], inputs)):
            derived = known[1]
        else:
            affinity = spec.get("affinity") or {}
            anti = affinity.get("podAntiAffinity") or {}
            derived = (pod_requests(pod), pod_requests(pod, non_zero=True), _host_ports(pod),
                       bool(affinity.get("podAffinity") or anti),
                       bool(anti.get("requiredDuringSchedulingIgnoredDuringExecution")))
            if uid:
                if len(_derived) >= _DERIVED_LIMIT:
                    _derived.clear()
                _derived[uid] = (inputs, derived)
        requests, non_zero, ports, has_affinity, has_anti = derived
        return cls(pod=pod, requests=requests, non_zero_requests=non_zero, host_ports=ports,
                   has_affinity=has_affinity, has_required_anti_affinity=has_anti)

    @property
    def key(self) -> str:
        return pod_key(self.pod)

    @property
    def uid(self) -> str:
        return (self.pod.get("metadata") or {}).get("uid", "")


@dataclass
class ImageState:
    size: int  # bytes, as the node reports it
    num_nodes: int  # how many nodes have it, for ImageLocality's spread factor


@dataclass(slots=True)  # slots: hundreds of NodeInfos are read per cycle, attributes inline are fewer cache misses
class NodeInfo:
    node: Obj | None = None
    pods: list[PodInfo] = field(default_factory=list)
    pods_with_affinity: list[PodInfo] = field(default_factory=list)
    pods_with_required_anti_affinity: list[PodInfo] = field(default_factory=list)
    requested: Resource = field(default_factory=Resource)
    non_zero_requested: Resource = field(default_factory=Resource)
    allocatable: Resource = field(default_factory=Resource)
    used_ports: dict[tuple[str, str, int], int] = field(default_factory=dict)
    image_states: dict[str, ImageState] = field(default_factory=dict)
    generation: int = 0  # bumped by every change, so the snapshot copies only changed nodes
    # Read per node in every Filter and Score loop (hundreds of nodes per pod), so derived once
    # from the node object by `set_node` (or at construction) instead of walking its dicts each
    # time. A NodeInfo whose node is dropped (`node = None`, pods still on it) keeps its name.
    name: str = field(default="", init=False, repr=False, compare=False)
    taints: list[Obj] = field(default_factory=list, init=False, repr=False, compare=False)
    unschedulable: bool = field(default=False, init=False, repr=False, compare=False)
    # What the plugins' batch paths (`filter_nodes`, `score_nodes`) worked out for this NodeInfo,
    # by a key naming the plugin and the pod's inputs (an interned str: its hash is kept). The
    # snapshot's copies never change, and pods of one workload ask the same, so the next pod
    # reads the answer instead of working it out again. add_pod, remove_pod and set_node clear
    # it; clone starts empty.
    memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.node is not None:
            self._derive(self.node)

    def _derive(self, node: Obj) -> None:
        self.name = (node.get("metadata") or {}).get("name", "")
        spec = node.get("spec") or {}
        self.taints = spec.get("taints") or []
        self.unschedulable = bool(spec.get("unschedulable"))

    @property
    def labels(self) -> dict[str, str]:
        return ((self.node or {}).get("metadata") or {}).get("labels") or {}

    def set_node(self, node: Obj) -> None:
        self.memo.clear()
        self.node = node
        self._derive(node)
        self.allocatable = Resource.from_list((node.get("status") or {}).get("allocatable"))

    def add_pod(self, info: PodInfo) -> None:
        self.memo.clear()
        self.pods.append(info)
        if info.has_affinity:
            self.pods_with_affinity.append(info)
        if info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(info)
        self.requested.add(info.requests)
        self.non_zero_requested.add(info.non_zero_requests)
        for port in info.host_ports:
            self.used_ports[port] = self.used_ports.get(port, 0) + 1

    def remove_pod(self, pod: Obj) -> bool:
        """Drop the pod with this pod's uid (or key); False when it is not on this node."""
        # Preemption removes the very PodInfos it read off this node, several per node and
        # hundreds of nodes per attempt: find those by identity before comparing uids.
        for i, info in enumerate(self.pods):
            if info.pod is pod:
                break
        else:
            uid = (pod.get("metadata") or {}).get("uid", "")
            key = pod_key(pod)
            for i, info in enumerate(self.pods):
                if (uid and info.uid == uid) or (not uid and info.key == key):
                    break
            else:
                return False
        del self.pods[i]
        self.memo.clear()
        for group in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            if info in group:
                group.remove(info)
        self.requested.add(info.requests, -1)
        self.non_zero_requested.add(info.non_zero_requests, -1)
        for port in info.host_ports:
            left = self.used_ports.get(port, 0) - 1
            if left > 0:
                self.used_ports[port] = left
            else:
                self.used_ports.pop(port, None)
        return True

    def clone(self) -> "NodeInfo":
        # Filled in field by field, past __init__ and its default factories: preemption clones
        # hundreds of NodeInfos per attempt. The derived facts are copied, not derived again (the
        # node object is the same), and the memo starts empty.
        copy = object.__new__(NodeInfo)
        copy.node, copy.name, copy.taints, copy.unschedulable = self.node, self.name, self.taints, self.unschedulable
        copy.pods = list(self.pods)
        copy.pods_with_affinity = list(self.pods_with_affinity)
        copy.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        copy.requested = self.requested.clone()
        copy.non_zero_requested = self.non_zero_requested.clone()
        copy.allocatable = self.allocatable.clone()
        copy.used_ports = dict(self.used_ports)
        copy.image_states = self.image_states
        copy.generation = self.generation
        copy.memo = {}
        return copy
