"""PrioritySort: the QueueSort plugin. Higher `spec.priority` first; equal priority, earlier first.

"Earlier" is the time the pod last entered the queue (QueuedPodInfo.timestamp), as upstream's.
Under WorkloadAwarePreemption a pod of a PodGroup sorts by its group's priority
(`framework/pod_priority.py`).
"""

from __future__ import annotations

from typing import Any

from scheduler.framework import pod_priority
from scheduler.framework.interfaces import Features, Handle, QueuedPodInfo
from scheduler.plugins import names


class PrioritySort:
    name = names.PRIORITY_SORT

    def __init__(self, priorities: pod_priority.Priorities | None = None) -> None:
        self.priorities = priorities if priorities is not None and priorities.workload_aware else None

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if self.priorities is None:
            pa, pb = a.pod_info.priority, b.pod_info.priority
        else:
            pa, pb = self.priorities(a.pod_info.pod), self.priorities(b.pod_info.pod)
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def new(args: dict[str, Any], handle: Handle, features: Features) -> PrioritySort:
    return PrioritySort(pod_priority.for_plugin(handle, features))
