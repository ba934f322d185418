"""NodeInfo's copy and its pod removal, which preemption's dry run leans on (scheduler/framework/node_info.py)."""

from __future__ import annotations

import dataclasses

from scheduler.framework.node_info import NodeInfo
from tests.scheduler import fakes


def _node_with_pods() -> NodeInfo:
    ports = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}},
                             "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    [info] = fakes.node_infos([fakes.node("n1")], [fakes.pod("a", node_name="n1", spec=ports),
                                                    fakes.pod("b", node_name="n1", requests={"cpu": "2"})])
    return info


def test_a_clone_has_every_field_of_the_original_and_an_empty_memo() -> None:
    original = _node_with_pods()
    original.memo["something"] = True
    copy = original.clone()
    for f in dataclasses.fields(NodeInfo):
        if f.name != "memo":
            assert getattr(copy, f.name) == getattr(original, f.name), f.name
    assert (copy.name, copy.taints, copy.unschedulable) == (original.name, original.taints, original.unschedulable)
    assert copy.memo == {}


def test_changing_a_clone_leaves_the_original_as_it_was() -> None:
    original = _node_with_pods()
    copy = original.clone()
    copy.remove_pod(copy.pods[0].pod)
    assert [i.pod["metadata"]["name"] for i in original.pods] == ["a", "b"]
    assert (original.requested.milli_cpu, original.used_ports) == (3000, {("0.0.0.0", "TCP", 8080): 1})
    assert (copy.requested.milli_cpu, copy.used_ports) == (2000, {})


def test_a_pod_is_removed_by_its_own_object_or_by_an_equal_copy() -> None:
    info = _node_with_pods()
    assert info.remove_pod(info.pods[1].pod)
    assert info.remove_pod(fakes.pod("a", node_name="n1"))  # another dict, the same uid
    assert not info.remove_pod(fakes.pod("a", node_name="n1"))
    assert (info.pods, info.requested.milli_cpu) == ([], 0)
