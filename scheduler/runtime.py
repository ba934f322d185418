"""`Framework`: the plugins of one profile, run point by point with upstream's semantics.

Built once per `config.types.Profile`: each plugin is made once through
`registry.REGISTRY[name](args, handle, features)` and listed, per extension point, in the
profile's order (a plugin listed at a point it does not implement is left out there, so a
MultiPoint-style list works). The framework is also the plugins' `Handle` (snapshot, informer
stores, waiting and nominated pods). The `run_*` methods follow upstream's framework.go: PreFilter
results intersect and Skip is recorded in the CycleState; an UnschedulableAndUnresolvable PreFilter
stops the others; Filter stops at the first rejection; Score normalizes, then weights; Reserve
runs in order and Unreserve in reverse; Permit may Wait (a `WaitingPod` with per-plugin timeouts);
PreBind runs after its pre-flight (Skip: not called), adjacent plugins that allow it in parallel;
Bind stops at the first plugin that does not Skip. A Score plugin may also offer
`score_nodes(state, pod, nodes) -> list[int]`, its Score over many nodes in one call (it raises
where Score would answer an error); the framework prefers it, and likewise `normalize_values`
for NormalizeScore and a Filter plugin's `filter_nodes` (`filter_nodes_runner`, the cycle's
batch Filter with node-by-node answers). A plugin that raises answers Status
ERROR with its name. Every answer goes to the optional `CycleObserver`. Called by `cycle.py` and
`binding.py`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from client import cache as client_cache
from client.resources import Resource as ApiResource
from scheduler.config.types import Profile
from scheduler.framework import pod_priority
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource
from scheduler.framework.interfaces import (MAX_NODE_SCORE, MIN_NODE_SCORE, BindPlugin, CycleObserver,
                                            EnqueueExtensions, EventRecorder, FilterPlugin, NodeScore,
                                            NodeToStatus, PermitPlugin, PostBindPlugin, PostFilterPlugin,
                                            PostFilterResult, PreBindPlugin, PreEnqueuePlugin,
                                            PreFilterExtensions, PreFilterPlugin, PreFilterResult,
                                            PreScorePlugin, QueueSortPlugin, ReservePlugin,
                                            ScoreExtensions, ScorePlugin)
from scheduler.framework.node_info import NodeInfo, PodInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.status import Code, Status

log = logging.getLogger("haru.scheduler.runtime")
Obj = dict[str, Any]
MAX_PERMIT_TIMEOUT = 15 * 60.0  # upstream's maxTimeout for a Permit Wait
_NAME = operator.attrgetter("name")

_POINTS: dict[str, type] = {
    "preEnqueue": PreEnqueuePlugin, "queueSort": QueueSortPlugin, "preFilter": PreFilterPlugin,
    "filter": FilterPlugin, "postFilter": PostFilterPlugin, "preScore": PreScorePlugin, "score": ScorePlugin,
    "reserve": ReservePlugin, "permit": PermitPlugin, "preBind": PreBindPlugin, "bind": BindPlugin,
    "postBind": PostBindPlugin,
}
# A plugin without EnqueueExtensions is woken by every event, as upstream's UnrollWildCardResource.
_EVERY_EVENT = [ClusterEventWithHint(ClusterEvent(Resource.WILDCARD, ActionType.ALL))]


def go_duration(seconds: float) -> str:
    """Go's time.Duration.String() for whole and fractional seconds ("10s", "1m30s", "500ms")."""
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:g}ms"
    minutes, rest = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    text = f"{rest:g}s"
    if minutes or hours:
        text = f"{minutes}m" + text
    if hours:
        text = f"{hours}h" + text
    return text


def _error(message: str, plugin: str, cause: BaseException | None = None) -> Status:
    status = Status.as_error(message)
    if cause is not None:
        status.error = cause
    return status.with_plugin(plugin)


def _crashed(plugin: str, exc: BaseException) -> Status:
    log.exception("plugin %s raised", plugin, exc_info=exc)
    status = Status.as_error(exc)
    return status.with_plugin(plugin)


