"""One try of a whole PodGroup inside one placement: each pending pod filtered, scored and assumed
on the placement's nodes only (the root placement, all nodes, through the usual sampled node
search), then every assumption reverted (upstream's podGroupSchedulingDefaultAlgorithm with
assumeAndReserve / unreserveAndForget).

`attempt_in(algorithm, fw, group)` gives the `attempt(placement)` callable `placement.choose`
takes. Pods go in the group's order; a pod that fits no node is recorded and the next is tried; a
gang stops early once placed + remaining cannot reach the minCount it still needs. The group is
feasible when a gang placed at least that many (a basic group: at least one). Pods are assumed in
the scheduler cache (and Reserve runs) so later pods see them, and released before returning: the
cycle commits the winning placement's assignment itself. Called by the PodGroup cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scheduler.cycle import Algorithm, FitError, SchedulingError, select_host
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import NodeInfo, pod_key
from scheduler.framework.pod_group import GANG, Placement, PodGroupAssignment, PodGroupInfo
from scheduler.framework.status import Code, Status
from scheduler.podgroup import placement as placements
from scheduler.runtime import Diagnosis, Framework

Obj = dict[str, Any]
GROUP_UNSCHEDULABLE = placements.GROUP_UNSCHEDULABLE


@dataclass
class PodResult:
    pod: Obj
    host: str  # "" when the pod fit no node of the placement
    status: Status | None
    plugins: set[str] = field(default_factory=set)  # the plugins that turned it away (queue hints)
    reasons: list[str] = field(default_factory=list)  # why, without node counts ("Insufficient cpu")


def attempt_in(algorithm: Algorithm, fw: Framework,
               group: PodGroupInfo) -> Callable[[Placement], placements.Attempt[list[PodResult]]]:
    need = placements.needed(group, algorithm.snapshot.node_infos)
    if group.policy != GANG:
        need = 1

    def attempt(where: Placement) -> placements.Attempt[list[PodResult]]:
        # The root placement is the whole cluster: each pod goes through the usual node search,
        # which stops once enough feasible nodes are found (percentageOfNodesToScore), as
        # upstream's group cycle runs schedulePod per pod. A domain is tried whole.
        whole = not where.name and len(where.nodes) == len(algorithm.snapshot)
        names = None if whole else [n.name for n in where.nodes]
        results: list[PodResult] = []
        undo: list[Callable[[], None]] = []
        placed = 0
        try:
            for i, pod in enumerate(group.pods):
                if group.policy == GANG and placed + len(group.pods) - i < need:
                    break  # upstream's PlacementFeasible: the rest cannot make up the minimum
                result, revert = _one(algorithm, fw, pod, names)
                results.append(result)
                placed += bool(result.host)
                if result.status is not None and result.status.code is Code.ERROR:
                    return placements.Attempt(result.status, PodGroupAssignment(), results)
                if revert is not None:
                    undo.append(revert)
        finally:
            for revert in reversed(undo):
                revert()
        assignment = PodGroupAssignment({pod_key(r.pod): r.host for r in results if r.host})
        if len(assignment.pod_to_node) >= need:
            return placements.Attempt(None, assignment, results)
        return placements.Attempt(_unschedulable(results, need), assignment, results)

    return attempt


def _one(algorithm: Algorithm, fw: Framework, pod: Obj,
         names: list[str] | None) -> tuple[PodResult, Callable[[], None] | None]:
    cache, snapshot = algorithm.cache, algorithm.snapshot
    state = CycleState()
    try:
        if names is None:
            host = algorithm.schedule_pod(fw, state, pod).suggested_host  # updates the snapshot itself
        else:
            cache.update_snapshot(snapshot)
            nodes = [info for info in (snapshot.get(name) for name in names) if info is not None]
            host = pick(algorithm, fw, state, pod, nodes)
    except FitError as fit:
        plugins = fit.diagnosis.unschedulable_plugins | fit.diagnosis.pending_plugins
        return PodResult(pod, "", Status.unschedulable(str(fit)), set(plugins), _reasons(fit)), None
    except SchedulingError as failed:
        return PodResult(pod, "", failed.status), None
    assumed = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": host}}
    try:
        cache.assume_pod(assumed)
    except ValueError as exc:
        return PodResult(pod, "", Status.as_error(exc)), None
    status = fw.run_reserve_plugins_reserve(state, assumed, host)

    def revert() -> None:
        fw.run_reserve_plugins_unreserve(state, assumed, host)
        cache.forget_pod(assumed)
        cache.update_snapshot(snapshot)

    if status is not None:
        revert()
        return PodResult(pod, "", status, {status.plugin} if status.plugin else set()), None
    return PodResult(pod, host, None), revert


def pick(algorithm: Algorithm, fw: Framework, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> str:
    """Filter and score `pod` over `nodes` alone (no sampling: a domain is tried whole)."""
    diagnosis = Diagnosis()
    result, status, plugins = fw.run_pre_filter_plugins(state, pod, nodes)
    diagnosis.unschedulable_plugins = set(plugins)
    if status is not None and status.code is not Code.SUCCESS:
        if not status.rejected:
            raise SchedulingError(status)
        diagnosis.node_to_status.absent = status
        diagnosis.pre_filter_msg = status.message
        raise FitError(len(nodes), diagnosis)
    if result is not None and result.node_names is not None:
        nodes = [n for n in nodes if n.name in result.node_names]
    run = fw.filter_runner(state, pod)
    feasible = []
    for info in nodes:
        verdict = run(info)
        if verdict is None or verdict.code is Code.SUCCESS:
            feasible.append(info)
        elif not verdict.rejected:
            raise SchedulingError(verdict)
        else:
            diagnosis.node_to_status.statuses[info.name] = verdict
            diagnosis.add_plugin_status(verdict)
    if not feasible:
        raise FitError(len(nodes), diagnosis)
    if len(feasible) == 1:
        return feasible[0].name
    return select_host(algorithm.prioritize(fw, state, pod, feasible))


def _reasons(fit: FitError) -> list[str]:
    diagnosis = fit.diagnosis
    if diagnosis.pre_filter_msg:
        return [diagnosis.pre_filter_msg]
    found = {reason for status in diagnosis.node_to_status.statuses.values() for reason in status.reasons}
    return sorted(found)


def _unschedulable(results: list[PodResult], need: int) -> Status:
    """Upstream's group status text, then what `kubectl describe podgroup` should say at a glance
    ("needs 64, 60 fit: 4 pods Insufficient gpu.nvidia.com") and the first failing pod's FitError."""
    placed = sum(1 for r in results if r.host)
    failed = next((r for r in results if r.status is not None), None)
    detail = f"needs {need}, {placed} fit"
    if failed is not None:
        assert failed.status is not None
        why = ", ".join(failed.reasons) or failed.status.message
        detail += f": {need - placed} pods {why}"
        if failed.reasons:
            detail += f"; {failed.status.message}"
    return Status.unschedulable(f"{GROUP_UNSCHEDULABLE}: {detail}")

