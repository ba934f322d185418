"""`Scheduler`: informers feeding the cache and the queue, the scheduling loop, the binding tasks.

One `Framework` per profile; a pod is ours when its `spec.schedulerName` names a profile. The pod
informer sends unassigned pods to the queue and assigned ones to the cache; nodes go to the cache;
every other kind a plugin registered events for (claims, slices, classes, PVCs…) gets an informer
whose changes become cluster events for the queue's hints. The loop pops one pod at a time and
runs `cycle.Algorithm.scheduling_cycle`; a chosen node starts `binding.binding_cycle` as its own
task while the loop goes on. Failures go through `handle_failure`: back to the queue, the
FailedScheduling event, and the PodScheduled=False condition (with nominatedNodeName) patched
through pods/status. Started by `python -m scheduler` and by the supervisor's embedded mode.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from client import cache as client_cache
from client import resources as api
from client.informer import Event, Informer
from client.resources import Resource as ApiResource
from client.rest import RestClient
from scheduler.binding import binding_cycle
from scheduler.cache import Cache, is_terminal
from scheduler.config.types import SchedulerConfig
from scheduler.cycle import Algorithm, Outcome
from scheduler.event_recorder import EventRecorder
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, Resource
from scheduler.framework.interfaces import CycleObserver, QueuedPodInfo
from scheduler.framework.node_info import PodInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.metrics import ERROR, SCHEDULED, UNSCHEDULABLE, SchedulerMetrics
from scheduler.plugins import names
from scheduler.podgroup import group_cycle
from scheduler.queue import Nominator, SchedulingQueue, pod_update_event
from scheduler.runtime import Framework, WaitingPod

log = logging.getLogger("haru.scheduler")
Obj = dict[str, Any]
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Which informer serves the cluster events a plugin can register for.
EVENT_RESOURCES: Mapping[Resource, ApiResource] = {
    Resource.NODE: api.NODES,
    Resource.PERSISTENT_VOLUME: api.PERSISTENTVOLUMES,
    Resource.PERSISTENT_VOLUME_CLAIM: api.PERSISTENTVOLUMECLAIMS,
    Resource.STORAGE_CLASS: api.STORAGECLASSES,
    Resource.RESOURCE_CLAIM: api.RESOURCECLAIMS,
    Resource.RESOURCE_SLICE: api.RESOURCESLICES,
    Resource.DEVICE_CLASS: api.DEVICECLASSES,
    Resource.DEVICE_TAINT_RULE: api.DEVICETAINTRULES,
    Resource.POD_GROUP: api.PODGROUPS,
    Resource.WORKLOAD: api.WORKLOADS,
}
_EVENT_OF = {v: k for k, v in EVENT_RESOURCES.items()}


def scheduler_name(pod: Obj) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_update_action(old: Obj, new: Obj) -> ActionType:
    """Which parts of a Node changed (upstream's nodeSchedulingPropertiesChange)."""
    action = ActionType(0)
    old_status, new_status = old.get("status") or {}, new.get("status") or {}
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    if old_status.get("allocatable") != new_status.get("allocatable"):
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old_meta.get("labels") != new_meta.get("labels"):
        action |= ActionType.UPDATE_NODE_LABEL
    if old_spec.get("taints") != new_spec.get("taints") or old_spec.get("unschedulable") != new_spec.get("unschedulable"):
        action |= ActionType.UPDATE_NODE_TAINT
    old_conds = [(c.get("type"), c.get("status")) for c in old_status.get("conditions") or []]
    new_conds = [(c.get("type"), c.get("status")) for c in new_status.get("conditions") or []]
    if old_conds != new_conds:
        action |= ActionType.UPDATE_NODE_CONDITION
    if old_meta.get("annotations") != new_meta.get("annotations"):
        action |= ActionType.UPDATE_NODE_ANNOTATION
    return action


class Scheduler:
    def __init__(self, client: RestClient | None, config: SchedulerConfig, features: Mapping[str, bool], *,
                 observer: CycleObserver | None = None, registry: Mapping[str, Callable[..., Any]] | None = None,
                 queue_clock: Callable[[], float] | None = None) -> None:
        self.client = client
        self.config = config
        self.features = dict(features)
        self.observer = observer
        self.metrics = SchedulerMetrics()
        self._attempt_started: dict[str, float] = {}  # pod uid -> when its attempt began (for /metrics)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.nominator = Nominator()
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.informers: dict[ApiResource, Informer] = {}
        self._running = False
        self._watched: set[ApiResource] = set()  # the informers started (kinds the server serves)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stop = asyncio.Event()
        self.frameworks: dict[str, Framework] = {}
        for profile in config.profiles:
            recorder = EventRecorder(client, profile.scheduler_name)
            self.frameworks[profile.scheduler_name] = Framework(
                profile, registry=registry, features=self.features, client=client, events=recorder,
                snapshot=self.snapshot, stores=self.store, waiting_pods=self.waiting_pods, nominator=self.nominator,
                observer=observer, percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
                parallelism=config.parallelism, activator=lambda pods: self.queue.activate(pods))
        first = next(iter(self.frameworks.values()))
        kwargs: dict[str, Any] = {}
        if queue_clock is not None:
            kwargs["clock"] = queue_clock
        self.queue = SchedulingQueue(first.less, lambda pod: self.frameworks.get(scheduler_name(pod)),
                                     initial_backoff=config.pod_initial_backoff_seconds,
                                     max_backoff=config.pod_max_backoff_seconds, nominator=self.nominator, **kwargs)
        self.algorithm = Algorithm(self.cache, self.snapshot, self.nominator)

    # -- informers -----------------------------------------------------------------------------

    def store(self, resource: ApiResource) -> client_cache.Store:
        """The informer store of `resource` (the plugins' Handle.store); made on first use."""
        return self._informer(resource).store

    def _informer(self, resource: ApiResource) -> Informer:
        informer = self.informers.get(resource)
        if informer is None:
            if self.client is None:
                raise RuntimeError("this scheduler has no client to watch the cluster with")
            informer = self.informers[resource] = Informer.for_resource(self.client, resource)
            if resource == api.PODS:
                informer.add_handler(self._on_pod)
            elif resource == api.NODES:
                informer.add_handler(self._on_node)
            elif resource in _EVENT_OF:
                informer.add_handler(self._event_handler(_EVENT_OF[resource]))
            if self._running:
                informer.start()  # asked for late, by a plugin at run time
                self._watched.add(resource)
        return informer

    def _event_handler(self, kind: Resource) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            if event.initial:
                return
            action = {"ADDED": ActionType.ADD, "DELETED": ActionType.DELETE}.get(event.type, ActionType.UPDATE)
            new = None if event.type == "DELETED" else event.obj
            old = event.obj if event.type == "DELETED" else event.old
            self.queue.move_all_on_event(ClusterEvent(kind, action), old, new)
        return handle

    def _on_node(self, event: Event) -> None:
        node = event.obj
        if event.type == "DELETED":
            self.cache.remove_node(node)
            self.queue.move_all_on_event(ClusterEvent(Resource.NODE, ActionType.DELETE), node, None)
            return
        if event.type == "ADDED" or event.old is None:
            self.cache.add_node(node)
            self.queue.move_all_on_event(ClusterEvent(Resource.NODE, ActionType.ADD), None, node)
            return
        self.cache.update_node(node)
        action = node_update_action(event.old, node)
        if action:
            self.queue.move_all_on_event(ClusterEvent(Resource.NODE, action), event.old, node)

    def _on_pod(self, event: Event) -> None:
        pod = event.obj
        assigned = bool((pod.get("spec") or {}).get("nodeName"))
        if event.type == "DELETED":
            uid = (pod.get("metadata") or {}).get("uid", "")
            waiting = self.waiting_pods.get(uid)
            if waiting is not None:
                waiting.reject("", "removed")
            self.queue.delete(pod)
            if assigned or self.cache.has_pod(pod):
                # Assumed ones too: a binding under way then fails (404) and forgets nothing.
                self.cache.remove_pod(pod)
                self.queue.move_all_on_event(ClusterEvent(Resource.ASSIGNED_POD, ActionType.DELETE), pod, None)
            return
        if assigned:
            if self.queue.where(pod):
                self.queue.delete(pod)  # bound (by us or by someone else)
            known = self.cache.has_pod(pod) and not self.cache.is_assumed(pod)
            self.cache.add_pod(pod)
            if is_terminal(pod):
                self.queue.move_all_on_event(ClusterEvent(Resource.ASSIGNED_POD, ActionType.DELETE), pod, None)
            elif not known:
                self.queue.move_all_on_event(ClusterEvent(Resource.ASSIGNED_POD, ActionType.ADD), None, pod)
            elif event.old is not None:
                self.queue.move_all_on_event(pod_update_event(event.old, pod, Resource.ASSIGNED_POD), event.old, pod)
            return
        if scheduler_name(pod) not in self.frameworks or self.cache.is_assumed(pod):
            return
        if is_terminal(pod):
            self.queue.delete(pod)
            return
        if event.type == "MODIFIED" and event.old is not None:
            self.queue.update(event.old, pod)
        else:
            self.queue.add(pod)

    # -- running -------------------------------------------------------------------------------

    async def start(self, sync_timeout: float | None = None) -> None:
        """Start the informers, wait until they have listed, then the scheduling loop."""
        self._informer(api.NODES)
        self._informer(api.PODS)
        for fw in self.frameworks.values():
            for event in fw.registered_events():
                resource = EVENT_RESOURCES.get(event.resource)
                if resource is not None:
                    self._informer(resource)
        served = await self._served(list(self.informers))
        self._running = True
        started = []
        for resource, informer in list(self.informers.items()):
            if resource in served:
                informer.start()
                started.append(informer)
                self._watched.add(resource)
            else:
                # A kind this server does not serve (a gated API) has nothing to watch: its store stays empty.
                log.info("not watching %s: the server does not serve it", resource)
        await asyncio.gather(*(i.wait_synced(sync_timeout) for i in started))
        self._spawn(self._loop(), "scheduling loop")
        self._spawn(self.queue.run(self._stop), "queue flush")

    async def _served(self, resources: list[ApiResource]) -> set[ApiResource]:
        """Which of `resources` the server serves (pods and nodes are taken as given)."""
        assert self.client is not None
        served = {r for r in resources if r in (api.PODS, api.NODES)}
        versions = {r.api_version for r in resources if r not in served}
        names: dict[str, set[str] | None] = {}
        for version in versions:
            path = f"/apis/{version}" if "/" in version else f"/api/{version}"
            try:
                doc = await self.client.get_path(path)
                names[version] = {e.get("name", "") for e in (doc or {}).get("resources") or []}
            except Exception as exc:  # noqa: BLE001 - 404: a group version the server lacks
                log.info("discovery of %s failed: %s", version, exc)
                names[version] = None
        for resource in resources:
            if resource not in served and resource.resource in (names.get(resource.api_version) or ()):
                served.add(resource)
        return served

    async def stop(self) -> None:
        self._stop.set()
        self.queue.close()
        for waiting in list(self.waiting_pods.values()):
            waiting.reject("", "scheduler stopped")
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for informer in list(self.informers.values()):
            await informer.stop()
        for fw in self.frameworks.values():
            flush = getattr(fw.events, "flush", None)
            if flush is not None:
                await flush()
        close = getattr(self.observer, "close", None)
        if close is not None:
            await close()  # the result annotations still being written

    async def run(self, stop: asyncio.Event) -> None:
        await self.start()
        try:
            await stop.wait()
        finally:
            await self.stop()

    def problems(self) -> list[str]:
        """What keeps the scheduler from working, for componentstatuses (empty: healthy)."""
        out = [f"informer {r} has not synced" for r, i in self.informers.items()
               if r in self._watched and not i.has_synced]
        return out + self.stalled()

    def stalled(self) -> list[str]:
        """What makes the process dead rather than not ready yet (the /healthz and /livez answer)."""
        return [f"{t.get_name()} ended" for t in self._tasks if t.done() and t.get_name() == "scheduling loop"]

    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        if task.get_name() != "scheduling loop":
            self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s failed", task.get_name(), exc_info=task.exception())

    async def _loop(self) -> None:
        while not self._stop.is_set():
            qpi = await self.queue.pop()
            if qpi is None:
                return
            try:
                await self.schedule_one(qpi)
            except Exception:  # noqa: BLE001 - one pod's bug must not stop scheduling
                log.exception("scheduling %s failed unexpectedly", PodInfo.of(qpi.pod).key)
                self.queue.done((qpi.pod.get("metadata") or {}).get("uid", ""))
            await asyncio.sleep(0)  # let the informers deliver between attempts

    async def schedule_one(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod
        meta = pod.get("metadata") or {}
        uid = meta.get("uid", "")
        fw = self.frameworks.get(scheduler_name(pod))
        if fw is None:
            self.queue.done(uid)
            return
        if meta.get("deletionTimestamp"):
            fw.events.event(pod, "Warning", "FailedScheduling",
                            f"skip schedule deleting pod: {meta.get('namespace')}/{meta.get('name')}", "Scheduling")
            self.queue.done(uid)
            return
        if self.cache.is_assumed(pod):
            self.queue.done(uid)
            return
        if group_cycle.applies(fw, pod):
            # A PodGroup is one entity: its queued pods are placed together, or not at all.
            members = self.queue.take_group(qpi)
            self._attempts_begin(members)
            self.metrics.pod_group_started()
            await group_cycle.schedule_group(self, fw, members)
            return
        self._attempts_begin([qpi])
        state = CycleState()
        outcome = await self.algorithm.scheduling_cycle(fw, state, qpi)
        if outcome.status is not None:
            self.handle_failure(fw, qpi, outcome)
            return
        self._spawn(self._bind(fw, state, qpi, outcome), f"bind {meta.get('namespace')}/{meta.get('name')}")

    async def _bind(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, outcome: Outcome,
                    done: Callable[[Obj], None] | None = None) -> None:
        status = await binding_cycle(self, fw, state, qpi, outcome)
        if done is not None and outcome.assumed_pod is not None:
            done(outcome.assumed_pod)
        if status is not None and status.plugin == names.GANG_SCHEDULING and group_cycle.applies(fw, qpi.pod):
            group_cycle.permit_rejected(self, fw, qpi.pod, status)
        if status is None:
            self._attempt_done(fw, qpi, SCHEDULED)
        if status is None and self.observer is not None:
            self.observer.attempt_done(qpi.pod, outcome.host)

    def start_binding(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, outcome: Outcome,
                      done: Callable[[Obj], None] | None = None) -> None:
        """The binding cycle of a pod the PodGroup cycle committed, as its own task."""
        meta = qpi.pod.get("metadata") or {}
        self._spawn(self._bind(fw, state, qpi, outcome, done), f"bind {meta.get('namespace')}/{meta.get('name')}")

    def spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        return self._spawn(coro, name)

    # -- metrics -------------------------------------------------------------------------------

    def _attempts_begin(self, qpis: list[QueuedPodInfo]) -> None:
        now = self.metrics.clock()
        for qpi in qpis:
            self._attempt_started[(qpi.pod.get("metadata") or {}).get("uid", "")] = now

    def _attempt_done(self, fw: Framework, qpi: QueuedPodInfo, result: str) -> None:
        """scheduler_schedule_attempts_total and the attempt latency (algorithm + binding)."""
        started = self._attempt_started.pop((qpi.pod.get("metadata") or {}).get("uid", ""), None)
        if started is not None:
            self.metrics.pod_attempt(result, fw.profile_name, self.metrics.clock() - started)

    # -- failures ------------------------------------------------------------------------------

    def handle_failure(self, fw: Framework, qpi: QueuedPodInfo, outcome: Outcome) -> None:
        """Back to the queue, the FailedScheduling event, and the pod's PodScheduled condition."""
        status = outcome.status
        assert status is not None
        pod = qpi.pod
        meta = pod.get("metadata") or {}
        uid = meta.get("uid", "")
        reason = "Unschedulable" if status.rejected else "SchedulerError"
        self._attempt_done(fw, qpi, UNSCHEDULABLE if status.rejected else ERROR)
        qpi.unschedulable_plugins = set(outcome.unschedulable_plugins)
        qpi.pending_plugins = set(outcome.pending_plugins)
        if not status.rejected:
            log.warning("error scheduling pod %s/%s; retrying: %s", meta.get("namespace"), meta.get("name"),
                        status.message)
        current = self._cached_pod(pod)
        if current is None or (current.get("spec") or {}).get("nodeName"):
            self.queue.done(uid)  # gone, or bound meanwhile: nothing to retry
        else:
            self.queue.add_unschedulable_if_not_present(qpi, current)
        self.nominator.add(PodInfo.of(current or pod), outcome.nominated_node)
        if self.observer is not None:
            self.observer.attempt_done(pod, "")
        fw.events.event(pod, "Warning", "FailedScheduling", status.message, "Scheduling")
        self._patch_status(current or pod, reason, status.message, outcome.nominated_node)

    def _cached_pod(self, pod: Obj) -> Obj | None:
        informer = self.informers.get(api.PODS)
        if informer is None:
            return pod
        return informer.store.get(client_cache.key_of(pod))

    def patch_nominated_node(self, pod: Obj, node_name: str) -> asyncio.Task[Any] | None:
        """Send status.nominatedNodeName in the background; the task, for a binding to wait on."""
        if (pod.get("status") or {}).get("nominatedNodeName") == node_name:
            return None
        meta = pod.get("metadata") or {}
        return self._send_status_patch(meta, {"status": {"nominatedNodeName": node_name}})

    def _patch_status(self, pod: Obj, reason: str, message: str, nominated: str | None) -> None:
        status = pod.get("status") or {}
        meta = pod.get("metadata") or {}
        condition: Obj = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
        if meta.get("generation"):
            condition["observedGeneration"] = meta["generation"]
        old = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
        patch: Obj = {}
        if old is not None and old.get("status") == "False":
            condition["lastTransitionTime"] = old.get("lastTransitionTime")
        else:
            condition["lastTransitionTime"] = _now()
        condition["lastProbeTime"] = None
        changed = old is None or any(old.get(k) != condition.get(k) for k in ("status", "reason", "message",
                                                                              "observedGeneration"))
        if changed:
            patch["conditions"] = [condition]
        if nominated is not None and status.get("nominatedNodeName", "") != nominated:
            patch["nominatedNodeName"] = nominated or None
        if patch:
            self._send_status_patch(meta, {"status": patch})

    def _send_status_patch(self, meta: Obj, patch: Obj) -> asyncio.Task[Any] | None:
        if self.client is None:
            return None
        client = self.client

        async def send() -> None:
            try:
                await client.patch(api.PODS, meta.get("name", ""), patch, meta.get("namespace"),
                                   patch_type="strategic", subresource="status")
            except Exception as exc:  # noqa: BLE001 - the next attempt writes it again
                log.warning("could not update the status of pod %s/%s: %s", meta.get("namespace"),
                            meta.get("name"), exc)

        return self._spawn(send(), f"status {meta.get('namespace')}/{meta.get('name')}")
