"""The generic preemption flow, upstream's preemption.Evaluator, apart from any one plugin's rules.

`Evaluator.preempt` checks that the pod may preempt, dry-runs victim selection on a clone of each
node the filters rejected as Unschedulable (starting at a random offset, stopping once enough
candidates are found), picks the best candidate (`ordering.pick_one_node`) and hands it to the
`Executor`. What counts as a victim, how many candidates to look for and who may preempt are the
`Strategy`'s (the DefaultPreemption plugin, `plugin.py`), as upstream's preemption.Interface is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from client.resources import PODDISRUPTIONBUDGETS, PODS
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Handle, NodeToStatus, PostFilterResult
from scheduler.framework.node_info import NodeInfo, pod_key
from scheduler.framework.status import Code, Status, code_of, is_success
from scheduler.plugins.default_preemption import ordering
from scheduler.plugins.default_preemption.executor import Executor
from scheduler.plugins.default_preemption.ordering import Victims

Obj = dict[str, Any]
NOT_HELPFUL = "Preemption is not helpful for scheduling"


class Strategy(Protocol):
    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def eligible_to_preempt_others(self, pod: Obj, nominated_node_status: Status | None) -> tuple[bool, str]: ...

    def select_victims_on_node(self, state: CycleState, pod: Obj, node: NodeInfo,
                               pdbs: Sequence[Obj]) -> tuple[list[Obj], int, Status | None]: ...

    def ordered_score_functions(self, nodes: dict[str, Victims]) -> list[ordering.ScoreFn] | None: ...


def fit_error_message(num_all_nodes: int, statuses: NodeToStatus) -> str:
    """FitError.Error() for a diagnosis with only node statuses: `0/N nodes are available: <k reason>, …`."""
    reasons: Counter[str] = Counter()
    for status in statuses.statuses.values():
        if status is not None:
            reasons.update(status.reasons)
    missing = num_all_nodes - len(statuses.statuses)
    if missing > 0 and statuses.absent is not None:
        for reason in statuses.absent.reasons:
            reasons[reason] += missing
    message = f"0/{num_all_nodes} nodes are available:"
    histogram = sorted(f"{count} {reason}" for reason, count in reasons.items())
    if histogram:
        message += f" {', '.join(histogram)}."
    return message


class Evaluator:
    def __init__(self, plugin_name: str, handle: Handle, strategy: Strategy, executor: Executor,
                 async_preemption: bool) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.strategy = strategy
        self.executor = executor
        self.async_preemption = async_preemption

    async def preempt(self, state: CycleState, pod: Obj,
                      statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        """PostFilterResult and Status as upstream's Preempt answers them:
        (None, Error) a transient failure; (None, Unschedulable) the pod may not preempt now; both
        keep the pod's nomination. (result "", Unschedulable) preemption cannot help: clear it.
        (result node, None) the victims are on their way out and the pod is nominated to node."""
        # The informer's copy is newer than the one the cycle started with (its nomination).
        pod = self.handle.store(PODS).get(pod_key(pod)) or pod
        nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
        ok, reason = self.strategy.eligible_to_preempt_others(pod, statuses.get(nominated) if nominated else None)
        if not ok:
            return None, Status.unschedulable(reason)

        all_nodes = list(self.handle.snapshot)
        if not all_nodes:
            return None, Status.as_error("no nodes available")
        candidates, node_statuses, errs = self._find_candidates(state, pod, all_nodes, statuses)
        if errs and not candidates:
            return None, Status.as_error(errs[0] if len(errs) == 1 else ExceptionGroup("preemption", errs))
        if not candidates:
            node_statuses.absent = Status.unresolvable(NOT_HELPFUL)
            return PostFilterResult(""), Status.unschedulable(fit_error_message(len(all_nodes), node_statuses))

        best = self.select_candidate(candidates)
        if not best:
            return None, Status.unschedulable("no candidate node for preemption")
        victims = candidates[best].pods
        if self.async_preemption:
            self.executor.prepare_async(best, victims, pod, self.plugin_name)
        else:
            status = await self.executor.prepare(best, victims, pod, self.plugin_name)
            if not is_success(status):
                return None, status
        return PostFilterResult(best), None

    def _find_candidates(self, state: CycleState, pod: Obj, all_nodes: list[NodeInfo],
                         statuses: NodeToStatus) -> tuple[dict[str, Victims], NodeToStatus, list[BaseException]]:
        # Only nodes a filter rejected as Unschedulable can be helped by removing pods from them.
        potential = [n for n in all_nodes if code_of(statuses.get(n.name)) is Code.UNSCHEDULABLE]
        if not potential:
            return {}, NodeToStatus(absent=Status.unresolvable()), []
        pdbs = self.handle.store(PODDISRUPTIONBUDGETS).list()
        offset, wanted = self.strategy.offset_and_num_candidates(len(potential))
        return self.dry_run(state, pod, potential, pdbs, offset, wanted)

    def dry_run(self, state: CycleState, pod: Obj, potential: list[NodeInfo], pdbs: Sequence[Obj], offset: int,
                wanted: int) -> tuple[dict[str, Victims], NodeToStatus, list[BaseException]]:
        """Victims per node for up to `wanted` nodes, PDB-respecting nodes first; stops early once
        there are `wanted` candidates and at least one respects every PDB (DryRunPreemption)."""
        fine: dict[str, Victims] = {}
        violating: dict[str, Victims] = {}
        node_statuses = NodeToStatus(absent=Status.unresolvable())
        errs: list[BaseException] = []
        for i in range(len(potential)):
            node = potential[(offset + i) % len(potential)].clone()
            pods, violations, status = self.strategy.select_victims_on_node(state.clone(), pod, node, pdbs)
            if is_success(status) and pods:
                target = fine if violations == 0 else violating
                if len(target) < wanted:
                    target[node.name] = Victims(pods, violations)
                if fine and len(fine) + len(violating) >= wanted:
                    break
                continue
            if is_success(status):
                status = Status.as_error(f"expected at least one victim pod on node {node.name!r}")
            assert status is not None
            if status.code is Code.ERROR:
                errs.append(status.error or RuntimeError(status.message))
            node_statuses.statuses[node.name] = status
        return {**fine, **violating}, node_statuses, errs

    def select_candidate(self, candidates: dict[str, Victims]) -> str:
        if len(candidates) <= 1:
            return next(iter(candidates), "")
        return ordering.pick_one_node(candidates, self.strategy.ordered_score_functions(candidates))
