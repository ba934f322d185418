"""NodePorts: host-port conflicts with upstream's 0.0.0.0 wildcard rule, Skip, and the hints."""

from __future__ import annotations

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, QueueingHint, Resource
from scheduler.framework.status import Code
from scheduler.plugins import node_ports
from tests.scheduler import fakes


def with_ports(name: str, *ports: tuple[str, str, int], node_name: str = "") -> dict:
    listed = [{"containerPort": p, "hostPort": p, **({"hostIP": ip} if ip else {}), **({"protocol": proto} if proto else {})}
              for ip, proto, p in ports]
    pod = fakes.pod(name, node_name=node_name)
    pod["spec"]["containers"][0]["ports"] = listed
    return pod


CASES = [
    ("A free port fits", [("", "", 8080)], [("", "", 9090)], None),
    ("The same port and protocol on all addresses conflicts", [("", "", 8080)], [("", "", 8080)], "conflict"),
    ("The same port over another protocol is free", [("", "UDP", 8080)], [("", "TCP", 8080)], None),
    ("A wildcard request conflicts with any address holding the port", [("0.0.0.0", "TCP", 8080)],
     [("10.0.0.1", "TCP", 8080)], "conflict"),
    ("A specific address conflicts with the wildcard holding the port", [("10.0.0.1", "TCP", 8080)],
     [("", "TCP", 8080)], "conflict"),
    ("Two different specific addresses share a port", [("10.0.0.2", "TCP", 8080)], [("10.0.0.1", "TCP", 8080)], None),
    ("The same specific address conflicts", [("10.0.0.1", "TCP", 8080)], [("10.0.0.1", "TCP", 8080)], "conflict"),
]


@pytest.mark.parametrize("case, wanted, used, outcome", CASES, ids=[c[0] for c in CASES])
def test_filter(case: str, wanted: list, used: list, outcome: str | None) -> None:
    handle = fakes.FakeHandle([fakes.node("n1")], [with_ports("holder", *used, node_name="n1")])
    plugin = node_ports.new({}, handle, {})
    pod, state = with_ports("p", *wanted), CycleState()
    assert plugin.pre_filter(state, pod, handle.snapshot.node_infos) == (None, None)
    status = plugin.filter(state, pod, handle.snapshot.get("n1"))
    if outcome is None:
        assert status is None
    else:
        # Plain Unschedulable: preempting the holder frees the port.
        assert status is not None and status.code is Code.UNSCHEDULABLE
        assert status.reasons == ["node(s) didn't have free ports for the requested pod ports"]


def test_pre_filter_skips_a_pod_without_host_ports() -> None:
    pod = fakes.pod("p")
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    _, status = node_ports.new({}, fakes.FakeHandle(), {}).pre_filter(CycleState(), pod, [])
    assert status is not None and status.code is Code.SKIP


def test_a_sidecar_init_containers_host_port_counts_and_a_plain_init_containers_does_not() -> None:
    pod = fakes.pod("p", spec={"initContainers": [
        {"name": "side", "image": "x", "restartPolicy": "Always", "ports": [{"containerPort": 1, "hostPort": 1}]},
        {"name": "once", "image": "x", "ports": [{"containerPort": 2, "hostPort": 2}]}]})
    assert node_ports.host_ports(pod) == [("0.0.0.0", "TCP", 1)]


DELETE_CASES = [
    ("Deleting an assigned pod holding the port queues the pod", with_ports("old", ("", "", 8080), node_name="n1"),
     QueueingHint.QUEUE),
    ("Deleting an assigned pod holding other ports skips the pod", with_ports("old", ("", "", 9090), node_name="n1"),
     QueueingHint.SKIP),
    ("Deleting an unscheduled pod skips the pod", with_ports("old", ("", "", 8080)), QueueingHint.SKIP),
    ("Deleting an assigned pod without host ports skips the pod", fakes.pod("old", node_name="n1"), QueueingHint.SKIP),
]


@pytest.mark.parametrize("case, deleted, hint", DELETE_CASES, ids=[c[0] for c in DELETE_CASES])
def test_pod_deleted_hint(case: str, deleted: dict, hint: QueueingHint) -> None:
    pod_event, node_event = node_ports.new({}, fakes.FakeHandle(), {}).events_to_register()
    assert pod_event.event.resource is Resource.POD and pod_event.event.action == ActionType.DELETE
    assert node_event.event.resource is Resource.NODE and node_event.event.action == ActionType.ADD
    assert node_event.hint is None  # an added node always queues
    assert pod_event.hint(with_ports("p", ("", "", 8080)), deleted, None) is hint
