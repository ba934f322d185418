"""`score_nodes`, the one-call Score over many nodes, gives exactly what `score` gives node by node.

The framework prefers `score_nodes` when a plugin has it (scheduler/runtime.py), so each plugin
that offers it is checked against its own per-node Score on nodes that differ in load, taints,
images and resources, with and without PreScore having run.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import ImageState
from scheduler.plugins import (image_locality, node_resources_balanced_allocation, node_resources_fit,
                               taint_toleration)
from scheduler.plugins.dynamic_resources import new as dynamic_resources
from tests.scheduler import fakes

Obj = dict[str, Any]
PREFER = {"key": "k", "value": "v", "effect": "PreferNoSchedule"}
NODES = [
    fakes.node("empty"),
    fakes.node("small", cpu="500m", memory="1Gi"),
    fakes.node("tainted", taints=[PREFER, {"key": "other", "effect": "PreferNoSchedule"}]),
    fakes.node("gpu", extra={"example.com/gpu": "2"}),
    fakes.node("loaded", cpu="2", memory="4Gi"),
    fakes.node("no-memory", memory="0"),
]
RUNNING = [fakes.pod("r1", node_name="loaded", requests={"cpu": "1500m", "memory": "3Gi"}),
           fakes.pod("r2", node_name="small", requests={"cpu": "100m"}),
           fakes.pod("r3", node_name="gpu", requests={"example.com/gpu": "1", "cpu": "1"})]
PODS = [
    fakes.pod("best-effort"),
    fakes.pod("sized", requests={"cpu": "250m", "memory": "512Mi"}),
    fakes.pod("big", requests={"cpu": "3", "memory": "20Gi"}),
    fakes.pod("gpu", requests={"example.com/gpu": "1"}),
    fakes.pod("tolerant", spec={"tolerations": [{"key": "k", "operator": "Exists"}]}),
    fakes.pod("images", spec={"containers": [{"name": "a", "image": "busybox"}, {"name": "b", "image": "nginx:1.27"}]}),
]
FIT_ARGS = [
    {},
    {"scoringStrategy": {"type": "MostAllocated"}},
    {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                         "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                                                {"utilization": 100, "score": 0}]}}},
    {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "memory", "weight": 3},
                                                                 {"name": "cpu", "weight": 1}]}},
    {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                                 {"name": "memory", "weight": 1},
                                                                 {"name": "example.com/gpu", "weight": 2}]}},
]


def handle() -> fakes.FakeHandle:
    h = fakes.FakeHandle(NODES, RUNNING)
    busybox = ImageState(size=300 * 1024 * 1024, num_nodes=2)
    for info in h.snapshot.node_infos:
        if info.name in ("empty", "loaded"):
            info.image_states = {"busybox:latest": busybox}
    return h


def per_node(plugin: Any, state: CycleState, pod: Obj, h: fakes.FakeHandle) -> list[int]:
    out = []
    for info in h.snapshot.node_infos:
        value, status = plugin.score(state, pod, info)
        assert status is None
        out.append(value)
    return out


def check(plugin: Any, h: fakes.FakeHandle, pre_score: bool) -> list[list[int]]:
    seen = []
    for pod in PODS:
        state = CycleState()
        if pre_score and hasattr(plugin, "pre_score"):
            if plugin.pre_score(state, pod, h.snapshot.node_infos) is not None:
                continue  # Skip: Score is not called for this pod
        want = per_node(plugin, state, pod, h)
        assert plugin.score_nodes(state, pod, h.snapshot.node_infos) == want, pod["metadata"]["name"]
        seen.append(want)
    return seen


@pytest.mark.parametrize("args", FIT_ARGS, ids=lambda a: str(a.get("scoringStrategy", {}).get("type", "default")))
@pytest.mark.parametrize("pre_score", [True, False])
def test_node_resources_fit(args: Obj, pre_score: bool) -> None:
    h = handle()
    seen = check(node_resources_fit.new(args, h, {}), h, pre_score)
    assert any(len(set(scores)) > 1 for scores in seen)  # the nodes really score differently


@pytest.mark.parametrize("resources", [None, [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                              {"name": "example.com/gpu", "weight": 1}]])
@pytest.mark.parametrize("pre_score", [True, False])
def test_balanced_allocation(resources: list[Obj] | None, pre_score: bool) -> None:
    h = handle()
    args = {"resources": resources} if resources else {}
    seen = check(node_resources_balanced_allocation.new(args, h, {}), h, pre_score)
    assert any(len(set(scores)) > 1 for scores in seen)


def test_image_locality() -> None:
    h = handle()
    seen = check(image_locality.new({}, h, {}), h, pre_score=False)
    assert any(scores[0] > 0 and 0 in scores for scores in seen)  # busybox on two nodes, not the others


@pytest.mark.parametrize("pre_score", [True, False])
def test_taint_toleration(pre_score: bool) -> None:
    h = handle()
    seen = check(taint_toleration.new({}, h, {}), h, pre_score)
    assert [2, 1] == sorted({scores[2] for scores in seen}, reverse=True)  # tolerant pods count one taint


def test_dynamic_resources_without_claims() -> None:
    h = handle()
    plugin = dynamic_resources({}, h, {})
    for pod in PODS:
        state = CycleState()
        plugin.pre_filter(state, pod, h.snapshot.node_infos)
        assert plugin.score_nodes(state, pod, h.snapshot.node_infos) == per_node(plugin, state, pod, h)
