"""Carrying out a preemption: the API calls that evict the chosen node's victims (upstream's Executor).

For each victim: a waiting (Permit) victim is rejected; any other gets the `DisruptionTarget`
condition through `pods/status` and is deleted gracefully (its own grace period), and a `Preempted`
event is recorded on it. Lower-priority pods nominated to the same node lose their nomination.
`prepare` does it inside the scheduling cycle; `prepare_async` (SchedulerAsyncPreemption, beta and
on in 1.36) does it in a background task and remembers the preemptor until the last victim's
deletion has started, which the plugin's PreEnqueue asks through `is_running`. Under
workload-aware preemption a victim PodGroup whose pods go as a whole gets `DisruptionTarget`
(reason PreemptionByScheduler) through `podgroups/status` before its pods are evicted.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone
from typing import Any

from client import errors
from client.resources import PODGROUPS, PODS
from scheduler.framework import pod_priority
from scheduler.framework.interfaces import Handle
from scheduler.framework.status import Status
from scheduler.plugins.default_preemption import victim_units

Obj = dict[str, Any]
log = logging.getLogger(__name__)

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def _meta(pod: Obj) -> dict[str, Any]:
    return pod.get("metadata") or {}


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def disruption_condition(preemptor: Obj, victim: Obj) -> Obj:
    scheduler_name = (preemptor.get("spec") or {}).get("schedulerName") or "default-scheduler"
    condition: Obj = {"type": DISRUPTION_TARGET, "status": "True", "reason": PREEMPTION_BY_SCHEDULER,
                      "message": f"{scheduler_name}: preempting to accommodate a higher priority pod"}
    generation = _meta(victim).get("generation")
    if generation:
        condition["observedGeneration"] = generation
    return condition


def _condition_changes(victim: Obj, condition: Obj) -> bool:
    """apipod.UpdatePodCondition's test: is there no such condition, or does it say something else?"""
    for existing in (victim.get("status") or {}).get("conditions") or []:
        if existing.get("type") == condition["type"]:
            return any(existing.get(k) != v for k, v in condition.items())
    return True


def pod_group_disruption_condition(preemptor: Obj, pod_group: Obj) -> Obj:
    """The metav1.Condition a preempted PodGroup gets (KEP-5710)."""
    scheduler_name = (preemptor.get("spec") or {}).get("schedulerName") or "default-scheduler"
    condition: Obj = {"type": DISRUPTION_TARGET, "status": "True", "reason": PREEMPTION_BY_SCHEDULER,
                      "message": f"{scheduler_name}: preempting to accommodate a higher priority pod",
                      "lastTransitionTime": _now()}
    generation = _meta(pod_group).get("generation")
    if generation:
        condition["observedGeneration"] = generation
    return condition


