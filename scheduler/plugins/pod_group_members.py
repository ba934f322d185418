"""Which pods of a PodGroup the snapshot already holds on a node (assumed, binding or bound).

A pod belongs to a group by `spec.schedulingGroup.podGroupName` in the group's namespace
(api-1.36.md §1.4). The placement plugins need the group's already-placed pods: TopologyPlacement
keeps the rest of the group in their domain, PodGroupPodsCount counts them (upstream reads both
from the snapshot's PodGroupStates). Called by `topology_placement.py` and `pod_group_pods_count.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scheduler.framework.node_info import NodeInfo, PodInfo

Obj = dict[str, Any]


def group_of(pod: Obj) -> tuple[str, str] | None:
    """(namespace, podGroupName) of the group the pod joins, None for a pod in no group."""
    name = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if not name:
        return None
    return (pod.get("metadata") or {}).get("namespace", ""), name


def placed(nodes: Iterable[NodeInfo], namespace: str, name: str) -> list[tuple[PodInfo, NodeInfo]]:
    """The group's pods on these nodes, each with the node it is on."""
    want = (namespace, name)
    return [(info, node) for node in nodes for info in node.pods if group_of(info.pod) == want]
