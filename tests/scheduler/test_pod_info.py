"""PodInfo.of: what it derives from a pod is reused for copies of the same pod (its assumed copy,
its informer updates) and worked out again as soon as a field it depends on differs."""

from __future__ import annotations

from typing import Any

from scheduler.framework.node_info import PodInfo

Obj = dict[str, Any]


def _pod(uid: str, cpu: str, port: int = 0) -> Obj:
    container: Obj = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
    if port:
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    return {"metadata": {"name": uid, "namespace": "ns", "uid": uid}, "spec": {"containers": [container]}}


def test_an_assumed_copy_shares_what_was_derived_from_its_pod() -> None:
    pod = _pod("memo-1", "250m")
    first = PodInfo.of(pod)
    assumed = {**pod, "spec": {**pod["spec"], "nodeName": "n1"}}
    again = PodInfo.of(assumed)
    assert again.pod is assumed and again.requests is first.requests
    assert again.requests.milli_cpu == 250


def test_an_equal_decoded_copy_is_reused_and_a_changed_one_is_derived_again() -> None:
    first = PodInfo.of(_pod("memo-2", "1"))
    decoded = PodInfo.of(_pod("memo-2", "1"))  # a fresh object off the wire, same content
    assert decoded.requests is first.requests
    resized = PodInfo.of(_pod("memo-2", "2", port=8080))
    assert resized.requests.milli_cpu == 2000 and resized.host_ports == [("0.0.0.0", "TCP", 8080)]
    assert PodInfo.of(_pod("memo-2", "2", port=8080)).requests is resized.requests


def test_pods_without_a_uid_are_derived_every_time() -> None:
    pod = _pod("", "1")
    pod["metadata"].pop("uid")
    assert PodInfo.of(pod).requests is not PodInfo.of(pod).requests
