"""The PodGroup scheduling cycle (KEP-4671): a group's queued pods placed together, or not at all.

`schedule_group(host, fw, qpis)` checks the group (it exists, one schedulerName, its gang all
queued), orders the pods (`ordering.py`), runs the placement loop on one snapshot, then commits
the chosen pods (filter on the node, assume, Reserve, Permit: GangScheduling's barrier) and starts
their bindings; or rejects the group whole (requeued, nominations cleared, FailedScheduling on
pods and PodGroup, `PodGroupScheduled=False`; waiting for preemption first where it applies).
`PodGroupScheduled=True` is written once the committed pods are past the Permit barrier; when
members rejected at Permit (its timeout) have all let go, `permit_rejected` writes False.
Called by `Scheduler.schedule_one` for a pod in a PodGroup while GangScheduling is on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from client import errors
from client.resources import PODGROUPS
from scheduler.cycle import FitError, Outcome, SchedulingError
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import QueuedPodInfo
from scheduler.framework.node_info import pod_key
from scheduler.framework.pod_group import GANG, Placement, PodGroupAssignment, PodGroupInfo
from scheduler.framework.status import Code, Status
from scheduler.metrics import ERROR, SCHEDULED, UNSCHEDULABLE
from scheduler.plugins import names
from scheduler.plugins.gang_scheduling import MISSING_GROUP, WAITING_FOR_MIN_COUNT, group_key
from scheduler.podgroup import ordering
from scheduler.podgroup import placement as placements
from scheduler.podgroup import preemption
from scheduler.podgroup import simulation
from scheduler.podgroup import status as group_status
from scheduler.runtime import Framework

log = logging.getLogger("haru.scheduler.podgroup")
Obj = dict[str, Any]
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
DIFFERENT_SCHEDULERS = "pods of pod group {} do not share a scheduler name: {}"


class GroupHost(Protocol):
    """What the cycle needs from the scheduler (`scheduler.Scheduler`)."""

    cache: Any
    snapshot: Any
    algorithm: Any
    nominator: Any
    client: Any
    queue: Any
    metrics: Any  # scheduler.metrics.SchedulerMetrics

    def handle_failure(self, fw: Framework, qpi: QueuedPodInfo, outcome: Outcome) -> None: ...

    def start_binding(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, outcome: Outcome,
                      done: Callable[[Obj], None] | None = None) -> None: ...

    def spawn(self, coro: Any, name: str) -> Any: ...


def applies(fw: Framework, pod: Obj) -> bool:
    """Does this pod go through the group cycle (it names a PodGroup and the profile gangs)?"""
    return names.GANG_SCHEDULING in fw.plugins and bool(group_key(pod))


def _scheduler_name(pod: Obj) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"


def _uid(pod: Obj) -> str:
    return (pod.get("metadata") or {}).get("uid", "")


async def schedule_group(host: GroupHost, fw: Framework, qpis: list[QueuedPodInfo]) -> None:
    gang = fw.plugins[names.GANG_SCHEDULING]
    key = group_key(qpis[0].pod)
    live = []
    for qpi in qpis:
        if (qpi.pod.get("metadata") or {}).get("deletionTimestamp") or host.cache.is_assumed(qpi.pod):
            host.queue.done(_uid(qpi.pod))  # being deleted, or already on its way to a node
        else:
            live.append(qpi)
    if not live:
        return
    qpis = live
    name = key.split("/", 1)[1]
    pod_group = gang.pod_group(key)
    if pod_group is None:
        _reject(host, fw, qpis, None, Status.unresolvable(MISSING_GROUP.format(name)).with_plugin(gang.name), set())
        return
    schedulers = sorted({_scheduler_name(p) for p in gang.members(key)})
    if len(schedulers) > 1:
        status = Status.unresolvable(DIFFERENT_SCHEDULERS.format(name, ", ".join(schedulers))).with_plugin(gang.name)
        _reject(host, fw, qpis, pod_group, status, set())
        return
    by_uid = {_uid(q.pod): q for q in qpis}
    group = PodGroupInfo(pod_group, ordering.order([q.pod for q in qpis]), placed=gang.ready_count(key))
    assert group.placed is not None
    if group.policy == GANG and len(qpis) + group.placed < group.min_count:
        # The rest of the gang is not in the queue yet (still arriving, or in flight): wait for it
        # as PreEnqueue does; the arrival of a member brings the group back.
        status = Status.unresolvable(WAITING_FOR_MIN_COUNT).with_plugin(gang.name)
        for qpi in qpis:
            host.handle_failure(fw, qpi, Outcome(status, nominated_node=None, unschedulable_plugins={gang.name}))
        return
    host.cache.update_snapshot(host.snapshot)
    if len(host.snapshot) == 0:
        _reject(host, fw, qpis, pod_group, Status.unresolvable(NO_NODES_AVAILABLE), set())
        return
    rejectors: set[str] = set()
    attempt = simulation.attempt_in(host.algorithm, fw, group)

    def recording(where: Placement) -> placements.Attempt[list[simulation.PodResult]]:
        outcome = attempt(where)
        for result in outcome.result or []:
            rejectors.update(result.plugins)
        return outcome

    began = time.perf_counter()
    choice = placements.choose(fw, CycleState(), group, list(host.snapshot.node_infos), recording)
    host.metrics.pod_group_algorithm(time.perf_counter() - began)
    if choice.status is not None or choice.attempt is None:
        status = choice.status or Status.as_error("the placement loop chose nothing")
        if not rejectors:
            rejectors.add(names.NODE_RESOURCES_FIT)  # the room pre-check turned every placement down
        if status.code is Code.UNSCHEDULABLE:
            # Workload-aware preemption (KEP-5710): victims are chosen and deleted only once the
            # group is proved to fit without them; the group then waits, its pods nominated.
            nominations, waiting = await preemption.preempt(host.algorithm, fw, group)
            if waiting is not None and waiting.message.startswith(preemption.WAITING):
                _reject(host, fw, qpis, pod_group, waiting, rejectors, nominations)
                return
        _reject(host, fw, qpis, pod_group, status, rejectors)
        return
    results = choice.attempt.result or []
    placed = {_uid(r.pod): r for r in results if r.host}
    committed, failure = await _commit(host, fw, group, [(by_uid[u], r.host) for u, r in placed.items()])
    if failure is not None:
        _reject(host, fw, qpis, pod_group, failure, rejectors)
        return
    for qpi, state, outcome in committed:
        host.start_binding(fw, state, qpi, outcome, done=gang.forget_permitted)
    for result in results:
        if not result.host and result.status is not None:
            qpi = by_uid[_uid(result.pod)]
            host.handle_failure(fw, qpi, Outcome(result.status, unschedulable_plugins=set(result.plugins)))
    left = [q for u, q in by_uid.items() if u not in placed and all(_uid(r.pod) != u for r in results)]
    for qpi in left:  # not tried at all (cannot happen for a feasible group; kept honest anyway)
        host.handle_failure(fw, qpi, Outcome(Status.unschedulable(simulation.GROUP_UNSCHEDULABLE),
                                             unschedulable_plugins={gang.name}))
    host.metrics.pod_group_attempt(SCHEDULED if committed else UNSCHEDULABLE, fw.profile_name)
    if not committed or any(_held_at_permit(fw, outcome.assumed_pod) for _, _, outcome in committed):
        return  # not past the barrier: PodGroupScheduled waits for it (or for its timeout)
    message = f"{len(committed)} pod(s) of pod group {name} passed Permit"
    if group.policy == GANG:
        message = f"{len(committed)} pod(s) placed, minCount {group.min_count}"
    if choice.placement is not None and choice.placement.name:
        message += f", in placement {choice.placement.name}"
    _write_status(host, fw, pod_group, True, group_status.SCHEDULED, message)
    fw.events.event(group_status.regarding(pod_group), "Normal", "Scheduled",
                    f"Successfully assigned {len(committed)} pod(s) of {key}", "Scheduling")


async def _commit(host: GroupHost, fw: Framework, group: PodGroupInfo,
                  chosen: list[tuple[QueuedPodInfo, str]]) -> tuple[list[tuple[QueuedPodInfo, CycleState, Outcome]],
                                                                   Status | None]:
    """Assume, Reserve and Permit each chosen pod on its node; on any failure undo them all."""
    done: list[tuple[QueuedPodInfo, CycleState, Outcome]] = []
    for qpi, node in chosen:
        state = CycleState()
        assumed, status = _assume_and_reserve(host, fw, state, qpi.pod, node)
        if status is None and assumed is not None:
            outcome = Outcome(None, host=node, assumed_pod=assumed)
            done.append((qpi, state, outcome))
            status = fw.run_permit_plugins(state, assumed, node)
            if status is not None and status.code is Code.WAIT:
                status = None
        if status is not None:
            _undo(fw, host, done, status)
            return [], status
    return done, None


def _assume_and_reserve(host: GroupHost, fw: Framework, state: CycleState, pod: Obj,
                        node: str) -> tuple[Obj | None, Status | None]:
    host.cache.update_snapshot(host.snapshot)
    info = host.snapshot.get(node)
    if info is None:
        return None, Status.as_error(f"node {node} left the snapshot during the pod group cycle")
    try:
        simulation.pick(host.algorithm, fw, state, pod, [info])
    except FitError as fit:
        return None, Status.as_error(f"pod no longer fits node {node} it was placed on: {fit}")
    except SchedulingError as failed:
        return None, failed.status
    assumed, status = host.algorithm.assume_and_reserve(fw, state, pod, node)
    if status is not None:
        return None, status
    return assumed, None


def _undo(fw: Framework, host: GroupHost, done: list[tuple[QueuedPodInfo, CycleState, Outcome]],
          status: Status) -> None:
    for _, state, outcome in reversed(done):
        assumed = outcome.assumed_pod
        assert assumed is not None
        waiting = fw.waiting_pods.pop(_uid(assumed), None)
        if waiting is not None:
            waiting.reject(status.plugin, status.message)
        fw.run_reserve_plugins_unreserve(state, assumed, outcome.host)
        host.cache.forget_pod(assumed)
    host.cache.update_snapshot(host.snapshot)


def _reject(host: GroupHost, fw: Framework, qpis: list[QueuedPodInfo], pod_group: Obj | None, status: Status,
            rejectors: set[str], nominations: PodGroupAssignment | None = None) -> None:
    """The whole group back to the queue: each pod with the group's status, nominations cleared, or,
    while it waits for preemption, set where the victims make room (None: kept as they are)."""
    host.metrics.pod_group_attempt(UNSCHEDULABLE if status.rejected else ERROR, fw.profile_name)
    plugins = set(rejectors)
    if status.rejected:
        plugins.add(names.GANG_SCHEDULING)
    waiting = status.message.startswith(preemption.WAITING)
    for qpi in qpis:
        nominated: str | None = ""
        if waiting:
            nominated = None if nominations is None else nominations.pod_to_node.get(pod_key(qpi.pod)) or None
        host.handle_failure(fw, qpi, Outcome(status, nominated_node=nominated, unschedulable_plugins=set(plugins)))
    if pod_group is not None:
        _group_failed(host, fw, pod_group, status)


def _held_at_permit(fw: Framework, pod: Obj | None) -> bool:
    waiting = fw.waiting_pods.get(_uid(pod or {}))
    return waiting is not None and not waiting.result.done()


def permit_rejected(host: GroupHost, fw: Framework, pod: Obj, status: Status) -> None:
    """A member's wait at Permit ended in rejection (the gang's timeout, or a member lost): once its
    reservations are released, the PodGroup says so as a failed cycle does."""
    gang = fw.plugins[names.GANG_SCHEDULING]
    key = group_key(pod)
    pod_group = gang.pod_group(key)
    # Every waiting member ends this way at once: the group speaks when the last one let go.
    if pod_group is not None and not gang.reserved_count(key):
        _group_failed(host, fw, pod_group, status)


def _group_failed(host: GroupHost, fw: Framework, pod_group: Obj, status: Status) -> None:
    gang = fw.plugins[names.GANG_SCHEDULING]
    meta = pod_group.get("metadata") or {}
    placed = gang.ready_count(f"{meta.get('namespace', '')}/{meta.get('name', '')}")
    if placed < max(PodGroupInfo(pod_group).min_count, 1):
        # A group that already passed Permit stays scheduled while stragglers wait.
        reason = group_status.UNSCHEDULABLE if status.rejected else group_status.SCHEDULER_ERROR
        _write_status(host, fw, pod_group, False, reason, status.message)
    fw.events.event(group_status.regarding(pod_group), "Warning", "FailedScheduling", status.message, "Scheduling")


def _write_status(host: GroupHost, fw: Framework, pod_group: Obj, scheduled: bool, reason: str, message: str) -> None:
    condition = group_status.condition(pod_group, scheduled, reason, message)
    if not group_status.changed(pod_group, condition) or host.client is None:
        return
    meta = pod_group.get("metadata") or {}
    client = host.client

    async def send() -> None:
        try:
            await client.patch(PODGROUPS, meta.get("name", ""), {"status": {"conditions": [condition]}},
                               meta.get("namespace"), patch_type="strategic", subresource="status")
        except errors.APIError as err:
            if not errors.is_not_found(err):
                log.warning("could not update the status of pod group %s/%s: %s", meta.get("namespace"),
                            meta.get("name"), err)
        except Exception as exc:  # noqa: BLE001 - the next cycle writes it again
            log.warning("could not update the status of pod group %s/%s: %s", meta.get("namespace"),
                        meta.get("name"), exc)

    host.spawn(send(), f"status podgroup {meta.get('namespace')}/{meta.get('name')}")
