"""One scheduling attempt for one pod, on the snapshot: find the nodes that fit, score them, pick one,
then Reserve and Permit (upstream's schedulingCycle and schedulePod).

Filtering checks nodes from a start index that rotates from pod to pod and stops once enough
feasible nodes are found (upstream's adaptive percentageOfNodesToScore: all nodes below 100, else
50% minus 1% per 125 nodes, at least 5% and at least 100 nodes). A nominated node (from an earlier
preemption) is tried first. When nothing fits, PostFilter (preemption) runs and the failure carries
upstream's FitError message: `0/8 nodes are available: 3 Insufficient cpu, 5 node(s) had
untolerated taint(s). preemption: ...`. `scheduler.py` runs it and hands the outcome to
`binding.py` (success) or to its failure handler.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler.cache import Cache
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import QueuedPodInfo
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.status import Code, Status
from scheduler.runtime import Diagnosis, Framework

Obj = dict[str, Any]
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
BATCH_FLOOR = 32  # the fewest nodes one Filter batch holds


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """Upstream's FitError.Error(): "0/X nodes are available: <PreFilter>. <Filter>. <PostFilter>".

    The Filter part counts each reason over the rejected nodes, the nodes a PreFilterResult left
    out counting with its absent-node reason, and sorts the "<count> <reason>" strings as Go's
    sort.Strings does. The PostFilter message is appended as it is (it brings its own period).
    """
    message = f"0/{num_all_nodes} nodes are available:"
    if diagnosis.pre_filter_msg:
        message += f" {diagnosis.pre_filter_msg}."
    else:
        counts: Counter[str] = Counter()
        statuses = diagnosis.node_to_status.statuses
        for status in statuses.values():
            for reason in status.reasons:
                counts[reason] += 1
        absent = diagnosis.node_to_status.absent
        if absent is not None and len(statuses) < num_all_nodes:
            for reason in absent.reasons:
                counts[reason] += num_all_nodes - len(statuses)
        histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
        if histogram:
            message += f" {', '.join(histogram)}."
    if diagnosis.post_filter_msg:
        message += f" {diagnosis.post_filter_msg}"
    return message


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage <= 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


class FitError(Exception):
    def __init__(self, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        return fit_error_message(self.num_all_nodes, self.diagnosis)


class SchedulingError(Exception):
    """A plugin failed with ERROR (or some other internal failure): retried after backoff."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


@dataclass
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


@dataclass
class Outcome:
    """How an attempt ended. `status` None: a node was chosen (and maybe a Permit wait is on)."""

    status: Status | None
    host: str = ""
    assumed_pod: Obj | None = None
    # None: leave status.nominatedNodeName as it is; "": clear it; a name: nominate that node.
    nominated_node: str | None = ""
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    evaluated_nodes: int = 0
    feasible_nodes: int = 0

    @property
    def message(self) -> str:
        return self.status.message if self.status is not None else ""


