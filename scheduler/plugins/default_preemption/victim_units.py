"""Victim units: the pods preemption evicts together (KEP-5710 `disruptionMode`).

A pod is its own unit unless, under workload-aware preemption, it belongs to a PodGroup whose
`spec.disruptionMode` is `PodGroup`: then the unit is every bound pod of that group, on any node,
so the group goes as a whole or not at all. `GroupMembers` indexes the snapshot's bound pods by
such groups once per preemption attempt; `units_on_node` turns a node's preemptible pods into
units; `importance_key` orders units as upstream's moreImportantVictim (priority, then a group
before a lone pod, then a lone pod's start time, a group's size and its earliest start). The
plugin's victim selection (`plugin.py`) removes and reprieves whole units.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from client import cache
from scheduler.framework import pod_priority
from scheduler.framework.node_info import NodeInfo, PodInfo
from scheduler.plugins.default_preemption import ordering

Obj = dict[str, Any]
POD_GROUP_MODE = "PodGroup"


def disrupted_as_a_whole(pod_group: Obj) -> bool:
    """disruptionMode PodGroup (the API defaults it to Pod)."""
    return (pod_group.get("spec") or {}).get("disruptionMode") == POD_GROUP_MODE


def _group_key(pod: Obj) -> str:
    name = pod_priority.group_name(pod)
    return f"{(pod.get('metadata') or {}).get('namespace', '')}/{name}" if name else ""


@dataclass
class Unit:
    """Pods evicted together; `pod_group` is the group for a whole-group unit, None for a lone pod."""

    pods: list[PodInfo]
    priority: int
    pod_group: Obj | None = None

    @property
    def is_group(self) -> bool:
        return self.pod_group is not None

    @functools.cached_property
    def keys(self) -> frozenset[str]:
        """Its pods' keys, which tell one unit from another; made on first use (victim selection on
        one node, the common case, never asks)."""
        return frozenset(info.key for info in self.pods)

    def earliest_start(self) -> float:
        return min(ordering.start_time(info.pod) for info in self.pods)

    def importance_key(self) -> tuple[int, int, int, float]:
        """Most important first: higher priority; a group before a lone pod; among lone pods the one
        running longer; among groups the larger, then the one whose first pod started earlier."""
        if self.is_group:
            return (-self.priority, 0, -len(self.pods), self.earliest_start())
        return (-self.priority, 1, 0, self.earliest_start())


class GroupMembers:
    """The bound pods of every whole-group PodGroup in a snapshot, built on first use."""

    def __init__(self, nodes: Iterable[NodeInfo], pod_groups: cache.Store | None) -> None:
        self._nodes = nodes
        self._pod_groups = pod_groups
        self._members: dict[str, list[PodInfo]] | None = None

    def group_for(self, pod: Obj) -> Obj | None:
        """The pod's PodGroup if it is disrupted as a whole (None without workload-aware preemption)."""
        if self._pod_groups is None:
            return None
        found = pod_priority.group_of(pod, self._pod_groups)
        return found if found is not None and disrupted_as_a_whole(found) else None

    def members(self, group_key: str) -> list[PodInfo]:
        if self._members is None:
            self._members = {}
            for node in self._nodes:
                for info in node.pods:
                    key = _group_key(info.pod)
                    if key and self.group_for(info.pod) is not None:
                        self._members.setdefault(key, []).append(info)
        return self._members.get(group_key, [])


def units_on_node(node: NodeInfo, preemptible: Callable[[PodInfo], bool], groups: GroupMembers,
                  priority_of: ordering.PriorityOf) -> list[Unit]:
    """The units with a preemptible pod on `node`, each once, in the node's pod order."""
    units: list[Unit] = []
    seen: set[str] = set()
    for info in node.pods:
        if not preemptible(info):
            continue
        pod_group = groups.group_for(info.pod)
        if pod_group is None:
            units.append(Unit([info], priority_of(info.pod)))
            continue
        key = _group_key(info.pod)
        if key in seen:
            continue
        seen.add(key)
        members = groups.members(key) or [info]
        units.append(Unit(list(members), pod_priority.group_priority(pod_group), pod_group))
    return units