class Executor:
    def __init__(self, handle: Handle, priorities: pod_priority.Priorities | None = None) -> None:
        self.handle = handle
        self.priorities = priorities if priorities is not None else pod_priority.Priorities(None)
        self._preempting: set[str] = set()
        self._last_victim: dict[str, tuple[str, str]] = {}  # preemptor uid -> (namespace, name)
        self._tasks: set[asyncio.Task[None]] = set()

    async def preempt_pod(self, node_name: str, preemptor: Obj, victim: Obj, plugin: str) -> None:
        """Evict one victim; a victim that is already gone counts as evicted."""
        waiting = self.handle.waiting_pod(_meta(victim).get("uid", ""))
        if waiting is not None:
            waiting.reject(plugin, "preempted")
        else:
            name, namespace = _meta(victim).get("name", ""), _meta(victim).get("namespace")
            condition = disruption_condition(preemptor, victim)
            try:
                if _condition_changes(victim, condition):
                    condition["lastTransitionTime"] = _now()
                    await self.handle.client.patch(PODS, name, {"status": {"conditions": [condition]}}, namespace,
                                                   patch_type="strategic", subresource="status")
                await self.handle.client.delete(PODS, name, namespace)
            except errors.APIError as err:
                if not errors.is_not_found(err):
                    raise
                log.debug("victim %s/%s is already deleted", namespace, name)
                return
        self.handle.events.event(victim, "Normal", "Preempted",
                                 f"Preempted by pod {_meta(preemptor).get('uid', '')} on node {node_name}",
                                 "Preempting")

    async def _clear_lower_nominations(self, preemptor: Obj, node_name: str) -> None:
        """Lower-priority pods nominated here may no longer fit; dropping their nomination sends them
        back to the queue now instead of after the victims are gone."""
        failures: list[BaseException] = []
        for info in self.handle.nominated_pods_for_node(node_name):
            if self.priorities(info.pod) >= self.priorities(preemptor):
                continue
            if not (info.pod.get("status") or {}).get("nominatedNodeName"):
                continue
            meta = _meta(info.pod)
            try:
                await self.handle.client.patch(PODS, meta.get("name", ""), {"status": {"nominatedNodeName": None}},
                                               meta.get("namespace"), subresource="status")
            except Exception as err:  # noqa: BLE001 - gathered: one pod's failure must not stop the others
                failures.append(err)
        if failures:
            raise ExceptionGroup("cannot clear 'NominatedNodeName' field", failures)

    def victim_groups(self, victims: list[Obj]) -> list[Obj]:
        """The PodGroups among the victims that are disrupted as a whole, each once."""
        if not self.priorities.workload_aware:
            return []
        store = self.handle.store(PODGROUPS)
        found: dict[str, Obj] = {}
        for victim in victims:
            group = pod_priority.group_of(victim, store)
            if group is not None and victim_units.disrupted_as_a_whole(group):
                found.setdefault(f"{_meta(group).get('namespace', '')}/{_meta(group).get('name', '')}", group)
        return list(found.values())

    async def mark_groups(self, preemptor: Obj, victims: list[Obj]) -> None:
        """DisruptionTarget on each whole-group victim; a group already gone is no error."""
        for group in self.victim_groups(victims):
            meta = _meta(group)
            condition = pod_group_disruption_condition(preemptor, group)
            try:
                await self.handle.client.patch(PODGROUPS, meta.get("name", ""), {"status": {"conditions": [condition]}},
                                               meta.get("namespace"), patch_type="strategic", subresource="status")
            except errors.APIError as err:
                if not errors.is_not_found(err):
                    raise

    async def prepare(self, node_name: str, victims: list[Obj], preemptor: Obj, plugin: str) -> Status | None:
        """Evict every victim now (all at once); the first failure is the cycle's error."""
        pending = [v for v in victims if not _meta(v).get("deletionTimestamp")]
        try:
            await self.mark_groups(preemptor, pending)
        except errors.APIError as err:
            return Status.as_error(err)
        results = await asyncio.gather(*(self.preempt_pod(node_name, preemptor, v, plugin) for v in pending),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                return Status.as_error(result)
        try:
            await self._clear_lower_nominations(preemptor, node_name)
        except ExceptionGroup as err:
            log.warning("%s: %s", err.message, err.exceptions)  # not critical, as upstream treats it
        return None

    def prepare_async(self, node_name: str, victims: list[Obj], preemptor: Obj, plugin: str) -> None:
        """Start the evictions in the background and return at once; the preemptor is held back by
        PreEnqueue until the last victim's deletion has started."""
        pending = [v for v in victims if not _meta(v).get("deletionTimestamp")]
        if not pending:
            return
        uid = _meta(preemptor).get("uid", "")
        self._preempting.add(uid)
        task = asyncio.get_running_loop().create_task(self._run(node_name, pending, preemptor, plugin, uid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, node_name: str, victims: list[Obj], preemptor: Obj, plugin: str, uid: str) -> None:
        failed = missed = False
        try:
            try:
                await self.mark_groups(preemptor, victims)
            except errors.APIError as err:
                # The pods still go: the group is preempted either way, only its condition is missing.
                log.error("cannot mark the preempted pod groups for %s: %s", uid, err)
            try:
                await self._clear_lower_nominations(preemptor, node_name)
            except ExceptionGroup as err:
                log.warning("%s from lower priority pods on node %s: %s", err.message, node_name, err.exceptions)
                failed = True
            # All victims but the last go in parallel. The last one is recorded first, so that a
            # PreEnqueue check racing with its deletion event sees the deletion has started and lets
            # the preemptor through instead of leaving it stranded in the unschedulable pool.
            *first, last = victims
            results = await asyncio.gather(*(self.preempt_pod(node_name, preemptor, v, plugin) for v in first),
                                           return_exceptions=True)
            errs = [r for r in results if isinstance(r, BaseException)]
            if errs:
                log.error("error during async preemption for %s: %s", uid, errs[0])
                failed = True
            else:
                self._last_victim[uid] = (_meta(last).get("namespace", ""), _meta(last).get("name", ""))
                try:
                    await self.preempt_pod(node_name, preemptor, last, plugin)
                except Exception as err:  # noqa: BLE001 - logged; the preemptor is reactivated below
                    log.error("error during async preemption of the last victim for %s: %s", uid, err)
                    failed = True
                else:
                    # The queue asks PreEnqueue again when the last victim's deletion event comes;
                    # one that came before the victim was recorded here (someone else deleted it)
                    # found the preemption still running and left the preemptor gated.
                    last_key = f"{_meta(last).get('namespace', '')}/{_meta(last).get('name', '')}"
                    missed = self.handle.store(PODS).get(last_key) is None
        finally:
            self._preempting.discard(uid)
            self._last_victim.pop(uid, None)
        if failed or missed:
            # Without the deletions (or their events) nothing may ever wake the preemptor: put it
            # back in activeQ, where PreEnqueue now lets it through.
            self.handle.activate([preemptor])

    def is_running(self, uid: str) -> bool:
        """Is this pod's asynchronous preemption still under way (IsPodRunningPreemption)?"""
        if uid not in self._preempting:
            return False
        last = self._last_victim.get(uid)
        if last is None:
            return True  # the last victim is not reached yet
        current = self.handle.store(PODS).get(f"{last[0]}/{last[1]}")
        return current is not None and not _meta(current).get("deletionTimestamp")

    async def drain(self) -> None:
        """Wait for the background evictions (tests, and a clean shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
