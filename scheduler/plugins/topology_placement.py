"""TopologyPlacementGenerator: one candidate placement per value of the group's topology label.

KEP-5732 (gate TopologyAwareWorkloadScheduling). For `spec.schedulingConstraints.topology[0].key`
each parent placement splits by that node label's values among its nodes, each child's
NodeSelector the parent's terms ANDed with `key In [value]`; once pods of the group are on nodes,
only their domain is offered. No constraint: None (the cycle keeps the root placement); no node
with the label: Unschedulable with upstream's text. The PodGroup cycle calls it (placementGenerate).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Features, Handle
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.pod_group import Placement, PodGroupInfo
from scheduler.framework.status import Status
from scheduler.plugins import names, pod_group_members

Obj = dict[str, Any]


def child_selector(parent: Obj | None, key: str, value: str) -> Obj:
    """The parent's NodeSelector narrowed to `key In [value]`: terms are ORed, so the requirement
    joins every term (a parent without terms matches every node, so the child is the one term)."""
    requirement = {"key": key, "operator": "In", "values": [value]}
    terms = copy.deepcopy((parent or {}).get("nodeSelectorTerms") or [])
    if not terms:
        return {"nodeSelectorTerms": [{"matchExpressions": [requirement]}]}
    for term in terms:
        term["matchExpressions"] = [*(term.get("matchExpressions") or []), dict(requirement)]
    return {"nodeSelectorTerms": terms}


class TopologyPlacement:
    name = names.TOPOLOGY_PLACEMENT

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def generate_placements(self, state: CycleState, group: PodGroupInfo,
                            parents: Sequence[Placement]) -> tuple[list[Placement] | None, Status | None]:
        key = group.topology_key
        constraints = ((group.pod_group.get("spec") or {}).get("schedulingConstraints") or {}).get("topology")
        if not constraints:
            return None, None
        if not key:
            return None, Status.as_error("topology constraint key cannot be empty")
        required, status = self._required_domain(group, key)
        if status is not None:
            return None, status
        children: list[Placement] = []
        for parent in parents:
            by_value: dict[str, list[NodeInfo]] = {}
            for node in parent.nodes:
                value = node.labels.get(key)
                if value is None or (required is not None and value != required):
                    continue
                by_value.setdefault(value, []).append(node)
            for value in sorted(by_value):  # sorted: the same cycle tries domains in the same order
                children.append(Placement(name=_name(parent, key, value), nodes=by_value[value],
                                          node_selector=child_selector(parent.node_selector, key, value)))
        if not children:
            return None, Status.unschedulable(f"no nodes found with topology label '{key}'")
        return children, None

    def _required_domain(self, group: PodGroupInfo, key: str) -> tuple[str | None, Status | None]:
        """The domain the group's already-placed pods are in (None when none is placed yet)."""
        meta = group.pod_group.get("metadata") or {}
        domain: str | None = None
        for info, node in pod_group_members.placed(self.handle.snapshot, meta.get("namespace", ""),
                                                    meta.get("name", "")):
            value = node.labels.get(key)
            if value is None:
                return None, Status.as_error(f"cannot determine domain for already scheduled pods: "
                                             f"no topology domain found for pod {info.key}")
            if domain is not None and value != domain:
                return None, Status.as_error(f"cannot determine domain for already scheduled pods: "
                                             f"more than 1 domain found for pod group: {domain}, {value}")
            domain = value
        return domain, None


def _name(parent: Placement, key: str, value: str) -> str:
    own = f"{key}={value}"
    return f"{parent.name}/{own}" if parent.name else own


def new(args: dict[str, Any], handle: Handle, features: Features) -> TopologyPlacement:
    return TopologyPlacement(handle)
