"""Service endpoints as tables: which pods are in, their conditions, named target ports, the
slice plan (stable placement, 100 per slice, the placeholder) and the Endpoints subsets with the
1000-address truncation.
"""

from __future__ import annotations

from typing import Any

import pytest

from controllers import endpoint_slice_plan, endpoints, service_endpoints


def _svc(name: str = "web", *, ports: list[dict[str, Any]] | None = None, publish: bool = False,
         headless: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"app": "web"}, "ports": ports if ports is not None else
                            [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "web"}]}
    if publish:
        spec["publishNotReadyAddresses"] = True
    if headless:
        spec["clusterIP"] = "None"
    return {"metadata": {"name": name, "namespace": "ns", "uid": "svc-uid", "labels": {"team": "a"}}, "spec": spec}


def _pod(name: str, ip: str = "10.0.0.1", *, ready: bool = True, deleting: bool = False, node: str = "n1",
         port_name: str = "web", labels: dict[str, str] | None = None, phase: str = "Running",
         restart: str = "Always") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": labels or {"app": "web"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta,
            "spec": {"nodeName": node, "restartPolicy": restart,
                     "containers": [{"name": "c", "ports": [{"name": port_name, "containerPort": 8080}]}]},
            "status": {"phase": phase, "podIP": ip, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


IN_CASES = [
    ("a running pod with an IP is in", _pod("a"), False, True),
    ("a pod without an IP is out", _pod("a", ip=""), False, False),
    ("a deleting pod is out unless terminating ones are wanted", _pod("a", deleting=True), False, False),
    ("a deleting pod is in when terminating ones are wanted", _pod("a", deleting=True), True, True),
    ("a finished pod that never restarts is out", _pod("a", phase="Succeeded", restart="Never"), True, False),
    ("a failed pod that restarts on failure stays in", _pod("a", phase="Failed", restart="OnFailure"), True, True),
]


@pytest.mark.parametrize("pod, terminating, want", [c[1:] for c in IN_CASES], ids=[c[0] for c in IN_CASES])
def test_in_endpoints(pod: dict[str, Any], terminating: bool, want: bool) -> None:
    assert service_endpoints.in_endpoints(pod, terminating) is want


CONDITION_CASES = [
    ("a ready pod is ready and serving", _svc(), _pod("a"), {"ready": True, "serving": True, "terminating": False}),
    ("an unready pod is neither", _svc(), _pod("a", ready=False), {"ready": False, "serving": False, "terminating": False}),
    ("a terminating ready pod serves but is not ready", _svc(), _pod("a", deleting=True),
     {"ready": False, "serving": True, "terminating": True}),
    ("publishNotReadyAddresses makes every pod ready", _svc(publish=True), _pod("a", ready=False, deleting=True),
     {"ready": True, "serving": True, "terminating": True}),
]


@pytest.mark.parametrize("svc, pod, want", [c[1:] for c in CONDITION_CASES], ids=[c[0] for c in CONDITION_CASES])
def test_conditions(svc: dict[str, Any], pod: dict[str, Any], want: dict[str, bool]) -> None:
    assert service_endpoints.conditions(svc, pod) == want


PORT_CASES = [
    ("a numeric target port is used as it is", {"port": 80, "targetPort": 9376}, 9376),
    ("a named target port is the container port of that name", {"port": 80, "targetPort": "web"}, 8080),
    ("a name no container has resolves to nothing", {"port": 80, "targetPort": "grpc"}, None),
    ("a name of another protocol does not match", {"port": 80, "targetPort": "web", "protocol": "UDP"}, None),
    ("no target port means the service port", {"port": 80}, 80),
]


@pytest.mark.parametrize("port, want", [c[1:] for c in PORT_CASES], ids=[c[0] for c in PORT_CASES])
def test_resolve_port(port: dict[str, Any], want: int | None) -> None:
    assert service_endpoints.resolve_port(port, _pod("a")) == want


def test_an_endpoint_has_the_ip_node_zone_and_target() -> None:
    nodes = {"n1": {"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "z1"}}}}
    wanted = endpoint_slice_plan.desired(_svc(), [_pod("a"), _pod("other", labels={"app": "db"})], nodes)
    assert list(wanted) == [(("http", "TCP", 8080, ""),)]
    ports, eps = wanted[(("http", "TCP", 8080, ""),)]
    assert ports == [{"name": "http", "protocol": "TCP", "port": 8080}]
    assert eps == {"uid-a": {"addresses": ["10.0.0.1"], "conditions": {"ready": True, "serving": True, "terminating": False},
                             "targetRef": {"kind": "Pod", "namespace": "ns", "name": "a", "uid": "uid-a"},
                             "nodeName": "n1", "zone": "z1"}}


def _many(n: int, ready: bool = True) -> list[dict[str, Any]]:
    return [_pod(f"p{i:04}", f"10.1.{i // 250}.{i % 250 + 1}", ready=ready) for i in range(n)]


def test_more_than_a_hundred_endpoints_take_more_slices() -> None:
    todo = endpoint_slice_plan.plan(_svc(), endpoint_slice_plan.desired(_svc(), _many(250), {}), [])
    assert [len(s["endpoints"]) for s in todo.create] == [100, 100, 50]
    first = todo.create[0]
    assert first["metadata"]["generateName"] == "web-" and first["addressType"] == "IPv4"
    assert first["metadata"]["labels"] == {"team": "a", "kubernetes.io/service-name": "web",
                                           "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
    assert first["metadata"]["ownerReferences"][0]["kind"] == "Service"


def _existing(name: str, eps: list[dict[str, Any]], ports: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": endpoint_slice_plan.labels_for(_svc())}, "addressType": "IPv4",
            "endpoints": eps, "ports": ports}


def test_a_new_pod_fills_room_in_the_existing_slice_and_gone_ones_leave() -> None:
    svc = _svc()
    wanted = endpoint_slice_plan.desired(svc, [_pod("a"), _pod("b", "10.0.0.2")], {})
    ports, eps = wanted[(("http", "TCP", 8080, ""),)]
    old = _existing("web-abcde", [eps["uid-a"], {**eps["uid-a"], "targetRef": {"uid": "uid-gone"}}], ports)
    todo = endpoint_slice_plan.plan(svc, wanted, [old])
    assert todo.create == [] and todo.delete == []
    assert [e["targetRef"]["uid"] for e in todo.update[0]["endpoints"]] == ["uid-a", "uid-b"]


def test_an_unchanged_slice_is_not_written() -> None:
    svc = _svc()
    wanted = endpoint_slice_plan.desired(svc, [_pod("a")], {})
    ports, eps = wanted[(("http", "TCP", 8080, ""),)]
    todo = endpoint_slice_plan.plan(svc, wanted, [_existing("web-abcde", [eps["uid-a"]], ports)])
    assert (todo.create, todo.update, todo.delete) == ([], [], [])


def test_a_service_without_endpoints_keeps_one_empty_slice() -> None:
    svc = _svc()
    todo = endpoint_slice_plan.plan(svc, {}, [])
    assert [(s["endpoints"], s["ports"]) for s in todo.create] == [([], [])]
    placeholder = _existing("web-empty", [], [])
    assert endpoint_slice_plan.plan(svc, {}, [placeholder]).delete == []


def test_a_headless_service_marks_its_slices() -> None:
    assert endpoint_slice_plan.labels_for(_svc(headless=True))["service.kubernetes.io/headless"] == ""


def test_endpoints_subsets_split_ready_and_not_ready_sorted_by_ip() -> None:
    pods = [_pod("b", "10.0.0.9"), _pod("a", "10.0.0.3"), _pod("c", "10.0.0.5", ready=False)]
    got = endpoints.subsets(_svc(), pods)
    assert got == [{"addresses": [
        {"ip": "10.0.0.3", "nodeName": "n1", "targetRef": {"kind": "Pod", "namespace": "ns", "name": "a", "uid": "uid-a"}},
        {"ip": "10.0.0.9", "nodeName": "n1", "targetRef": {"kind": "Pod", "namespace": "ns", "name": "b", "uid": "uid-b"}}],
        "notReadyAddresses": [
        {"ip": "10.0.0.5", "nodeName": "n1", "targetRef": {"kind": "Pod", "namespace": "ns", "name": "c", "uid": "uid-c"}}],
        "ports": [{"name": "http", "protocol": "TCP", "port": 8080}]}]


def test_endpoints_leave_out_deleting_pods_unless_not_ready_ones_are_published() -> None:
    pods = [_pod("a", deleting=True)]
    assert endpoints.subsets(_svc(), pods) == []
    assert endpoints.subsets(_svc(publish=True), pods)[0]["addresses"][0]["ip"] == "10.0.0.1"


def test_over_a_thousand_addresses_are_truncated_keeping_ready_ones() -> None:
    found = endpoints.subsets(_svc(), _many(900) +
                              [_pod(f"u{i:03}", f"10.9.0.{i + 1}", ready=False) for i in range(200)])
    kept, truncated = endpoints.truncate(found)
    assert truncated
    assert (len(kept[0]["addresses"]), len(kept[0]["notReadyAddresses"])) == (900, 100)
    assert endpoints.truncate(endpoints.subsets(_svc(), _many(5))) == (endpoints.subsets(_svc(), _many(5)), False)
