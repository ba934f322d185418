"""DefaultPreemption: the PostFilter plugin that makes room for a pod by evicting lower-priority ones.

Its own rules, as upstream's plugin has them: who may preempt (not `preemptionPolicy: Never`, not
while earlier victims on its nominated node are still terminating), which pods are victims on a
node (every lower-priority pod is removed, then the most important are reprieved while the pod
still fits, PDB-breaking ones first), and how many nodes to dry-run (minCandidateNodesPercentage /
minCandidateNodesAbsolute). The flow around them is `evaluator.py`; the API calls `executor.py`.
With SchedulerAsyncPreemption its PreEnqueue holds a preemptor back until its evictions are under way.
Workload-aware preemption (KEP-5710): group priorities and whole-group victims (`victim_units.py`),
and `preempt_pod_group` for the PodGroup cycle (`pod_group_preemption.py`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from client.resources import PODGROUPS
from scheduler.framework import pod_priority
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle, NodeToStatus, PostFilterResult
from scheduler.framework.node_info import NodeInfo, PodInfo
from scheduler.framework.pod_group import PodGroupAssignment, PodGroupInfo
from scheduler.framework.status import Code, Status, code_of, is_success
from scheduler.plugins import names
from scheduler.plugins.default_preemption import ordering, pdb, victim_units
from scheduler.plugins.default_preemption.evaluator import Evaluator
from scheduler.plugins.default_preemption.executor import DISRUPTION_TARGET, PREEMPTION_BY_SCHEDULER, Executor
from scheduler.plugins.default_preemption.ordering import Victims
from scheduler.plugins.default_preemption.pod_group_preemption import Feasible, PodGroupPreemption

Obj = dict[str, Any]
ASYNC_PREEMPTION_GATE = "SchedulerAsyncPreemption"  # beta, on by default since 1.33
WORKLOAD_AWARE_PREEMPTION_GATE = "WorkloadAwarePreemption"  # alpha in 1.36
TOPOLOGY_AWARE_GATE = "TopologyAwareWorkloadScheduling"  # alpha in 1.36
GANG_SCHEDULING_GATE = "GangScheduling"  # alpha in 1.36
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


def validate_args(percentage: int, absolute: int) -> None:
    """ValidateDefaultPreemptionArgs: field errors in upstream's words, aggregated as Go prints them."""
    errs = []
    if not 0 <= percentage <= 100:
        errs.append(f"minCandidateNodesPercentage: Invalid value: {percentage}: not in valid range [0, 100]")
    if absolute < 0:
        errs.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
    if percentage == 0 and absolute == 0:
        errs.append("minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesAbsolute")
        errs.append("minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesPercentage")
    if errs:
        raise ValueError(errs[0] if len(errs) == 1 else f"[{', '.join(errs)}]")


def _terminating_by_preemption(pod: Obj) -> bool:
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == DISRUPTION_TARGET:
            return condition.get("status") == "True" and condition.get("reason") == PREEMPTION_BY_SCHEDULER
    return False


def _skip_hint(pod: Obj, old: Any, new: Any) -> QueueingHint:
    # The pods this plugin holds back are also rejected by the plugins whose failure preemption
    # resolves (NodeResourcesFit…); those decide when a deletion makes the pod worth retrying.
    return QueueingHint.SKIP


