"""NodePorts: a pod's host ports must be free on the node.

PreFilter collects the pod's host ports (app containers and restartable init containers, as
upstream's `GetHostPorts`) and answers Skip when there are none. Filter checks each against the
node's used ports with upstream's wildcard rule: a port on 0.0.0.0 conflicts with that protocol
and port on any address, and a port on one address conflicts with the same address or 0.0.0.0.
The rejection is plain Unschedulable, so preemption may free the port. The queue retries a pod
when an assigned pod holding one of its ports is deleted, or a node is added.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle, PreFilterResult
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status
from scheduler.plugins import names

Obj = dict[str, Any]
Port = tuple[str, str, int]  # (host IP, protocol, host port), as NodeInfo.used_ports keys them
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_KEY = "PreFilter" + names.NODE_PORTS
ALL_ADDRESSES = "0.0.0.0"


def host_ports(pod: Obj) -> list[Port]:
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    ports = []
    for container in [*sidecars, *(spec.get("containers") or [])]:
        for port in container.get("ports") or []:
            number = int(port.get("hostPort") or 0)
            if number > 0:
                ports.append((port.get("hostIP") or ALL_ADDRESSES, port.get("protocol") or "TCP", number))
    return ports


def conflicts(port: Port, in_use: Iterable[Port]) -> bool:
    ip, protocol, number = port
    for used_ip, used_protocol, used_number in in_use:
        if used_protocol != protocol or used_number != number:
            continue
        if ip == ALL_ADDRESSES or used_ip in (ALL_ADDRESSES, ip):
            return True
    return False


def fits(wanted: Iterable[Port], in_use: Iterable[Port]) -> bool:
    used = list(in_use)
    return not any(conflicts(p, used) for p in wanted)


class NodePorts:
    name = names.NODE_PORTS

    def __init__(self, queue_hints: bool = True) -> None:
        self.queue_hints = queue_hints

    def pre_filter(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        wanted = host_ports(pod)
        if not wanted:
            return None, Status.skip()
        state.write(PRE_FILTER_KEY, wanted)
        return None, None

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        try:
            wanted = state.read(PRE_FILTER_KEY)
        except KeyError as e:
            return Status.as_error(e)
        if not fits(wanted, node.used_ports):
            return Status.unschedulable(ERR_REASON)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD
        if not self.queue_hints:
            node_actions |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [
            # Host ports are immutable, so only a deletion frees one.
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE), self._after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, node_actions)),
        ]

    def _after_pod_deleted(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        if old is None:
            return QueueingHint.QUEUE
        spec, status = old.get("spec") or {}, old.get("status") or {}
        if not spec.get("nodeName") and not status.get("nominatedNodeName"):
            return QueueingHint.SKIP  # an unscheduled pod held no port
        freed = host_ports(old)
        if not freed or fits(host_ports(pod), freed):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def new(args: dict[str, Any], handle: Handle, features: Features) -> NodePorts:
    return NodePorts(queue_hints=features.get("SchedulerQueueingHints", True))
