"""NodeResourcesFit: Filter reasons and codes, ignored resources, the DRA extended-resource rule,
the three scoring strategies (numbers worked from upstream's formulas) and the queueing hints."""

from __future__ import annotations

from typing import Any

import pytest

from client import resources as kinds
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, QueueingHint, Resource
from scheduler.framework.status import Code
from scheduler.plugins import extended_resource_devices, node_resources_fit
from tests.scheduler import fakes

U, R = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def run_filter(plugin: Any, handle: fakes.FakeHandle, pod: dict, node: str = "n1") -> Any:
    state = CycleState()
    assert plugin.pre_filter(state, pod, handle.snapshot.node_infos) == (None, None)
    return plugin.filter(state, pod, handle.snapshot.get(node))


FILTER_CASES = [
    ("A pod that fits gets no reason", {}, [], {"cpu": "1", "memory": "1Gi"}, {}, None, []),
    ("Remaining cpu too small is Insufficient cpu and preemption may help", {}, [{"cpu": "3"}], {"cpu": "2"}, {},
     U, ["Insufficient cpu"]),
    ("A request above the node's whole allocatable is unresolvable", {}, [], {"cpu": "8"}, {}, R, ["Insufficient cpu"]),
    ("Every short resource is listed, cpu before memory", {}, [{"cpu": "3", "memory": "15Gi"}],
     {"cpu": "2", "memory": "2Gi"}, {}, U, ["Insufficient cpu", "Insufficient memory"]),
    ("A full pod count is Too many pods", {"pods": "1"}, [{}], {}, {}, U, ["Too many pods"]),
    ("Too many pods comes before the resources", {"pods": "1"}, [{"cpu": "3"}], {"cpu": "2"}, {}, U,
     ["Too many pods", "Insufficient cpu"]),
    ("A pod requesting nothing fits a node whose cpu is all taken", {}, [{"cpu": "4"}], {}, {}, None, []),
    ("A resource the pod does not request is not checked even when overcommitted", {}, [{"cpu": "5"}],
     {"memory": "1Gi"}, {}, None, []),
    ("Ephemeral storage is checked", {"extra": {"ephemeral-storage": "10Gi"}}, [], {"ephemeral-storage": "20Gi"}, {},
     R, ["Insufficient ephemeral-storage"]),
    ("An extended resource short on the node is named", {"extra": {"example.com/foo": "3"}}, [{"example.com/foo": "2"}],
     {"example.com/foo": "2"}, {}, U, ["Insufficient example.com/foo"]),
    ("An extended resource the node lacks is unresolvable", {}, [], {"example.com/foo": "1"}, {}, R,
     ["Insufficient example.com/foo"]),
    ("An ignored extended resource is not checked", {}, [], {"example.com/foo": "1"},
     {"ignoredResources": ["example.com/foo"]}, None, []),
    ("An ignored resource group covers its resources", {}, [], {"example.com/foo": "1", "example.com/bar": "1"},
     {"ignoredResourceGroups": ["example.com"]}, None, []),
    ("Hugepages are not extended resources, so groups cannot ignore them", {}, [], {"hugepages-2Mi": "2Mi"},
     {"ignoredResourceGroups": ["hugepages-2Mi"]}, R, ["Insufficient hugepages-2Mi"]),
]


