"""The PodGroup cycle's side of workload-aware preemption (KEP-5710): "does the group fit if these pods are gone?"

`feasible_without(algorithm, fw, group)` is the `feasible(gone)` callable DefaultPreemption's
`preempt_pod_group` asks (`plugins/default_preemption/pod_group_preemption.py`): it takes the
given pods out of the scheduler cache, tries the whole group on every node with the one group
simulation (`simulation.attempt_in`, the root placement), and puts the pods back before it
returns, so the cache is as it was whatever the answer. `preempt(...)` is what the cycle calls
once the group did not fit: it finds the DefaultPreemption plugin of the profile and runs it.
1.36's topology-aware placement never preempts, so a group with a topology constraint is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler.cycle import Algorithm
from scheduler.framework.pod_group import Placement, PodGroupAssignment, PodGroupInfo
from scheduler.framework.status import Status
from scheduler.plugins import names
from scheduler.plugins.default_preemption import pod_group_preemption
from scheduler.podgroup import simulation
from scheduler.runtime import Framework

Obj = dict[str, Any]
PLACEMENT_LIMITATION = "preemption: not eligible due to placement-based pod group scheduling limitation"
WAITING = pod_group_preemption.WAITING  # how a status that waits for victims begins


def feasible_without(algorithm: Algorithm, fw: Framework, group: PodGroupInfo) -> Any:
    attempt = simulation.attempt_in(algorithm, fw, group)
    cache, snapshot = algorithm.cache, algorithm.snapshot

    def feasible(gone: Sequence[Obj]) -> PodGroupAssignment | None:
        removed: list[tuple[Obj, bool]] = []
        try:
            for pod in gone:
                if cache.has_pod(pod):
                    removed.append((pod, cache.is_assumed(pod)))
                    cache.remove_pod(pod)
            cache.update_snapshot(snapshot)
            tried = attempt(Placement("", list(snapshot.node_infos)))
            return tried.assignment if tried.status is None else None
        finally:
            for pod, assumed in removed:
                # An assumed victim (bound a moment ago, not yet seen) goes back assumed.
                (cache.assume_pod if assumed else cache.add_pod)(pod)
            cache.update_snapshot(snapshot)

    return feasible


async def preempt(algorithm: Algorithm, fw: Framework,
                  group: PodGroupInfo) -> tuple[PodGroupAssignment | None, Status | None]:
    """(nominations, status) for a group that did not fit; (None, None) when the profile has no
    DefaultPreemption or workload-aware preemption is off (the group is just unschedulable)."""
    plugin = fw.plugins.get(names.DEFAULT_PREEMPTION)
    if plugin is None or not getattr(plugin, "workload_aware", False):
        return None, None
    if group.topology_key:
        return None, Status.unschedulable(PLACEMENT_LIMITATION)
    result: tuple[PodGroupAssignment | None, Status | None] = await plugin.preempt_pod_group(
        group, feasible_without(algorithm, fw, group))
    return result
