"""Preemption for a whole PodGroup, delayed until the group is known to fit (KEP-5710, upstream's PodGroupEvaluator).

The domain is the whole cluster. Every victim unit (`victim_units.py`: a lone pod, or a whole
`disruptionMode: PodGroup` group) of lower priority than the preemptor group is taken away and the
caller's `feasible(gone)` (the PodGroup cycle's simulation with those pods removed) must place the
group; then units are given back most important first (PDB-breaking ones first), each kept only if
the group still fits without it. Nothing is deleted while choosing: the victims go only once the
last check has proved the group fits without exactly them ("delayed preemption"), and the group
goes back to the queue with PodGroupScheduled=False saying it waits for preemption. While an
earlier preemption's victims are still there, retries answer the same and choose no new victims.
The DefaultPreemption plugin owns one (`plugin.preempt_pod_group`); the cycle calls it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from client.resources import PODDISRUPTIONBUDGETS, PODGROUPS, PODS
from scheduler.framework import pod_priority
from scheduler.framework.interfaces import Handle
from scheduler.framework.node_info import pod_key
from scheduler.framework.pod_group import PodGroupAssignment, PodGroupInfo
from scheduler.framework.status import Status
from scheduler.plugins.default_preemption import pdb, victim_units
from scheduler.plugins.default_preemption.executor import Executor

Obj = dict[str, Any]
Feasible = Callable[[Sequence[Obj]], PodGroupAssignment | None]
log = logging.getLogger(__name__)

NO_VICTIMS = "No preemption victims found for incoming pod group"
NOT_HELPFUL = "preemption: preemption is not helpful for scheduling the pod group"
NOT_ELIGIBLE_NEVER = "preemption: not eligible due to preemptionPolicy=Never."


WAITING = "waiting for preemption"


def waiting_message(count: int) -> str:
    """The PodGroupScheduled=False message while victims are on their way out."""
    return f"{WAITING}: {count} victim pod(s) of lower priority are being removed"


@dataclass
class Plan:
    """The victims chosen for one group and where its pods go once they are gone."""

    victims: list[victim_units.Unit]
    assignment: PodGroupAssignment
    num_pdb_violations: int = 0
    pods: list[Obj] = field(default_factory=list)


class PodGroupPreemption:
    def __init__(self, handle: Handle, priorities: pod_priority.Priorities, executor: Executor,
                 plugin_name: str) -> None:
        self.handle = handle
        self.priorities = priorities
        self.executor = executor
        self.plugin_name = plugin_name
        self._in_flight: dict[str, set[str]] = {}  # group key -> keys of its victims not yet gone
        self._tasks: set[asyncio.Task[None]] = set()

    # Delayed preemption's bookkeeping

    def waiting_for(self, group_key: str) -> int:
        """How many of an earlier preemption's victims for this group are still there (0: none)."""
        victims = self._in_flight.get(group_key)
        if not victims:
            return 0
        pods = self.handle.store(PODS)
        left = {key for key in victims if pods.get(key) is not None}
        if left:
            self._in_flight[group_key] = left
            return len(left)
        del self._in_flight[group_key]
        return 0

    # Choosing

    def select_victims(self, group: PodGroupInfo, feasible: Feasible) -> tuple[Plan | None, Status | None]:
        """The victims that let the whole group fit, fewest and least important first."""
        preemptor_priority = pod_priority.group_priority(group.pod_group)
        if group.pods and all((p.get("spec") or {}).get("preemptionPolicy") == "Never" for p in group.pods):
            return None, Status.unschedulable(NOT_ELIGIBLE_NEVER)
        nodes = list(self.handle.snapshot)
        members = victim_units.GroupMembers(nodes, self.handle.store(PODGROUPS) if self.priorities.workload_aware
                                            else None)
        own = {pod_key(p) for p in group.pods}
        units: list[victim_units.Unit] = []
        seen: set[frozenset[str]] = set()
        for node in nodes:
            for unit in victim_units.units_on_node(
                    node, lambda info: info.key not in own and self.priorities(info.pod) < preemptor_priority,
                    members, self.priorities):
                if unit.keys not in seen:
                    seen.add(unit.keys)
                    units.append(unit)
        if not units:
            return None, Status.unresolvable(NO_VICTIMS)

        def gone(chosen: Sequence[victim_units.Unit]) -> list[Obj]:
            return [info.pod for unit in chosen for info in unit.pods]

        assignment = feasible(gone(units))
        if assignment is None:
            return None, Status.unschedulable(NOT_HELPFUL)

        units.sort(key=victim_units.Unit.importance_key)
        flat = [info for unit in units for info in unit.pods]
        broken = {id(info) for info in pdb.split_by_violation(flat, self.handle.store(PODDISRUPTIONBUDGETS).list())[0]}
        violating = [u for u in units if any(id(i) in broken for i in u.pods)]
        fine = [u for u in units if not any(id(i) in broken for i in u.pods)]
        victims = list(units)
        violations = 0
        breaking = {id(u) for u in violating}
        for unit in [*violating, *fine]:
            without = [u for u in victims if u is not unit]
            fits = feasible(gone(without))
            if fits is not None:
                victims, assignment = without, fits  # reprieved: the group fits with it kept
            elif id(unit) in breaking:
                violations += 1
        victims.sort(key=victim_units.Unit.importance_key)
        return Plan(victims, assignment, violations, gone(victims)), None

    # Acting

    async def preempt(self, group: PodGroupInfo, feasible: Feasible,
                      preemptor: Obj | None = None) -> tuple[PodGroupAssignment | None, Status | None]:
        """(nominations, status) for the cycle. Status None: the group fits with nothing removed.
        Otherwise Unschedulable: either waiting for victims (nominations given once, when chosen)
        or why preemption cannot help; an error is an Error status."""
        key = group.key
        left = self.waiting_for(key)
        if left:
            return None, Status.unschedulable(waiting_message(left))
        plan, status = self.select_victims(group, feasible)
        if status is not None or plan is None:
            return None, status
        if not plan.pods:
            return plan.assignment, None
        self._in_flight[key] = {pod_key(p) for p in plan.pods}
        representative = preemptor or (group.pods[0] if group.pods else group.pod_group)
        task = asyncio.get_running_loop().create_task(self._actuate(key, plan, representative))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return plan.assignment, Status.unschedulable(waiting_message(len(plan.pods)))

    async def _actuate(self, key: str, plan: Plan, preemptor: Obj) -> None:
        try:
            await self.executor.mark_groups(preemptor, plan.pods)
        except Exception as err:  # noqa: BLE001 - the pods still go; only the group's condition is missing
            log.error("cannot mark the pod groups preempted for %s: %s", key, err)
        pending = [p for p in plan.pods if not (p.get("metadata") or {}).get("deletionTimestamp")]
        results = await asyncio.gather(
            *(self.executor.preempt_pod((p.get("spec") or {}).get("nodeName", ""), preemptor, p, self.plugin_name)
              for p in pending), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            log.error("preemption for pod group %s: %d of %d evictions failed: %s", key, len(failures), len(pending),
                      failures[0])
            # What is left is not waited for: the group's next attempt may choose again.
            self._in_flight.pop(key, None)

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