@pytest.mark.parametrize("case, node_kw, running, requests, args, code, reasons", FILTER_CASES,
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(case: str, node_kw: dict, running: list, requests: dict, args: dict, code: Code | None,
                reasons: list) -> None:
    pods = [fakes.pod(f"r{i}", node_name="n1", requests=r or None) for i, r in enumerate(running)]
    handle = fakes.FakeHandle([fakes.node("n1", **node_kw)], pods)
    status = run_filter(node_resources_fit.new(args, handle, {}), handle, fakes.pod("p", requests=requests or None))
    if code is None:
        assert status is None
    else:
        assert status is not None and status.code is code and status.reasons == reasons


def gpu_class(name: str, resource: str | None = "example.com/gpu", created: str = "2026-01-01T00:00:00Z") -> dict:
    spec: dict = {"selectors": []}
    if resource:
        spec["extendedResourceName"] = resource
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


DRA_CASES = [
    ("A resource a DeviceClass maps and the node does not advertise is left to DRA",
     [gpu_class("gpu")], {}, {"example.com/gpu": "1"}, {}, None),
    ("The implicit deviceclass name is left to DRA too",
     [gpu_class("gpu", None)], {}, {"deviceclass.resource.kubernetes.io/gpu": "1"}, {}, None),
    ("A node that advertises the resource is checked as usual even with a DeviceClass",
     [gpu_class("gpu")], {"extra": {"example.com/gpu": "0"}}, {"example.com/gpu": "1"}, {}, "Insufficient example.com/gpu"),
    ("Without a DeviceClass for it the resource is checked", [gpu_class("gpu", "example.com/other")], {},
     {"example.com/gpu": "1"}, {}, "Insufficient example.com/gpu"),
    ("With DRAExtendedResource off the resource is checked", [gpu_class("gpu")], {}, {"example.com/gpu": "1"},
     {"DRAExtendedResource": False}, "Insufficient example.com/gpu"),
    ("The skip does not hide a short cpu", [gpu_class("gpu")], {}, {"example.com/gpu": "1", "cpu": "8"}, {},
     "Insufficient cpu"),
]


@pytest.mark.parametrize("case, classes, node_kw, requests, features, reason", DRA_CASES, ids=[c[0] for c in DRA_CASES])
def test_extended_resources_backed_by_dra(case: str, classes: list, node_kw: dict, requests: dict, features: dict,
                                          reason: str | None) -> None:
    handle = fakes.FakeHandle([fakes.node("n1", **node_kw)], stores={kinds.DEVICECLASSES: classes})
    status = run_filter(node_resources_fit.new({}, handle, features), handle, fakes.pod("p", requests=requests))
    if reason is None:
        assert status is None
    else:
        assert status is not None and status.reasons == [reason]


def test_device_class_mapping_prefers_the_newer_class_then_the_first_name() -> None:
    mapping = extended_resource_devices.device_class_mapping([
        gpu_class("old", created="2026-01-01T00:00:00Z"), gpu_class("new", created="2026-02-01T00:00:00Z"),
        gpu_class("b-tie", "example.com/tie", "2026-03-01T00:00:00Z"),
        gpu_class("a-tie", "example.com/tie", "2026-03-01T00:00:00Z")])
    assert mapping["example.com/gpu"] == "new"
    assert mapping["example.com/tie"] == "a-tie"
    assert mapping["deviceclass.resource.kubernetes.io/old"] == "old"
    long_name = "a" * 64
    assert "deviceclass.resource.kubernetes.io/" + long_name not in \
        extended_resource_devices.device_class_mapping([gpu_class(long_name, None)])


def score_nodes(args: dict, nodes: list[dict], pod: dict, running: list[dict] = ()) -> dict[str, int]:  # type: ignore[assignment]
    handle = fakes.FakeHandle(nodes, list(running))
    plugin = node_resources_fit.new(args, handle, {})
    state = CycleState()
    assert plugin.pre_score(state, pod, handle.snapshot.node_infos) is None
    out = {}
    for info in handle.snapshot:
        score, status = plugin.score(state, pod, info)
        assert status is None
        out[info.name] = score
    return out


def strategy(kind: str, resources: list | None = None, shape: list | None = None) -> dict:
    s: dict = {"type": kind}
    if resources:
        s["resources"] = resources
    if shape:
        s["requestedToCapacityRatio"] = {"shape": shape}
    return {"scoringStrategy": s}


TWO_NODES = [fakes.node("n1", cpu="4", memory="10000"), fakes.node("n2", cpu="6", memory="10000")]
ASKS_1CPU_2000 = fakes.pod("p", requests={"cpu": "1", "memory": "2000"})

SCORE_CASES = [
    # least_allocated_test "nothing scheduled, resources requested, differently sized nodes":
    # n1 cpu (4000-1000)*100/4000=75, mem (10000-2000)*100/10000=80 -> 77; n2 cpu 5000*100/6000=83 -> 81.
    ("LeastAllocated on differently sized nodes", {}, TWO_NODES, ASKS_1CPU_2000, [], {"n1": 77, "n2": 81}),
    # Weighted: n1 (75*3 + 80*1)/4 = 76; n2 (83*3 + 80)/4 = 82.
    ("LeastAllocated weighs the resources", strategy("LeastAllocated", [{"name": "cpu", "weight": 3},
                                                                        {"name": "memory", "weight": 1}]),
     TWO_NODES, ASKS_1CPU_2000, [], {"n1": 76, "n2": 82}),
    # Non-zero requests: an empty pod counts 100m and 200Mi: cpu (1000-100)*100/1000=90, mem (1000-200)*100/1000=80.
    ("A pod requesting nothing is scored with the non-zero defaults", {},
     [fakes.node("n1", cpu="1", memory="1000Mi")], fakes.pod("p"), [], {"n1": 85}),
    # Running pods count too: 1 cpu more used on n1 -> cpu (4000-2000)*100/4000=50, mem 80 -> 65.
    ("LeastAllocated counts what running pods request", {}, TWO_NODES, ASKS_1CPU_2000,
     [fakes.pod("r", node_name="n1", requests={"cpu": "1", "memory": "0"})], {"n1": 65, "n2": 81}),
    # most_allocated_test: n1 cpu 1000*100/4000=25, mem 2000*100/10000=20 -> 22; n2 1000*100/6000=16 -> 18.
    ("MostAllocated on differently sized nodes", strategy("MostAllocated"), TWO_NODES, ASKS_1CPU_2000, [],
     {"n1": 22, "n2": 18}),
    # Overcommit counts as full use: cpu 100, mem 20 -> 60.
    ("MostAllocated counts an overcommitted resource as full", strategy("MostAllocated"),
     [fakes.node("n1", cpu="4", memory="10000")], fakes.pod("p", requests={"cpu": "5", "memory": "2000"}), [],
     {"n1": 60}),
    # Shape (0,0)-(100,10) scaled to (0,0)-(100,100); 25% cpu and memory -> 25.
    ("RequestedToCapacityRatio with a rising shape", strategy("RequestedToCapacityRatio",
                                                              shape=[{"utilization": 0, "score": 0},
                                                                     {"utilization": 100, "score": 10}]),
     [fakes.node("n1", cpu="4", memory="16Gi")], fakes.pod("p", requests={"cpu": "1", "memory": "4Gi"}), [],
     {"n1": 25}),
    # Shape (0,100)-(30,50)-(100,0) at 50%: 50 + trunc(-50*20/70) = 50 - 14 = 36 (Go truncates, floor would give 35).
    ("RequestedToCapacityRatio truncates on a falling segment as Go does",
     strategy("RequestedToCapacityRatio", shape=[{"utilization": 0, "score": 10}, {"utilization": 30, "score": 5},
                                                 {"utilization": 100, "score": 0}]),
     [fakes.node("n1", cpu="4", memory="16Gi")], fakes.pod("p", requests={"cpu": "2", "memory": "8Gi"}), [],
     {"n1": 36}),
    # memory 200Mi of 32Gi is 0% and scores 0, so it is left out: cpu alone 25 (not round(25/2) = 13).
    ("RequestedToCapacityRatio leaves zero-scoring resources out of the mean",
     strategy("RequestedToCapacityRatio", shape=[{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]),
     [fakes.node("n1", cpu="4", memory="32Gi")], fakes.pod("p", requests={"cpu": "1"}), [], {"n1": 25}),
    # An extended resource in the list counts only when the pod asks for it: foo 1 of 4 -> 75, cpu 75 -> 75.
    ("An extended resource the pod requests is scored with its weight",
     strategy("LeastAllocated", [{"name": "cpu", "weight": 1}, {"name": "example.com/foo", "weight": 2}]),
     [fakes.node("n1", cpu="4", extra={"example.com/foo": "4"})], fakes.pod("p", requests={"cpu": "1", "example.com/foo": "1"}),
     [], {"n1": 75}),
    ("An extended resource the pod does not request is left out",
     strategy("LeastAllocated", [{"name": "cpu", "weight": 1}, {"name": "example.com/foo", "weight": 2}]),
     [fakes.node("n1", cpu="4", extra={"example.com/foo": "4"})], fakes.pod("p", requests={"cpu": "2"}), [],
     {"n1": 50}),
]


@pytest.mark.parametrize("case, args, nodes, pod, running, want", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_score(case: str, args: dict, nodes: list, pod: dict, running: list, want: dict) -> None:
    assert score_nodes(args, nodes, pod, running) == want


BAD_ARGS = [
    ("An unknown strategy is refused", strategy("Random"), "scoringStrategy.type: Unsupported value"),
    ("RequestedToCapacityRatio needs a shape", strategy("RequestedToCapacityRatio"), "at least one point"),
    ("Shape utilization must increase", strategy("RequestedToCapacityRatio", shape=[
        {"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]), "sorted in increasing order"),
    ("A weight above 100 is refused", strategy("LeastAllocated", [{"name": "cpu", "weight": 101}]), "range [1, 100]"),
    ("A resource group with a slash is refused", {"ignoredResourceGroups": ["example.com/foo"]}, "can't contain '/'"),
]


@pytest.mark.parametrize("case, args, message", BAD_ARGS, ids=[c[0] for c in BAD_ARGS])
def test_bad_args_are_config_errors(case: str, args: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        node_resources_fit.new(args, fakes.FakeHandle(), {})


def events(features: dict | None = None) -> dict[Resource, Any]:
    plugin = node_resources_fit.new({}, fakes.FakeHandle(), features or {})
    return {e.event.resource: e for e in plugin.events_to_register()}


NODE_HINTS = [
    ("Adding a node big enough queues the pod", None, fakes.node("n1", cpu="8"), QueueingHint.QUEUE),
    ("Adding a node too small skips the pod", None, fakes.node("n1", cpu="1"), QueueingHint.SKIP),
    ("Growing the cpu the pod asks for queues it", fakes.node("n1", cpu="4"), fakes.node("n1", cpu="8"), QueueingHint.QUEUE),
    ("Growing only memory the pod does not ask for skips it", fakes.node("n1", cpu="4", memory="1Gi"),
     fakes.node("n1", cpu="4", memory="2Gi"), QueueingHint.SKIP),
    ("Growing the pod count queues it", fakes.node("n1", pods="10"), fakes.node("n1", pods="20"), QueueingHint.QUEUE),
]


@pytest.mark.parametrize("case, old, new, hint", NODE_HINTS, ids=[c[0] for c in NODE_HINTS])
def test_node_hint(case: str, old: dict | None, new: dict, hint: QueueingHint) -> None:
    event = events()[Resource.NODE]
    assert event.event.action == ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
    assert event.hint(fakes.pod("p", requests={"cpu": "2"}), old, new) is hint


def test_pod_hints_queue_on_freed_room_only() -> None:
    event = events()[Resource.POD]
    pod = fakes.pod("p", requests={"cpu": "2"})
    assert event.event.action == ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN
    assert event.hint(pod, fakes.pod("gone", node_name="n1"), None) is QueueingHint.QUEUE
    assert event.hint(pod, fakes.pod("never-placed"), None) is QueueingHint.SKIP
    before = fakes.pod("r", node_name="n1", requests={"cpu": "3", "memory": "1Gi"})
    assert event.hint(pod, before, fakes.pod("r", node_name="n1", requests={"cpu": "1", "memory": "1Gi"})) \
        is QueueingHint.QUEUE
    assert event.hint(pod, before, fakes.pod("r", node_name="n1", requests={"cpu": "3", "memory": "512Mi"})) \
        is QueueingHint.SKIP


def test_a_device_class_for_a_requested_resource_queues_the_pod() -> None:
    event = events()[Resource.DEVICE_CLASS]
    pod = fakes.pod("p", requests={"example.com/gpu": "1"})
    assert event.hint(pod, None, gpu_class("gpu")) is QueueingHint.QUEUE
    assert event.hint(pod, None, gpu_class("gpu", "example.com/other")) is QueueingHint.SKIP
    assert Resource.DEVICE_CLASS not in events({"DRAExtendedResource": False})


def gpu_slice(node: str, count: int, driver: str = "gpu.example.com") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(count)]}}


def allocated_claim(node: str, *devices: str) -> dict:
    results = [{"request": "r", "driver": "gpu.example.com", "pool": node, "device": d} for d in devices]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"held-{node}", "namespace": "default", "uid": f"uid-held-{node}"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": results}}}}


SELECTING_CLASS = {**gpu_class("gpu"), "spec": {"extendedResourceName": "example.com/gpu",
                                               "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
GPU_SCORING = strategy("LeastAllocated", [{"name": "cpu", "weight": 1}, {"name": "example.com/gpu", "weight": 1}])

DRA_SCORE_CASES = [
    # resource_allocation.go calculateDRAExtendedResourceAllocatableRequest: 4 devices, 1 allocated, the pod
    # asks 1 -> gpu (4-2)*100/4 = 50; cpu (4000-1000)*100/4000 = 75 -> (75+50)/2 = 62.
    ("A DRA-served extended resource is scored by its devices on the node", [SELECTING_CLASS],
     [gpu_slice("n1", 4)], [allocated_claim("n1", "gpu-0")], {}, {"n1": 62}),
    # Without the class the resource is not served and is left out: cpu alone 75.
    ("Without a DeviceClass the resource is left out of the score", [], [gpu_slice("n1", 4)], [], {}, {"n1": 75}),
    # The class selects another driver's devices only: no device counts, so cpu alone.
    ("Devices the class does not select do not count",
     [{**SELECTING_CLASS, "spec": {**SELECTING_CLASS["spec"],
                                   "selectors": [{"cel": {"expression": 'device.driver == "other.example.com"'}}]}}],
     [gpu_slice("n1", 4)], [], {}, {"n1": 75}),
    ("With DRAExtendedResource off the devices are not counted", [SELECTING_CLASS], [gpu_slice("n1", 4)], [],
     {"DRAExtendedResource": False}, {"n1": 75}),
]


@pytest.mark.parametrize("case, classes, slices, claims, features, want", DRA_SCORE_CASES,
                         ids=[c[0] for c in DRA_SCORE_CASES])
def test_score_of_extended_resources_backed_by_dra(case: str, classes: list, slices: list, claims: list,
                                                   features: dict, want: dict) -> None:
    handle = fakes.FakeHandle([fakes.node("n1", cpu="4")], stores={
        kinds.DEVICECLASSES: classes, kinds.RESOURCESLICES: slices, kinds.RESOURCECLAIMS: claims})
    plugin = node_resources_fit.new(GPU_SCORING, handle, features)
    pod, state = fakes.pod("p", requests={"cpu": "1", "example.com/gpu": "1"}), CycleState()
    assert plugin.pre_score(state, pod, handle.snapshot.node_infos) is None
    assert {i.name: plugin.score(state, pod, i)[0] for i in handle.snapshot} == want