def _ok(status: Status | None) -> bool:
    return status is None or status.code is Code.SUCCESS


class WaitingPod:
    """A pod some Permit plugin asked to wait for; `allow`/`reject` by plugins, or a timeout, end it."""

    def __init__(self, pod: Obj, waits: Mapping[str, float]) -> None:
        self.pod = pod
        loop = asyncio.get_running_loop()
        self.result: asyncio.Future[Status | None] = loop.create_future()
        self._pending = set(waits)
        self._timers = {plugin: loop.call_later(timeout, self.reject, plugin, f"rejected due to timeout after waiting "
                                                                              f"{go_duration(timeout)} at plugin {plugin}")
                        for plugin, timeout in waits.items()}

    @property
    def uid(self) -> str:
        return (self.pod.get("metadata") or {}).get("uid", "")

    def pending_plugins(self) -> list[str]:
        return sorted(self._pending)

    def allow(self, plugin: str) -> None:
        self._pending.discard(plugin)
        timer = self._timers.pop(plugin, None)
        if timer is not None:
            timer.cancel()  # as upstream's Allow: that plugin's timeout no longer applies
        if not self._pending:
            self._finish(None)

    def reject(self, plugin: str, message: str) -> None:
        self._finish(Status.unschedulable(message).with_plugin(plugin))

    def _finish(self, status: Status | None) -> None:
        for timer in self._timers.values():
            timer.cancel()
        if not self.result.done():
            self.result.set_result(status)