class Algorithm:
    """What persists between attempts: the rotating start index of the node search."""

    def __init__(self, cache: Cache, snapshot: Snapshot, nominator: Any = None) -> None:
        self.cache = cache
        self.snapshot = snapshot
        self.nominator = nominator
        self.next_start_node_index = 0

    # -- schedulePod ---------------------------------------------------------------------------

    def schedule_pod(self, fw: Framework, state: CycleState, pod: Obj) -> ScheduleResult:
        """The chosen node; raises FitError (nothing fits) or SchedulingError."""
        self.cache.update_snapshot(self.snapshot)
        if len(self.snapshot) == 0:
            raise SchedulingError(Status.unresolvable(NO_NODES_AVAILABLE))
        feasible, diagnosis = self.find_nodes_that_fit(fw, state, pod)
        if not feasible:
            raise FitError(len(self.snapshot), diagnosis)
        evaluated = len(feasible) + len(diagnosis.node_to_status.statuses)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1)
        totals = self.prioritize(fw, state, pod, feasible)
        return ScheduleResult(select_host(totals), evaluated, len(feasible))

    def find_nodes_that_fit(self, fw: Framework, state: CycleState, pod: Obj) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        all_nodes = self.snapshot.node_infos
        result, status, plugins = fw.run_pre_filter_plugins(state, pod, all_nodes)
        diagnosis.unschedulable_plugins = set(plugins)
        if status is not None and status.code is not Code.SUCCESS:
            if not status.rejected:
                raise SchedulingError(status)
            diagnosis.node_to_status.absent = status
            diagnosis.pre_filter_msg = status.message
            diagnosis.add_plugin_status(status)
            return [], diagnosis
        nominated = (pod.get("status") or {}).get("nominatedNodeName", "")
        if nominated:
            info = self.snapshot.get(nominated)
            if info is not None:
                feasible = []
                self._pass_filters(fw, state, pod, Diagnosis(), [info], feasible)
                if feasible:
                    return feasible, diagnosis
        nodes: Sequence[NodeInfo] = all_nodes
        if result is not None and result.node_names is not None:
            nodes = [n for n in (self.snapshot.get(name) for name in sorted(result.node_names)) if n is not None]
            diagnosis.node_to_status.absent = Status.unresolvable(
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]")
        feasible: list[NodeInfo] = []
        try:
            self._pass_filters(fw, state, pod, diagnosis, nodes, feasible)
        finally:
            # Always move on, errors included, so every node gets its turn to be looked at first.
            processed = len(feasible) + len(diagnosis.node_to_status.statuses)
            if all_nodes:
                self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        return feasible, diagnosis

    def _pass_filters(self, fw: Framework, state: CycleState, pod: Obj, diagnosis: Diagnosis,
                      nodes: Sequence[NodeInfo], feasible: list[NodeInfo]) -> None:
        """Fill `feasible` (rejections go to `diagnosis`); raises SchedulingError on a plugin error."""
        count = len(nodes)
        if not count:
            return
        to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, count)
        if not fw.score_plugins:
            to_find = 1
        start = self.next_start_node_index
        if not fw.filter_plugins:
            feasible.extend(nodes[(start + i) % count] for i in range(to_find))
            return
        nominated = self.nominator is not None and bool(self.nominator)
        batch = fw.filter_nodes_runner(state, pod, nominated=nominated)
        if batch is not None:
            self._pass_filters_in_batches(batch, diagnosis, nodes, start, to_find, feasible)
            return
        run = fw.filter_runner(state, pod, nominated=nominated)
        statuses = diagnosis.node_to_status.statuses
        for i in range(count):
            info = nodes[(start + i) % count]
            status = run(info)
            if status is None or status.code is Code.SUCCESS:
                feasible.append(info)
                if len(feasible) >= to_find:
                    break
            elif not status.rejected:
                raise SchedulingError(status)
            else:
                statuses[info.name] = status
                diagnosis.add_plugin_status(status)

    @staticmethod
    def _pass_filters_in_batches(batch: Any, diagnosis: Diagnosis, nodes: Sequence[NodeInfo], start: int,
                                 to_find: int, feasible: list[NodeInfo]) -> None:
        """`_pass_filters` through `Framework.filter_nodes_runner`, a batch of nodes at a time.

        Each batch is as many nodes as feasible ones are still missing (at least BATCH_FLOOR, so a
        cluster that rejects most nodes is not filtered one node per call), and the answers are
        taken in node order up to the one that completes `to_find` or the first error: the
        nodes recorded, and so where the next pod's search starts, are those the node-by-node
        loop would record. The answers past that point are dropped (Filter has no side effects).
        """
        count = len(nodes)
        statuses = diagnosis.node_to_status.statuses
        done = 0
        while done < count:
            size = min(max(to_find - len(feasible), BATCH_FLOOR), count - done)
            first = (start + done) % count
            chunk = list(nodes[first:first + size])
            if len(chunk) < size:
                chunk += nodes[:size - len(chunk)]  # past the end: wrap around to the start
            done += size
            answers = batch(chunk)
            if answers.count(None) == size:  # the usual batch: every node fits
                feasible.extend(chunk[:to_find - len(feasible)])
                if len(feasible) >= to_find:
                    return
                continue
            for info, status in zip(chunk, answers):
                if status is None:
                    feasible.append(info)
                    if len(feasible) >= to_find:
                        return
                elif not status.rejected:
                    raise SchedulingError(status)
                else:
                    statuses[info.name] = status
                    diagnosis.add_plugin_status(status)

    def prioritize(self, fw: Framework, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> dict[str, int]:
        if not fw.score_plugins:
            return {n.name: 1 for n in nodes}
        status = fw.run_pre_score_plugins(state, pod, nodes)
        if status is not None:
            raise SchedulingError(status)
        totals, status = fw.run_score_plugins(state, pod, nodes)
        if status is not None:
            raise SchedulingError(status)
        return totals

    # -- schedulingCycle -----------------------------------------------------------------------

    async def scheduling_cycle(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo) -> Outcome:
        pod = qpi.pod
        try:
            result = self.schedule_pod(fw, state, pod)
        except SchedulingError as exc:
            status = exc.status
            return Outcome(status)
        except FitError as fit:
            diagnosis = fit.diagnosis
            nominated: str | None = ""
            if fw.post_filter_plugins:
                post, status = await fw.run_post_filter_plugins(state, pod, diagnosis.node_to_status)
                diagnosis.post_filter_msg = status.message if status is not None else ""
                nominated = post.nominated_node_name if post is not None else None
            return Outcome(Status.unschedulable(str(fit)), nominated_node=nominated,
                           unschedulable_plugins=set(diagnosis.unschedulable_plugins),
                           pending_plugins=set(diagnosis.pending_plugins))
        host = result.suggested_host
        assumed, status = self.assume_and_reserve(fw, state, pod, host)
        if assumed is None:
            assert status is not None
            return Outcome(status)
        if status is not None:
            return self._rejected_on_host(status, host, assumed)
        status = fw.run_permit_plugins(state, assumed, host)
        if status is not None and status.code is not Code.WAIT:
            fw.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            return self._rejected_on_host(status, host, assumed)
        return Outcome(None, host=host, assumed_pod=assumed, evaluated_nodes=result.evaluated_nodes,
                       feasible_nodes=result.feasible_nodes)

    def assume_and_reserve(self, fw: Framework, state: CycleState, pod: Obj,
                           host: str) -> tuple[Obj | None, Status | None]:
        """Assume `pod` on `host` in the cache and run Reserve (undone again if a plugin refuses).

        (assumed, None): held; (assumed, status): Reserve refused and the pod is forgotten again;
        (None, error): the cache would not take it. The pod cycle and the PodGroup cycle share it.
        """
        assumed = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": host}}
        try:
            self.cache.assume_pod(assumed)
        except ValueError as exc:
            return None, Status.as_error(exc)
        if self.nominator is not None:
            self.nominator.delete(assumed)
        status = fw.run_reserve_plugins_reserve(state, assumed, host)
        if status is not None:
            fw.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
        return assumed, status

    @staticmethod
    def _rejected_on_host(status: Status, host: str, assumed: Obj) -> Outcome:
        if not status.rejected:
            return Outcome(status, assumed_pod=assumed)
        return rejected_on_one_node(status, host, assumed)


def rejected_on_one_node(status: Status, host: str, assumed: Obj | None = None) -> Outcome:
    """Reserve, Permit or WaitOnPermit turned the chosen node down: a FitError over that one node."""
    diagnosis = Diagnosis()
    diagnosis.node_to_status.statuses[host] = status
    diagnosis.add_plugin_status(status)
    return Outcome(Status(status.code, [fit_error_message(1, diagnosis)], plugin=status.plugin),
                   assumed_pod=assumed, unschedulable_plugins=set(diagnosis.unschedulable_plugins),
                   pending_plugins=set(diagnosis.pending_plugins))


def select_host(totals: dict[str, int]) -> str:
    """The highest total; a tie is broken at random, so equal nodes share the load."""
    best = max(totals.values())
    return random.choice([name for name, score in totals.items() if score == best])