class DefaultPreemption:
    name = names.DEFAULT_PREEMPTION

    def __init__(self, args: dict[str, Any], handle: Handle, features: Features,
                 rand: random.Random | None = None) -> None:
        self.handle = handle
        self.min_percentage = int(args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE))
        self.min_absolute = int(args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE))
        validate_args(self.min_percentage, self.min_absolute)
        self.async_preemption = features.get(ASYNC_PREEMPTION_GATE, True)
        self.workload_aware = features.get(WORKLOAD_AWARE_PREEMPTION_GATE, False)
        self.topology_aware = features.get(TOPOLOGY_AWARE_GATE, False)
        # Under workload-aware preemption a group's pods compare by the group's priority and a
        # PodGroup-mode group is one victim; `priorities` is a plain pod-priority reader otherwise.
        self.priorities = pod_priority.for_plugin(handle, features)
        # With GangScheduling the PodGroup cycle preempts for a whole group; without it a group's
        # pods are scheduled one by one and so preempt one by one, as any pod, with group victims.
        self.group_cycle_preempts = bool(features.get(GANG_SCHEDULING_GATE, False))
        self._group_members: victim_units.GroupMembers | None = None
        self.rand = rand or random.Random()
        self.executor = Executor(handle, self.priorities)
        self.evaluator = Evaluator(self.name, handle, self, self.executor, self.async_preemption)
        self.group_preemption = PodGroupPreemption(handle, self.priorities, self.executor, self.name)

    # PostFilter

    async def post_filter(self, state: CycleState, pod: Obj,
                          statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        refusal = self._pod_group_refusal(pod)
        if refusal:
            return None, Status.unschedulable(refusal)
        pod_groups = self.handle.store(PODGROUPS) if self.priorities.workload_aware else None
        self._group_members = victim_units.GroupMembers(list(self.handle.snapshot), pod_groups)
        try:
            result, status = await self.evaluator.preempt(state, pod, statuses)
        finally:
            self._group_members = None
        if status is not None and status.message:
            return result, Status(status.code, [f"preemption: {status.message}"], error=status.error)
        return result, status

    def _pod_group_refusal(self, pod: Obj) -> str:
        """Why a pod of a PodGroup is not preempted for pod by pod ("" when it may be): with
        topology-aware placement preemption would run once per placement tried, and with
        workload-aware preemption the group is preempted for as a whole by the PodGroup cycle
        (upstream's PostFilter texts). With GangScheduling off there is no group cycle: the
        group's pods preempt one by one, with the group's priority."""
        group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        if not group:
            return ""
        if self.topology_aware:
            namespace = (pod.get("metadata") or {}).get("namespace", "")
            pod_group = self.handle.store(PODGROUPS).get(f"{namespace}/{group}")
            if pod_group is None:
                return "preemption: pod group for pod not found"
            if (pod_group.get("spec") or {}).get("schedulingConstraints"):
                return "preemption: not eligible due to placement-based pod group scheduling limitation"
        if self.workload_aware and self.group_cycle_preempts:
            return "preemption: not eligible due to workload aware preemption enabled"
        return ""

    async def preempt_pod_group(self, group: PodGroupInfo, feasible: Feasible,
                                preemptor: Obj | None = None) -> tuple[PodGroupAssignment | None, Status | None]:
        """Preemption for a whole group, for the PodGroup cycle (`pod_group_preemption.py`): victims
        deleted only once `feasible` proved the group fits without them; Unschedulable while it waits."""
        return await self.group_preemption.preempt(group, feasible, preemptor)

    # PreEnqueue

    def pre_enqueue(self, pod: Obj) -> Status | None:
        if not self.async_preemption:
            return None
        if self.executor.is_running((pod.get("metadata") or {}).get("uid", "")):
            return Status.unresolvable("waiting for the preemption for this pod to be finished")
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.async_preemption:
            return []  # PreEnqueue never rejects then
        return [ClusterEventWithHint(ClusterEvent(Resource.ASSIGNED_POD, ActionType.DELETE), _skip_hint)]

    # The evaluator's Strategy

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        wanted = max(num_nodes * self.min_percentage // 100, self.min_absolute)
        return self.rand.randrange(num_nodes), min(wanted, num_nodes)

    def _may_preempt(self, victim: PodInfo, preemptor: Obj) -> bool:
        return self.priorities(victim.pod) < self.priorities(preemptor)

    def eligible_to_preempt_others(self, pod: Obj, nominated_node_status: Status | None) -> tuple[bool, str]:
        if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
            return False, "not eligible due to preemptionPolicy=Never."
        nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
        if nominated:
            # A nominated node the filters now call unresolvable is no reason to wait: preempt again.
            if code_of(nominated_node_status) is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            node = self.handle.snapshot.get(nominated)
            if node is not None:
                for info in node.pods:
                    if self._may_preempt(info, pod) and _terminating_by_preemption(info.pod):
                        return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    def select_victims_on_node(self, state: CycleState, pod: Obj, node: NodeInfo,
                               pdbs: Sequence[Obj]) -> tuple[list[Obj], int, Status | None]:
        """The fewest pods to evict from `node` (a clone) for `pod` to fit, most important first, and
        how many victim units among them break a PDB. `state` is a clone too: both are changed in
        place. A unit is one pod, or under workload-aware preemption a whole PodGroup whose
        disruptionMode is PodGroup (`victim_units.py`): its pods on other nodes go with it."""
        # A unit's pods on this node, worked out once: each unit is removed and added back a few times.
        here: dict[int, list[PodInfo]] = {}
        on_node: set[str] | None = None

        def remove(unit: victim_units.Unit) -> Status | None:
            for info in here[id(unit)]:
                node.remove_pod(info.pod)
                status = self.handle.run_pre_filter_extension_remove_pod(state, pod, info, node)
                if not is_success(status):
                    return status
            return None

        def add(unit: victim_units.Unit) -> Status | None:
            for info in here[id(unit)]:
                node.add_pod(info)
                status = self.handle.run_pre_filter_extension_add_pod(state, pod, info, node)
                if not is_success(status):
                    return status
            return None

        # First remove every unit that may be preempted and see whether the pod fits at all.
        groups = self._group_members or victim_units.GroupMembers((), None)
        preemptor_priority = self.priorities(pod)
        potential = victim_units.units_on_node(node, lambda info: self.priorities(info.pod) < preemptor_priority,
                                               groups, self.priorities)
        for unit in potential:
            if unit.is_group:  # its members on other nodes stay put: only this node is simulated
                on_node = on_node if on_node is not None else {info.key for info in node.pods}
                here[id(unit)] = [info for info in unit.pods if info.key in on_node]
            else:  # a lone pod's unit was read off this node
                here[id(unit)] = unit.pods
            status = remove(unit)
            if not is_success(status):
                return [], 0, _as_error(status)
        if not potential:
            return [], 0, Status.unresolvable("No preemption victims found for incoming pod")
        # Affinity of the pod to one of the victims is not considered (upstream's choice, for speed).
        # Filter runs once per unit put back, on hundreds of nodes per attempt: the runner leaves
        # out the plugins that skipped once for this node instead of on every call.
        fits_here = self.handle.filter_runner(state, pod, nominated=True)
        status = fits_here(node)
        if not is_success(status):
            return [], 0, status

        # Then put units back, most important first and PDB-breaking ones before the others, as
        # long as the pod still fits; those that do not fit go. A unit breaks a PDB when one of its
        # pods does, budgets spent in importance order.
        keys = {id(unit): unit.importance_key() for unit in potential}
        potential.sort(key=lambda unit: keys[id(unit)])
        violating: list[victim_units.Unit] = []
        fine = potential
        if pdbs:  # without budgets nothing can break one
            flat = [info for unit in potential for info in unit.pods]
            violating_pods = {id(info) for info in pdb.split_by_violation(flat, pdbs)[0]}
            violating = [u for u in potential if any(id(info) in violating_pods for info in u.pods)]
            fine = [u for u in potential if not any(id(info) in violating_pods for info in u.pods)]
        victims: list[victim_units.Unit] = []

        def reprieve(unit: victim_units.Unit) -> tuple[bool, Status | None]:
            status = add(unit)
            if not is_success(status):
                return False, _as_error(status)
            fits = is_success(fits_here(node))
            if not fits:
                status = remove(unit)
                if not is_success(status):
                    return False, _as_error(status)
                victims.append(unit)
            return fits, None

        num_violating = 0
        for unit in violating:
            fits, error = reprieve(unit)
            if error is not None:
                return [], 0, error
            if not fits:
                num_violating += 1
        for unit in fine:
            _, error = reprieve(unit)
            if error is not None:
                return [], 0, error
        if violating and fine:
            victims.sort(key=lambda unit: keys[id(unit)])
        return [info.pod for unit in victims for info in unit.pods], num_violating, None

    def ordered_score_functions(self, nodes: dict[str, Victims]) -> list[ordering.ScoreFn] | None:
        if not self.priorities.workload_aware:
            return None  # upstream's default criteria
        return ordering.default_score_functions(nodes, self.priorities)  # the same, with groups' priorities


def _as_error(status: Status | None) -> Status:
    """A PreFilter extension's failure while simulating is an error of the dry run, not a verdict."""
    assert status is not None
    return Status.as_error(status.error or RuntimeError(status.message))


def new(args: dict[str, Any], handle: Handle, features: Features) -> DefaultPreemption:
    return DefaultPreemption(args, handle, features)
