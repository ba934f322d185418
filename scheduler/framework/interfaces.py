"""One protocol per extension point, the results they exchange, and the `Handle` plugins get.

A plugin is a class with a `name` and the methods of the points it implements; the framework
(`scheduler/runtime.py`) finds them with `isinstance(plugin, FilterPlugin)` and friends. Every
method answers `Status | None` (None: success). CPU-only points are plain functions (Filter runs
on thousands of nodes per pod); points that talk to the API server (PostFilter, PreBind, Bind)
are coroutines. Factories have the shape `factory(args, handle, features) -> plugin`
(`scheduler/registry.py`); `args` is the profile's pluginConfig entry with defaults applied.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from client import cache
from client.resources import Resource
from client.rest import RestClient
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.node_info import NodeInfo, PodInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.status import Status

Obj = dict[str, Any]
MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


@dataclass
class QueuedPodInfo:
    """A pod as the queue holds it: the attempts so far and which plugins turned it away."""

    pod_info: PodInfo
    timestamp: float  # when it (re)entered the queue
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated_by: str = ""  # the PreEnqueue plugin holding it, "" when it is not gated

    @property
    def pod(self) -> Obj:
        return self.pod_info.pod


@dataclass
class PreFilterResult:
    """Nodes a PreFilter already knows are the only candidates (None: all of them)."""

    node_names: set[str] | None = None


@dataclass
class NodeScore:
    name: str
    score: int


@dataclass
class NodeToStatus:
    """Why each node was rejected; `absent` answers for nodes not in the map (PreFilter's verdict)."""

    statuses: dict[str, Status] = field(default_factory=dict)
    absent: Status | None = None

    def get(self, node: str) -> Status | None:
        return self.statuses.get(node, self.absent)


@dataclass
class PostFilterResult:
    nominated_node_name: str = ""


class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    name: str

    def pre_enqueue(self, pod: Obj) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Protocol):
    name: str

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    def events_to_register(self) -> list[ClusterEventWithHint]: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    name: str

    def pre_filter(self, state: CycleState, pod: Obj,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """PreFilter state kept right while preemption adds or removes pods on a node copy."""

    def add_pod(self, state: CycleState, pod: Obj, to_add: PodInfo, node: NodeInfo) -> Status | None: ...

    def remove_pod(self, state: CycleState, pod: Obj, to_remove: PodInfo, node: NodeInfo) -> Status | None: ...


@runtime_checkable
class FilterPlugin(Protocol):
    name: str

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None: ...

    # Optional, for speed: `filter_nodes(state, pod, nodes) -> dict[int, Status]`, the statuses
    # `filter` answers node by node that are not success, keyed by position in `nodes` (an empty
    # dict: every node passes). It raises where `filter` would crash; the framework then asks
    # `filter` node by node, so a crash is still reported against its node.


@runtime_checkable
class PostFilterPlugin(Protocol):
    name: str

    async def post_filter(self, state: CycleState, pod: Obj,
                          statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    name: str

    def pre_score(self, state: CycleState, pod: Obj, nodes: Sequence[NodeInfo]) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def score(self, state: CycleState, pod: Obj, node: NodeInfo) -> tuple[int, Status | None]: ...

    # Optional, for speed: `score_nodes(state, pod, nodes) -> list[int]`, the same scores as
    # `score` node by node in one call (it raises instead of answering an error status).


@runtime_checkable
class ScoreExtensions(Protocol):
    """Scales a plugin's raw scores into [MIN_NODE_SCORE, MAX_NODE_SCORE] in place."""

    def normalize_score(self, state: CycleState, pod: Obj, scores: list[NodeScore]) -> Status | None: ...

    # Optional, for speed: `normalize_values(state, pod, values: list[int]) -> list[int]`, the
    # same scaling over plain ints by position, without a NodeScore per node (it raises where
    # `normalize_score` would answer an error status).


@runtime_checkable
class ReservePlugin(Protocol):
    name: str

    def reserve(self, state: CycleState, pod: Obj, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Obj, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Protocol):
    name: str

    def permit(self, state: CycleState, pod: Obj, node_name: str) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Protocol):
    """A class attribute `allow_parallel_pre_bind = True` is 1.36's PreBindPreFlightResult.AllowParallel:
    adjacent plugins that set it have their PreBind run at the same time (absent: False)."""

    name: str

    def pre_bind_pre_flight(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        """Skip when PreBind has nothing to do for this pod (1.36's PreBindPreFlight)."""
        ...

    async def pre_bind(self, state: CycleState, pod: Obj, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Protocol):
    name: str

    async def bind(self, state: CycleState, pod: Obj, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Protocol):
    name: str

    def post_bind(self, state: CycleState, pod: Obj, node_name: str) -> None: ...


class EventRecorder(Protocol):
    def event(self, regarding: Obj, type_: str, reason: str, message: str, action: str = "") -> None:
        """Record an events.k8s.io Event about `regarding` (sent in the background)."""
        ...


class WaitingPod(Protocol):
    pod: Obj

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class Handle(Protocol):
    """What the framework of one profile offers its plugins (upstream's framework.Handle)."""

    client: RestClient
    events: EventRecorder
    profile_name: str  # the schedulerName this profile serves

    @property
    def snapshot(self) -> Snapshot: ...

    def store(self, resource: Resource) -> cache.Store:
        """The informer cache of `resource` (pods, nodes, DRA kinds, PDBs, PVCs…), already synced."""
        ...

    def waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_waiting_pods(self) -> list[WaitingPod]: ...

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...

    def activate(self, pods: list[Obj]) -> None:
        """Move these pods, if they wait in backoff or unschedulable, to active (upstream's Activate)."""
        ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        """Every Filter plugin on `node`, as if the higher-priority nominated pods were there too."""
        ...

    def filter_runner(self, state: CycleState, pod: Obj,
                      nominated: bool = False) -> Callable[[NodeInfo], Status | None]:
        """`run_filter_plugins` (with `nominated`: `run_filter_plugins_with_nominated_pods`) for one
        pod and state over many nodes, the skipped plugins left out once (preemption's dry run)."""
        ...

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Obj, to_add: PodInfo,
                                         node: NodeInfo) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Obj, to_remove: PodInfo,
                                            node: NodeInfo) -> Status | None: ...


Features = Mapping[str, bool]


class CycleObserver(Protocol):
    """Sees every plugin answer of an attempt (`--record-results`, `scheduler/record_results.py`).

    `point` is the extension point's upstream name ("PreFilter", "Filter", "PostFilter",
    "PreScore", "Score", "FinalScore", "Reserve", "Permit", "PreBind", "Bind"); `node` is "" for
    points not tied to one node; `value` is the Status (None: success), or the score as an int
    for Score (raw) and FinalScore (normalized and weighted); PreFilter gives `(PreFilterResult |
    None, Status | None)`, PostFilter `(PostFilterResult | None, Status | None)` and Permit
    `(Status | None, timeout seconds)`. The PodGroup cycle adds "PlacementGenerate" (the plugin's
    placement names, or its Status), "PlacementScore" and "PlacementFinalScore" (`node` is then
    the placement's name).
    """

    def observe(self, pod: Obj, point: str, plugin: str, node: str, value: Any) -> None: ...

    def attempt_done(self, pod: Obj, selected_node: str) -> None:
        """The attempt ended ("" when no node was chosen); write what was seen, in the background."""
        ...
