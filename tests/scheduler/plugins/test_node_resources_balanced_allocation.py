"""NodeResourcesBalancedAllocation: (1 - std of requested fractions) x 100, real requests, Skip for best effort."""

from __future__ import annotations

import pytest

from client import resources as kinds
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import Code
from scheduler.plugins import node_resources_balanced_allocation as balanced
from tests.scheduler import fakes

CASES = [
    # balanced_allocation_test "nothing scheduled, resources requested, differently sized nodes":
    # n1 fractions cpu 3000/4000=0.75, mem 5000/10000=0.5 -> std 0.125 -> 87; n2 0.5 and 0.5 -> 100.
    ("Differently sized nodes", {}, [fakes.node("n1", cpu="4", memory="10000"), fakes.node("n2", cpu="6", memory="10000")],
     {"cpu": "3", "memory": "5000"}, [], {"n1": 87, "n2": 100}),
    # Running pods count with their real requests: n1 cpu (1000+1000)/4000=0.5, mem 2000/10000=0.2 -> std 0.15 -> 85.
    ("Running pods count with what they really request", {}, [fakes.node("n1", cpu="4", memory="10000")],
     {"cpu": "1", "memory": "2000"}, [{"cpu": "1"}], {"n1": 85}),
    # A fraction above 1 counts as 1: cpu 8000/4000 -> 1, mem 0.5 -> std 0.25 -> 75.
    ("A fraction above one counts as one", {}, [fakes.node("n1", cpu="4", memory="10000")],
     {"cpu": "8", "memory": "5000"}, [], {"n1": 75}),
    # Three resources: fractions 0.25, 0.2, 0.5; mean 0.31667; std sqrt(0.051667/3)=0.13123 -> 86.
    ("Three resources use the full standard deviation",
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "example.com/foo", "weight": 1}]},
     [fakes.node("n1", cpu="4", memory="10000", extra={"example.com/foo": "4"})],
     {"cpu": "1", "memory": "2000", "example.com/foo": "2"}, [], {"n1": 86}),
    # The pod does not ask for the extended resource, so only cpu and memory count: 0.25 and 0.2 -> std 0.025 -> 97.
    ("An extended resource the pod does not ask for is left out",
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "example.com/foo", "weight": 1}]},
     [fakes.node("n1", cpu="4", memory="10000", extra={"example.com/foo": "4"})],
     {"cpu": "1", "memory": "2000"}, [], {"n1": 97}),
]


@pytest.mark.parametrize("case, args, nodes, requests, running, want", CASES, ids=[c[0] for c in CASES])
def test_score(case: str, args: dict, nodes: list, requests: dict, running: list, want: dict) -> None:
    pods = [fakes.pod(f"r{i}", node_name="n1", requests=r) for i, r in enumerate(running)]
    handle = fakes.FakeHandle(nodes, pods)
    plugin = balanced.new(args, handle, {})
    pod, state = fakes.pod("p", requests=requests), CycleState()
    assert plugin.pre_score(state, pod, handle.snapshot.node_infos) is None
    got = {}
    for info in handle.snapshot:
        score, status = plugin.score(state, pod, info)
        assert status is None
        got[info.name] = score
    assert got == want


def test_a_best_effort_pod_is_skipped() -> None:
    status = balanced.new({}, fakes.FakeHandle(), {}).pre_score(CycleState(), fakes.pod("p"), [])
    assert status is not None and status.code is Code.SKIP


def test_a_dra_served_extended_resource_counts_its_devices() -> None:
    # 4 devices on n1, none allocated, the pod asks 1 -> 0.25; cpu 2000/4000 = 0.5 -> std 0.125 -> 87.
    # (Were the devices not counted, cpu alone would leave one fraction and score 100.)
    gpu_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                 "spec": {"extendedResourceName": "example.com/gpu", "selectors": []}}
    gpu_slice = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                 "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                          "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": f"gpu-{i}"} for i in range(4)]}}
    handle = fakes.FakeHandle([fakes.node("n1", cpu="4")], stores={kinds.DEVICECLASSES: [gpu_class],
                                                                    kinds.RESOURCESLICES: [gpu_slice]})
    args = {"resources": [{"name": "cpu", "weight": 1}, {"name": "example.com/gpu", "weight": 1}]}
    plugin = balanced.new(args, handle, {})
    pod, state = fakes.pod("p", requests={"cpu": "2", "example.com/gpu": "1"}), CycleState()
    assert plugin.pre_score(state, pod, handle.snapshot.node_infos) is None
    assert plugin.score(state, pod, handle.snapshot.get("n1")) == (87, None)
