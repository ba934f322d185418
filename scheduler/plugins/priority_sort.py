"""PrioritySort: the QueueSort plugin. Higher `spec.priority` first; equal priority, earlier first.

"Earlier" is the time the pod last entered the queue (QueuedPodInfo.timestamp), as upstream's.
"""

from __future__ import annotations

from typing import Any

from scheduler.framework.interfaces import Features, Handle, QueuedPodInfo
from scheduler.plugins import names


class PrioritySort:
    name = names.PRIORITY_SORT

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod_info.priority, b.pod_info.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def new(args: dict[str, Any], handle: Handle, features: Features) -> PrioritySort:
    return PrioritySort()