@dataclass
class Diagnosis:
    """Why an attempt found no node: per-node statuses and the plugins that rejected the pod."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status | None) -> None:
        if status is None or not status.plugin or not status.rejected:
            return
        if status.code is Code.PENDING:
            self.pending_plugins.add(status.plugin)
        else:
            self.unschedulable_plugins.add(status.plugin)


class Framework:
    """One profile's plugins, and the `Handle` they were built with."""

    def __init__(self, profile: Profile, *, registry: Mapping[str, Callable[..., Any]] | None = None,
                 features: Mapping[str, bool] | None = None, client: Any = None,
                 events: EventRecorder | None = None, snapshot: Snapshot | None = None,
                 stores: Callable[[ApiResource], client_cache.Store] | None = None,
                 waiting_pods: dict[str, WaitingPod] | None = None, nominator: Any = None,
                 observer: CycleObserver | None = None, percentage_of_nodes_to_score: int = 0,
                 parallelism: int = 16, activator: Callable[[list[Obj]], None] | None = None) -> None:
        if registry is None:
            from scheduler.registry import REGISTRY as registry  # noqa: N811 - the one registry
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.client = client
        self.events = events if events is not None else _NullRecorder()
        self.features = dict(features or {})
        self._snapshot = snapshot if snapshot is not None else Snapshot()
        self._stores = stores
        self._own_stores: dict[ApiResource, client_cache.Store] = {}
        self.waiting_pods = waiting_pods if waiting_pods is not None else {}
        self.nominator = nominator
        self.observer = observer
        self.parallelism = parallelism
        self._activator = activator
        # Nominated pods count by their PodGroup's priority under WorkloadAwarePreemption.
        self.priorities = pod_priority.for_plugin(self, self.features)
        pct = profile.percentage_of_nodes_to_score
        self.percentage_of_nodes_to_score = pct if pct is not None else percentage_of_nodes_to_score
        self.plugins: dict[str, Any] = {}
        for name in profile.names():
            factory = registry.get(name)
            if factory is None:
                raise ValueError(f'plugin "{name}" does not exist')
            self.plugins[name] = factory(dict(profile.plugin_args.get(name, {})), self, self.features)
        self.weights: dict[str, int] = {}
        by_point: dict[str, list[Any]] = {}
        for point, protocol in _POINTS.items():
            chosen = []
            for ref in profile.plugins(point):
                plugin = self.plugins[ref.name]
                if isinstance(plugin, protocol) and plugin not in chosen:
                    chosen.append(plugin)
                    if point == "score":
                        self.weights[plugin.name] = ref.weight or 1
            by_point[point] = chosen
        self.pre_enqueue_plugins = by_point["preEnqueue"]
        self.queue_sort_plugins = by_point["queueSort"]
        self.pre_filter_plugins = by_point["preFilter"]
        self.filter_plugins = by_point["filter"]
        self.post_filter_plugins = by_point["postFilter"]
        self.pre_score_plugins = by_point["preScore"]
        self.score_plugins = by_point["score"]
        self.reserve_plugins = by_point["reserve"]
        self.permit_plugins = by_point["permit"]
        self.pre_bind_plugins = by_point["preBind"]
        self.bind_plugins = by_point["bind"]
        self.post_bind_plugins = by_point["postBind"]
        # Decided once, not per node: which score plugins normalize, and which score many nodes in
        # one call (`score_nodes`, the same ints `score` gives node by node, minus a call per node).
        self._normalizers = {p.name for p in self.score_plugins if isinstance(p, ScoreExtensions)}
        # Preemption asks for AddPod/RemovePod per victim and node: a Protocol isinstance each time is slow.
        self._pre_filter_extensions = [p for p in self.pre_filter_plugins if isinstance(p, PreFilterExtensions)]
        self._batch_scorers: dict[str, Callable[[CycleState, Obj, Sequence[NodeInfo]], list[int]]] = {
            p.name: p.score_nodes for p in self.score_plugins if callable(getattr(p, "score_nodes", None))}
        self._batch_normalizers: dict[str, Callable[[CycleState, Obj, list[int]], list[int]]] = {
            p.name: p.normalize_values for p in self.score_plugins
            if p.name in self._normalizers and callable(getattr(p, "normalize_values", None))}
        self._events: dict[str, list[ClusterEventWithHint]] = {}
        for name, plugin in self.plugins.items():
            if isinstance(plugin, EnqueueExtensions):
                self._events[name] = list(plugin.events_to_register() or [])
            else:
                self._events[name] = _EVERY_EVENT

    # -- Handle --------------------------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def store(self, resource: ApiResource) -> client_cache.Store:
        if self._stores is not None:
            return self._stores(resource)
        return self._own_stores.setdefault(resource, client_cache.Store())

    def waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_waiting_pods(self) -> list[WaitingPod]:
        return list(self.waiting_pods.values())

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.nominator.for_node(node_name) if self.nominator is not None else []

    def activate(self, pods: list[Obj]) -> None:
        """Move these pods from backoff or the unschedulable pool to active (upstream's Activate)."""
        if self._activator is not None:
            self._activator(list(pods))

    def events_for(self, plugin: str) -> list[ClusterEventWithHint]:
        return self._events.get(plugin, [])

    def registered_events(self) -> list[ClusterEvent]:
        return [e.event for events in self._events.values() for e in events]

    def less(self, a: Any, b: Any) -> bool:
        if self.queue_sort_plugins:
            return bool(self.queue_sort_plugins[0].less(a, b))
        return False

    # -- PreEnqueue ----------------------------------------------------------------------------

    def run_pre_enqueue_plugins(self, pod: Obj) -> Status | None:
        for plugin in self.pre_enqueue_plugins:
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as exc:  # noqa: BLE001
                status = _crashed(plugin.name, exc)
            if not _ok(status):
                assert status is not None
                return status.with_plugin(plugin.name)
        return None

    # -- PreFilter -----------------------------------------------------------------------------

    def run_pre_filter_plugins(self, state: CycleState, pod: Obj,
                               nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """(merged result, status, plugins that narrowed or rejected); result None means all nodes."""
        result: set[str] | None = None
        returned: Status | None = None
        rejecting: set[str] = set()
        narrowing: list[str] = []
        skipped: set[str] = set()
        for plugin in self.pre_filter_plugins:
            try:
                res, status = plugin.pre_filter(state, pod, nodes)
            except Exception as exc:  # noqa: BLE001
                res, status = None, _crashed(plugin.name, exc)
            self._observe(pod, "PreFilter", plugin.name, "", (res, status))
            if status is not None and status.code is Code.SKIP:
                skipped.add(plugin.name)
                continue
            if not _ok(status):
                assert status is not None
                status.with_plugin(plugin.name)
                if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    state.skip_filter_plugins = skipped
                    return None, status, {plugin.name}
                if status.rejected:
                    # Preemption may still help: run the rest so their state exists for it.
                    returned = returned or status
                    rejecting.add(plugin.name)
                    continue
                state.skip_filter_plugins = skipped
                return None, _error(f'running PreFilter plugin "{plugin.name}": {status.message}', plugin.name,
                                    status.error), set()
            if res is not None and res.node_names is not None:
                narrowing.append(plugin.name)
                result = set(res.node_names) if result is None else result & set(res.node_names)
                if not result:
                    state.skip_filter_plugins = skipped
                    if len(narrowing) == 1:
                        msg = f"node(s) didn't satisfy plugin {narrowing[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"
                    return PreFilterResult(set()), Status.unresolvable(msg), set(narrowing)
        state.skip_filter_plugins = skipped
        merged = PreFilterResult(result) if result is not None else None
        return merged, returned, rejecting | (set(narrowing) if result is not None else set())

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Obj, to_add: PodInfo,
                                         node: NodeInfo) -> Status | None:
        return self._extension(state, pod, to_add, node, "add_pod")

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Obj, to_remove: PodInfo,
                                            node: NodeInfo) -> Status | None:
        return self._extension(state, pod, to_remove, node, "remove_pod")

    def _extension(self, state: CycleState, pod: Obj, other: PodInfo, node: NodeInfo, method: str) -> Status | None:
        for plugin in self._pre_filter_extensions:
            if plugin.name in state.skip_filter_plugins:
                continue
            try:
                status = getattr(plugin, method)(state, pod, other, node)
            except Exception as exc:  # noqa: BLE001
                status = _crashed(plugin.name, exc)
            if not _ok(status):
                assert status is not None
                what = "AddPod" if method == "add_pod" else "RemovePod"
                return _error(f'running {what} on PreFilter plugin "{plugin.name}": {status.message}',
                              plugin.name, status.error)
        return None

    # -- Filter --------------------------------------------------------------------------------

    def run_filter_plugins(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        skip = state.skip_filter_plugins
        for plugin in self.filter_plugins:
            if plugin.name in skip:
                continue
            try:
                status = plugin.filter(state, pod, node)
            except Exception as exc:  # noqa: BLE001
                status = _crashed(plugin.name, exc)
            if self.observer is not None:
                self._observe(pod, "Filter", plugin.name, node.name, status)
            if status is not None and status.code is not Code.SUCCESS:
                if not status.rejected:
                    return _error(f'running "{plugin.name}" filter plugin: {status.message}', plugin.name,
                                  status.error)
                status.plugin = plugin.name
                return status
        return None

    def filter_runner(self, state: CycleState, pod: Obj,
                      nominated: bool = False) -> Callable[[NodeInfo], Status | None]:
        """`run_filter_plugins` for one pod and many nodes: the plugins that skipped are left out once,
        not looked up per node (the cycle filters hundreds of nodes per pod). `nominated`: as
        `run_filter_plugins_with_nominated_pods`, which only nodes with nominated pods need."""
        if nominated and self.nominator is not None:
            plain = self.filter_runner(state, pod)
            nominator = self.nominator

            def run_nominated(node: NodeInfo) -> Status | None:
                if not nominator.for_node(node.name):
                    return plain(node)  # what the two passes come to with nothing to add
                return self.run_filter_plugins_with_nominated_pods(state, pod, node)
            return run_nominated
        if self.observer is not None:
            return lambda node: self.run_filter_plugins(state, pod, node)
        skip = state.skip_filter_plugins
        active = [(plugin.name, plugin.filter) for plugin in self.filter_plugins if plugin.name not in skip]

        def run(node: NodeInfo) -> Status | None:
            for name, filter_ in active:
                try:
                    status = filter_(state, pod, node)
                except Exception as exc:  # noqa: BLE001
                    status = _crashed(name, exc)
                if status is not None and status.code is not Code.SUCCESS:
                    if not status.rejected:
                        return _error(f'running "{name}" filter plugin: {status.message}', name, status.error)
                    status.plugin = name
                    return status
            return None
        return run

    def filter_nodes_runner(self, state: CycleState, pod: Obj,
                            nominated: bool = False) -> Callable[[Sequence[NodeInfo]], list[Status | None]] | None:
        """Filter for one pod over a batch of nodes: each node's first non-success status, or None.

        The same answers as `run_filter_plugins` node by node, computed plugin by plugin: each
        plugin sees only the nodes every earlier plugin passed, so a node's status is still that
        of the first plugin to turn it down. A plugin with `filter_nodes` answers for the whole
        batch in one call (the cycle filters hundreds of nodes per pod, and a Python call per
        node and plugin is most of a cycle's cost); the others are called node by node. None
        when an observer records every call: then the cycle goes node by node. `nominated`: a
        node some pod is nominated to goes through `run_filter_plugins_with_nominated_pods`
        on its own, the rest of the batch as usual (what `filter_runner` does node by node).
        """
        if self.observer is not None:
            return None
        skip = state.skip_filter_plugins
        active = [(plugin.name, plugin.filter, getattr(plugin, "filter_nodes", None))
                  for plugin in self.filter_plugins if plugin.name not in skip]

        def one_by_one(name: str, filter_: Callable[..., Status | None],
                       nodes: Sequence[NodeInfo]) -> dict[int, Status]:
            found: dict[int, Status] = {}
            for i, node in enumerate(nodes):
                try:
                    status = filter_(state, pod, node)
                except Exception as exc:  # noqa: BLE001
                    status = _crashed(name, exc)
                if status is not None and status.code is not Code.SUCCESS:
                    found[i] = status
            return found

        def run(nodes: Sequence[NodeInfo]) -> list[Status | None]:
            out: list[Status | None] = [None] * len(nodes)
            passing = list(range(len(nodes)))  # positions in `nodes` no plugin has turned down yet
            for name, filter_, batch in active:
                if not passing:
                    break
                sub = nodes if len(passing) == len(nodes) else [nodes[i] for i in passing]
                found: dict[int, Status] | None = None
                if batch is not None:
                    try:
                        found = batch(state, pod, sub)
                    except Exception:  # noqa: BLE001 - asked again node by node, which reports the node
                        found = None
                if found is None:
                    found = one_by_one(name, filter_, sub)
                if not found:
                    continue
                kept = []
                for j, i in enumerate(passing):
                    status = found.get(j)
                    if status is None or status.code is Code.SUCCESS:
                        kept.append(i)
                    elif not status.rejected:
                        out[i] = _error(f'running "{name}" filter plugin: {status.message}', name, status.error)
                    else:
                        status.plugin = name
                        out[i] = status
                passing = kept
            return out

        nominator = self.nominator if nominated else None
        if nominator is None:
            return run
        if not callable(getattr(nominator, "node_names", None)):
            return None  # a nominator that cannot list its nodes: node by node

        def run_nominated(nodes: Sequence[NodeInfo]) -> list[Status | None]:
            names = nominator.node_names()
            alone = {i for i, node in enumerate(nodes) if node.name in names} if names else set()
            if not alone:
                return run(nodes)
            rest = [i for i in range(len(nodes)) if i not in alone]
            out: list[Status | None] = [None] * len(nodes)
            for i, status in zip(rest, run([nodes[i] for i in rest])):
                out[i] = status
            for i in alone:
                status = self.run_filter_plugins_with_nominated_pods(state, pod, nodes[i])
                out[i] = None if _ok(status) else status
            return out
        return run_nominated

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        """Filter as if the nominated pods of equal or higher priority were already on the node.

        Upstream's two passes: first with them added (they may take what this pod needs), then,
        only if that passed and some were added, without them (this pod's own inter-pod rules must
        not depend on pods that may never arrive).
        """
        status: Status | None = None
        added = False
        for attempt in (0, 1):
            state_to_use, node_to_use = state, node
            if attempt == 0:
                added, state_to_use, node_to_use, err = self._add_nominated_pods(state, pod, node)
                if err is not None:
                    return err
            elif not added or not _ok(status):
                break
            status = self.run_filter_plugins(state_to_use, pod, node_to_use)
            if not _ok(status) and not status.rejected:  # type: ignore[union-attr]
                return status
        return status

    def _add_nominated_pods(self, state: CycleState, pod: Obj,
                            node: NodeInfo) -> tuple[bool, CycleState, NodeInfo, Status | None]:
        if self.nominator is None:
            return False, state, node, None
        nominated = self.nominator.for_node(node.name)
        if not nominated:
            return False, state, node, None
        priority = self.priorities(pod)
        uid = (pod.get("metadata") or {}).get("uid", "")
        node_out: NodeInfo | None = None
        state_out: CycleState | None = None
        for info in nominated:
            if self.priorities(info.pod) < priority or info.uid == uid:
                continue
            if node_out is None:
                node_out, state_out = node.clone(), state.clone()
            assert state_out is not None
            node_out.add_pod(info)
            status = self.run_pre_filter_extension_add_pod(state_out, pod, info, node_out)
            if not _ok(status):
                return False, state, node, status
        if node_out is None:
            return False, state, node, None
        assert state_out is not None
        return True, state_out, node_out, None

    # -- PostFilter ----------------------------------------------------------------------------

    async def run_post_filter_plugins(self, state: CycleState, pod: Obj,
                                      statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        reasons: list[str] = []
        result: PostFilterResult | None = None  # the last one that nominated something
        rejector = ""
        for plugin in self.post_filter_plugins:
            try:
                answer, status = await plugin.post_filter(state, pod, statuses)
            except Exception as exc:  # noqa: BLE001
                answer, status = None, _crashed(plugin.name, exc)
            self._observe(pod, "PostFilter", plugin.name, "", (answer, status))
            if _ok(status):
                return answer, status
            assert status is not None
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return answer, status.with_plugin(plugin.name)
            if not status.rejected:
                return None, Status(Code.ERROR, list(status.reasons), plugin=plugin.name, error=status.error)
            if answer is not None:
                result = answer
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        return result, Status(Code.UNSCHEDULABLE, reasons, plugin=rejector)

    # -- PreScore and Score --------------------------------------------------------------------

    def run_pre_score_plugins(self, state: CycleState, pod: Obj, nodes: Sequence[NodeInfo]) -> Status | None:
        skipped: set[str] = set()
        for plugin in self.pre_score_plugins:
            try:
                status = plugin.pre_score(state, pod, nodes)
            except Exception as exc:  # noqa: BLE001
                status = _crashed(plugin.name, exc)
            self._observe(pod, "PreScore", plugin.name, "", status)
            if status is not None and status.code is Code.SKIP:
                skipped.add(plugin.name)
                continue
            if not _ok(status):
                assert status is not None
                state.skip_score_plugins = skipped
                return _error(f'running PreScore plugin "{plugin.name}": {status.message}', plugin.name, status.error)
        state.skip_score_plugins = skipped
        return None

    def run_score_plugins(self, state: CycleState, pod: Obj,
                          nodes: Sequence[NodeInfo]) -> tuple[dict[str, int], Status | None]:
        """Each node's total: every plugin's score, normalized, then times its weight."""
        names = list(map(_NAME, nodes))
        totals = [0] * len(names)
        observer = self.observer
        skip = state.skip_score_plugins
        for plugin in self.score_plugins:
            if plugin.name in skip:
                continue
            # One plugin over every node: the hot loop of a cycle (~10% of the nodes), so no
            # per-node try, dataclass or observer work unless something asks for it.
            values: list[int] = []
            failed: Status | None = None
            try:
                batch = self._batch_scorers.get(plugin.name)
                if batch is not None:
                    values = batch(state, pod, nodes)
                else:
                    append = values.append
                    score = plugin.score
                    for node in nodes:
                        value, status = score(state, pod, node)
                        if status is not None and status.code is not Code.SUCCESS:
                            failed = status
                            break
                        append(int(value))
            except Exception as exc:  # noqa: BLE001
                failed = _crashed(plugin.name, exc)
            if failed is not None:
                return {}, _error(f'running Score plugin "{plugin.name}": {failed.message}', plugin.name,
                                  failed.error)
            if observer is not None:
                for name, value in zip(names, values):
                    self._observe(pod, "Score", plugin.name, name, value)
            batch_normalize = self._batch_normalizers.get(plugin.name)
            normalized: list[int] | None = None
            if batch_normalize is not None:
                try:
                    normalized = batch_normalize(state, pod, values)
                except Exception:  # noqa: BLE001 - asked again the NodeScore way, which reports it
                    normalized = None
            if normalized is not None:
                values = normalized
            elif plugin.name in self._normalizers:
                scores = [NodeScore(name, value) for name, value in zip(names, values)]
                try:
                    status = plugin.normalize_score(state, pod, scores)
                except Exception as exc:  # noqa: BLE001
                    status = _crashed(plugin.name, exc)
                if not _ok(status):
                    assert status is not None
                    return {}, _error(f'running Normalize on Score plugin "{plugin.name}": {status.message}',
                                      plugin.name, status.error)
                values = [s.score for s in scores]
            if values and not (MIN_NODE_SCORE <= min(values) and max(values) <= MAX_NODE_SCORE):
                bad = next(v for v in values if not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE)
                return {}, _error(f'plugin "{plugin.name}" returns an invalid score {bad}, it should '
                                  f'in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing',
                                  plugin.name)
            weight = self.weights.get(plugin.name, 1)
            if observer is not None:
                for name, value in zip(names, values):
                    self._observe(pod, "FinalScore", plugin.name, name, value * weight)
            if weight != 1:
                values = list(map(operator.mul, values, itertools.repeat(weight, len(values))))
            totals = list(map(operator.add, totals, values))
        return dict(zip(names, totals)), None

    # -- Reserve -------------------------------------------------------------------------------

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        for plugin in self.reserve_plugins:
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as exc:  # noqa: BLE001
                status = _crashed(plugin.name, exc)
            self._observe(pod, "Reserve", plugin.name, node_name, status)
            if not _ok(status):
                assert status is not None
                if status.rejected:
                    return status.with_plugin(plugin.name)
                return _error(f'running Reserve plugin "{plugin.name}": {status.message}', plugin.name, status.error)
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Obj, node_name: str) -> None:
        for plugin in reversed(self.reserve_plugins):
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception:  # noqa: BLE001 - the others must still release what they hold
                log.exception("Unreserve of plugin %s failed", plugin.name)

    # -- Permit --------------------------------------------------------------------------------

    def run_permit_plugins(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        waits: dict[str, float] = {}
        for plugin in self.permit_plugins:
            try:
                status, timeout = plugin.permit(state, pod, node_name)
            except Exception as exc:  # noqa: BLE001
                status, timeout = _crashed(plugin.name, exc), 0.0
            self._observe(pod, "Permit", plugin.name, node_name, (status, timeout))
            if _ok(status):
                continue
            assert status is not None
            if status.rejected:
                return status.with_plugin(plugin.name)
            if status.code is Code.WAIT:
                waits[plugin.name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                continue
            return _error(f'running Permit plugin "{plugin.name}": {status.message}', plugin.name, status.error)
        if waits:
            waiting = WaitingPod(pod, waits)
            self.waiting_pods[waiting.uid] = waiting
            name = (pod.get("metadata") or {}).get("name", "")
            return Status.wait(f'one or more plugins asked to wait and no plugin rejected pod "{name}"')
        return None

    def will_wait_on_permit(self, pod: Obj) -> bool:
        return (pod.get("metadata") or {}).get("uid", "") in self.waiting_pods

    async def wait_on_permit(self, pod: Obj) -> Status | None:
        uid = (pod.get("metadata") or {}).get("uid", "")
        waiting = self.waiting_pods.get(uid)
        if waiting is None:
            return None
        try:
            status = await waiting.result
        finally:
            self.waiting_pods.pop(uid, None)
        if _ok(status):
            return None
        assert status is not None
        if status.rejected:
            return status
        return _error(f"waiting on permit for pod: {status.message}", status.plugin, status.error)

    # -- PreBind, Bind, PostBind ---------------------------------------------------------------

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        """Skip when every PreBind plugin skips (then PreBind has nothing to do for this pod)."""
        skipped: set[str] = set()
        for plugin in self.pre_bind_plugins:
            try:
                status = plugin.pre_bind_pre_flight(state, pod, node_name)
            except Exception as exc:  # noqa: BLE001
                status = _crashed(plugin.name, exc)
            if status is not None and status.code is Code.SKIP:
                skipped.add(plugin.name)
                continue
            if not _ok(status):
                assert status is not None
                state.skip_pre_bind_plugins = skipped
                return _error(f'running PreBindPreFlight "{plugin.name}": {status.message}', plugin.name,
                              status.error)
        state.skip_pre_bind_plugins = skipped
        if self.pre_bind_plugins and len(skipped) == len(self.pre_bind_plugins):
            return Status.skip()
        if not self.pre_bind_plugins:
            return Status.skip()
        return None

    async def run_pre_bind_plugins(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        """PreBind in order; a run of adjacent plugins that each allow it goes in parallel (1.36).

        A plugin allows it with a true `allow_parallel_pre_bind` attribute; one that does not,
        skipped or not, ends the run (upstream's PreBindPreFlightResult.AllowParallel).
        """
        groups: list[list[Any]] = []
        for plugin in self.pre_bind_plugins:
            parallel = bool(getattr(plugin, "allow_parallel_pre_bind", False))
            if parallel and groups and groups[-1] and getattr(groups[-1][0], "allow_parallel_pre_bind", False):
                groups[-1].append(plugin)
            else:
                groups.append([plugin])
        for group in groups:
            run = [p for p in group if p.name not in state.skip_pre_bind_plugins]
            if not run:
                continue
            if len(run) == 1:
                results = [await self._pre_bind_one(run[0], state, pod, node_name)]
            else:
                results = await asyncio.gather(*(self._pre_bind_one(p, state, pod, node_name) for p in run))
            for plugin, status in zip(run, results):
                if _ok(status):
                    continue
                assert status is not None
                if status.rejected:
                    return status.with_plugin(plugin.name)
                return _error(f'running PreBind plugin "{plugin.name}": {status.message}', plugin.name, status.error)
        return None

    async def _pre_bind_one(self, plugin: Any, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        try:
            status = await plugin.pre_bind(state, pod, node_name)
        except Exception as exc:  # noqa: BLE001
            status = _crashed(plugin.name, exc)
        self._observe(pod, "PreBind", plugin.name, node_name, status)
        return status

    async def run_bind_plugins(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        status: Status | None = Status.skip()
        for plugin in self.bind_plugins:
            try:
                status = await plugin.bind(state, pod, node_name)
            except Exception as exc:  # noqa: BLE001
                status = _crashed(plugin.name, exc)
            self._observe(pod, "Bind", plugin.name, node_name, status)
            if status is not None and status.code is Code.SKIP:
                continue
            if not _ok(status):
                assert status is not None
                if status.rejected:
                    return status.with_plugin(plugin.name)
                return _error(f'running Bind plugin "{plugin.name}": {status.message}', plugin.name, status.error)
            return status
        return status

    def run_post_bind_plugins(self, state: CycleState, pod: Obj, node_name: str) -> None:
        for plugin in self.post_bind_plugins:
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception:  # noqa: BLE001 - informational point: nothing to undo
                log.exception("PostBind of plugin %s failed", plugin.name)

    # -- the observer --------------------------------------------------------------------------

    def _observe(self, pod: Obj, point: str, plugin: str, node: str, value: Any) -> None:
        if self.observer is not None:
            try:
                self.observer.observe(pod, point, plugin, node, value)
            except Exception:  # noqa: BLE001 - recording must not change an outcome
                log.exception("cycle observer failed at %s/%s", point, plugin)


class _NullRecorder:
    def event(self, regarding: Obj, type_: str, reason: str, message: str, action: str = "") -> None:
        pass
