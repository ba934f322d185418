"""The binding cycle: what happens to a pod after its scheduling cycle chose a node, off the loop.

Upstream's bindingCycle: the PreBind pre-flights (and, with NominatedNodeNameForExpectation, the
pod's `status.nominatedNodeName` set to the chosen node when PreBind or a Permit wait will take a
while; the patch runs beside PreBind and lands before Bind), WaitOnPermit, then PreBind, Bind (DefaultBinder's POST pods/binding) and PostBind, and the
`Scheduled` event `Successfully assigned ns/pod to node`. On any failure the Reserve plugins are
undone in reverse, the assumed pod is forgotten (other pods may now fit where it was: an
AssignedPod delete event) and the pod goes back to the queue through the scheduler's failure
handler. Run as one asyncio task per pod by `scheduler.py`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any, Protocol

from scheduler.cycle import Outcome, rejected_on_one_node
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, Resource
from scheduler.framework.interfaces import QueuedPodInfo
from scheduler.framework.status import Code, Status
from scheduler.runtime import Framework

log = logging.getLogger("haru.scheduler.binding")
Obj = dict[str, Any]


class BindingHost(Protocol):
    """What the binding cycle needs from the scheduler (`scheduler.Scheduler`)."""

    cache: Any
    queue: Any
    features: dict[str, bool]

    def handle_failure(self, fw: Framework, qpi: QueuedPodInfo, outcome: Outcome) -> None: ...

    def patch_nominated_node(self, pod: Obj, node_name: str) -> Awaitable[None] | None: ...


async def binding_cycle(host: BindingHost, fw: Framework, state: CycleState, qpi: QueuedPodInfo,
                        outcome: Outcome) -> Status | None:
    """Bind the assumed pod; on failure undo and requeue. Returns the failing status, if any."""
    pod = outcome.assumed_pod
    assert pod is not None
    node = outcome.host
    failure = await _bind(host, fw, state, pod, node)
    if failure is None:
        return None
    fw.run_reserve_plugins_unreserve(state, pod, node)
    forgotten = host.cache.is_assumed(pod)
    host.cache.forget_pod(pod)
    uid = (pod.get("metadata") or {}).get("uid", "")
    rejected = failure.status is not None and failure.status.rejected
    if rejected:
        # Requeue the pod first, so the event below is not replayed to the pod that caused it.
        host.handle_failure(fw, qpi, failure)
    if forgotten:
        # What it held on the node is free again for the others.
        host.queue.move_all_on_event(ClusterEvent(Resource.ASSIGNED_POD, ActionType.DELETE), pod, None,
                                     pre_check=lambda other: (other.get("metadata") or {}).get("uid") != uid)
    if not rejected:
        host.handle_failure(fw, qpi, failure)
    return failure.status


async def _bind(host: BindingHost, fw: Framework, state: CycleState, pod: Obj, node: str) -> Outcome | None:
    pre_flight = fw.run_pre_bind_pre_flights(state, pod, node)
    if pre_flight is not None and (pre_flight.code is Code.ERROR or pre_flight.rejected):
        return Outcome(pre_flight)
    nominating: Awaitable[None] | None = None
    if host.features.get("NominatedNodeNameForExpectation", False):
        if pre_flight is None or fw.will_wait_on_permit(pod):
            # Tell others (the cluster autoscaler, people) where the pod is about to go.
            nominating = host.patch_nominated_node(pod, node)
    status = await fw.wait_on_permit(pod)
    if status is not None:
        if status.rejected:
            return rejected_on_one_node(status, node)
        return Outcome(status)
    # Past Permit nothing can make the pod unschedulable: failures from here go to backoff.
    host.queue.done((pod.get("metadata") or {}).get("uid", ""))
    # The nomination goes out beside PreBind (upstream sends it through its asynchronous API
    # dispatcher, so PreBind's writes, DRA's claim status for one, do not wait for it).
    status = await fw.run_pre_bind_plugins(state, pod, node)
    if status is not None:
        return Outcome(status)
    if nominating is not None:
        # The binding clears nominatedNodeName (KEP-5278): a nomination landing after it would stick.
        await nominating
    status = await fw.run_bind_plugins(state, pod, node)
    host.cache.finish_binding(pod)
    if status is not None and status.code is Code.SKIP:
        status = Status.as_error("no bind plugin bound the pod")
    if status is not None:
        return Outcome(status)
    meta = pod.get("metadata") or {}
    fw.events.event(pod, "Normal", "Scheduled", f"Successfully assigned {meta.get('namespace')}/{meta.get('name')} "
                                               f"to {node}", "Binding")
    fw.run_post_bind_plugins(state, pod, node)
    return None
