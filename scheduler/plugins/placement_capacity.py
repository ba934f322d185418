"""The quick aggregate check that a placement has room for a gang's minCount pods at all.

KEP-5732's early placement rejection: could the domain's free capacity, summed over its nodes,
hold the `need` smallest requests of the group (per resource)? A necessary condition only, so it
never turns down a domain the pod-by-pod simulation would take. Only what NodeResourcesFit checks
on every node is summed (cpu, memory, ephemeral-storage, pod slots): extended resources may be
served by DRA and are left to the simulation. Called by the placement loop (`podgroup/placement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler.framework.node_info import NodeInfo
from scheduler.framework.resources import CPU, EPHEMERAL_STORAGE, MEMORY, pod_requests
from scheduler.framework.status import Status

Obj = dict[str, Any]
_CHECKED = (CPU, MEMORY, EPHEMERAL_STORAGE)


def shortfall(pods: Sequence[Obj], need: int, nodes: Sequence[NodeInfo]) -> Status | None:
    """Unschedulable with "Too many pods" / "Insufficient <resource>" when `nodes` together cannot
    hold any `need` of `pods`; None when they might (the simulation then decides)."""
    if need <= 0:
        return None
    if need > len(pods):
        return Status.unschedulable(f"{len(pods)} pods cannot make a minimum of {need}")
    reasons = []
    slots = sum(max(node.allocatable.allowed_pod_number - len(node.pods), 0) for node in nodes)
    if slots < need:
        reasons.append("Too many pods")
    requests = [pod_requests(pod) for pod in pods]
    for name in _CHECKED:
        smallest = sorted(r.get(name) for r in requests)[:need]
        asked = sum(smallest)
        if asked <= 0:
            continue
        free = sum(max(node.allocatable.get(name) - node.requested.get(name), 0) for node in nodes)
        if asked > free:
            reasons.append(f"Insufficient {name}")
    return Status.unschedulable(*reasons) if reasons else None


def most_that_fit(pods: Sequence[Obj], nodes: Sequence[NodeInfo]) -> int:
    """The largest k such that the k smallest requests of `pods` fit the nodes' summed free room
    (an upper bound on how many the simulation could place; the group's message quotes it)."""
    slots = sum(max(node.allocatable.allowed_pod_number - len(node.pods), 0) for node in nodes)
    most = min(len(pods), slots)
    requests = [pod_requests(pod) for pod in pods]
    for name in _CHECKED:
        free = sum(max(node.allocatable.get(name) - node.requested.get(name), 0) for node in nodes)
        asked = 0
        for count, value in enumerate(sorted(r.get(name) for r in requests)):
            asked += value
            if asked > free:
                most = min(most, count)
                break
    return most
