"""A pod's priority as the scheduler reads it: its PodGroup's, under workload-aware preemption.

With `WorkloadAwarePreemption` (KEP-5710) the priority of a pod that belongs to a PodGroup is the
group's `spec.priority` (0 when the group has none, as upstream's util.PodGroupPriority), whatever
the pod's own says; a pod whose group is not known yet keeps its own. Without the gate, or for a
pod outside any group, it is `spec.priority` (0 when unset, corev1helpers.PodPriority).
`Priorities` is built once per plugin from the PodGroup informer (None: the gate is off) and
called wherever a priority is compared: PrioritySort, DefaultPreemption (victims, candidate
ordering, nominations).
"""

from __future__ import annotations

from typing import Any

from client import cache
from client.resources import PODGROUPS

Obj = dict[str, Any]
GATE = "WorkloadAwarePreemption"


def own(pod: Obj) -> int:
    value = (pod.get("spec") or {}).get("priority")
    return int(value) if value is not None else 0


def group_name(pod: Obj) -> str:
    """spec.schedulingGroup.podGroupName, "" for a pod outside any group."""
    return ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") or ""


def group_of(pod: Obj, pod_groups: cache.Store) -> Obj | None:
    """The PodGroup the pod belongs to, None when it names none or the group is not in the store."""
    name = group_name(pod)
    if not name:
        return None
    return pod_groups.get(f"{(pod.get('metadata') or {}).get('namespace', '')}/{name}")


def group_priority(pod_group: Obj) -> int:
    value = (pod_group.get("spec") or {}).get("priority")
    return int(value) if value is not None else 0


class Priorities:
    """Callable: pod -> the priority the scheduler uses for it."""

    __slots__ = ("pod_groups",)

    def __init__(self, pod_groups: cache.Store | None) -> None:
        self.pod_groups = pod_groups

    @property
    def workload_aware(self) -> bool:
        return self.pod_groups is not None

    def __call__(self, pod: Obj) -> int:
        # Called on every comparison of the queue's heap (a dozen per pop of thousands of pods),
        # so the lookups of own / group_of / group_priority are written out once here.
        spec = pod.get("spec") or {}
        groups = self.pod_groups
        if groups is not None:
            name = (spec.get("schedulingGroup") or {}).get("podGroupName")
            if name:
                found = groups.get(f"{(pod.get('metadata') or {}).get('namespace', '')}/{name}")
                if found is not None:
                    value = (found.get("spec") or {}).get("priority")
                    return int(value) if value is not None else 0
        value = spec.get("priority")
        return int(value) if value is not None else 0


def for_plugin(handle: Any, features: Any) -> Priorities:
    """A plugin's view: workload-aware when both GenericWorkload and WorkloadAwarePreemption are on."""
    if features.get("GenericWorkload", False) and features.get(GATE, False):
        return Priorities(handle.store(PODGROUPS))
    return Priorities(None)
