"""DynamicResources from PreEnqueue to Unreserve, on a FakeHandle with the allocator stand-in:
the messages and codes upstream gives, what goes in flight, and the queueing hints."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from client import resources as kinds
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, QueueingHint, Resource
from scheduler.framework.interfaces import NodeScore
from scheduler.framework.status import Code
from scheduler.plugins.dynamic_resources import DynamicResources
from tests.scheduler import fakes
from tests.scheduler.dynamic_resources.objects import claim, device_class, gpu_slice

Obj = dict[str, Any]


def pod_with(*entries: Obj, name: str = "p", statuses: list[Obj] | None = None, requests: Obj | None = None) -> Obj:
    p = fakes.pod(name, requests=requests, spec={"resourceClaims": list(entries)} if entries else None)
    if statuses is not None:
        p["status"]["resourceClaimStatuses"] = statuses
    return p


def plugin_for(nodes: list[Obj] = (), *, claims: list[Obj] = (), slices: list[Obj] = (),  # type: ignore[assignment]
               classes: list[Obj] | None = None, features: dict[str, bool] | None = None) -> DynamicResources:
    handle = fakes.FakeHandle(nodes, stores={
        kinds.RESOURCECLAIMS: list(claims), kinds.RESOURCESLICES: list(slices),
        kinds.DEVICECLASSES: [device_class("gpu")] if classes is None else classes})
    return DynamicResources(handle, features or {})


def run_filters(plugin: DynamicResources, pod: Obj) -> tuple[CycleState, Any, dict[str, Any]]:
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, list(plugin.handle.snapshot))
    per_node = {}
    if pre is None:
        per_node = {info.name: plugin.filter(state, pod, info) for info in plugin.handle.snapshot}
    return state, pre, per_node


# --- PreEnqueue -------------------------------------------------------------------------------

PRE_ENQUEUE = [
    ("a pod without claims is not held", pod_with(), [], None),
    ("a template entry the controller has not served yet waits for its claim",
     pod_with({"name": "gpu", "resourceClaimTemplateName": "t"}), [],
     'pod "default/p": ResourceClaim not created yet'),
    ("a named claim that does not exist holds the pod",
     pod_with({"name": "gpu", "resourceClaimName": "c"}), [], 'resourceclaim.resource.k8s.io "c" not found'),
    ("a generated claim the pod does not own is refused",
     pod_with({"name": "gpu", "resourceClaimTemplateName": "t"}, statuses=[{"name": "gpu", "resourceClaimName": "c"}]),
     [claim("c", owner_uid="someone-else")], "ResourceClaim default/c was not created for pod default/p (pod is not owner)"),
    ("a claim being deleted holds the pod",
     pod_with({"name": "gpu", "resourceClaimName": "c"}), [dict(claim("c"), metadata={
         **claim("c")["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"})], 'resourceclaim "c" is being deleted'),
    ("an entry naming neither a claim nor a template is refused",
     pod_with({"name": "gpu"}), [], 'pod "default/p", spec.resourceClaim "gpu": none of the supported fields are set'),
    ("a status entry without a claim name means no claim is needed",
     pod_with({"name": "gpu", "resourceClaimTemplateName": "t"}, statuses=[{"name": "gpu"}]), [], None),
    ("a generated claim the pod owns lets it in",
     pod_with({"name": "gpu", "resourceClaimTemplateName": "t"}, statuses=[{"name": "gpu", "resourceClaimName": "c"}]),
     [claim("c", owner_uid="uid-default-p")], None),
]


@pytest.mark.parametrize("case,pod,claims,message", PRE_ENQUEUE, ids=[c[0] for c in PRE_ENQUEUE])
def test_pre_enqueue(case: str, pod: Obj, claims: list[Obj], message: str | None) -> None:
    status = plugin_for(claims=claims).pre_enqueue(pod)
    if message is None:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.message == message


# --- PreFilter --------------------------------------------------------------------------------

def _reserved(n: int) -> Obj:
    return {"allocation": {"devices": {"results": []}},
            "reservedFor": [{"resource": "pods", "name": f"x{i}", "uid": f"u{i}"} for i in range(n)]}


PRE_FILTER = [
    ("a pod without claims is skipped", pod_with(), [], None, Code.SKIP, ""),
    ("a claim of a class that does not exist waits for the class",
     pod_with({"name": "gpu", "resourceClaimName": "c"}), [claim("c", class_name="missing")], None,
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "request gpu: device class missing does not exist"),
    ("a subrequest's class is checked under its qualified name",
     pod_with({"name": "gpu", "resourceClaimName": "c"}),
     [claim("c", requests=[{"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": "gpu"},
                                                             {"name": "any", "deviceClassName": "nope"}]}])], None,
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "request gpu/any: device class nope does not exist"),
    ("subrequests are refused when the prioritized list is off",
     pod_with({"name": "gpu", "resourceClaimName": "c"}),
     [claim("c", requests=[{"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": "gpu"}]}])],
     {"DRAPrioritizedList": False}, Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
     "resource claim default/c, request gpu: has subrequests, but the DRAPrioritizedList feature is disabled"),
    ("a request of no known type is refused",
     pod_with({"name": "gpu", "resourceClaimName": "c"}), [claim("c", requests=[{"name": "gpu"}])], None,
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resource claim default/c, request gpu: unknown request type"),
    ("an allocated claim with 256 other consumers is in use",
     pod_with({"name": "gpu", "resourceClaimName": "c"}), [claim("c", status=_reserved(256))], None,
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim in use"),
    ("an allocated claim with room for one more consumer is usable",
     pod_with({"name": "gpu", "resourceClaimName": "c"}), [claim("c", status=_reserved(255))], None, None, ""),
]


@pytest.mark.parametrize("case,pod,claims,features,code,message", PRE_FILTER, ids=[c[0] for c in PRE_FILTER])
def test_pre_filter(case: str, pod: Obj, claims: list[Obj], features: dict[str, bool] | None,
                    code: Code | None, message: str) -> None:
    plugin = plugin_for([fakes.node("n1")], claims=claims, features=features)
    _, status = plugin.pre_filter(CycleState(), pod, [])
    if code is None:
        assert status is None
    else:
        assert status is not None and status.code is code and status.message == message


# --- Filter, Reserve, Unreserve ---------------------------------------------------------------

def test_filter_allocates_on_the_nodes_with_a_free_device_only() -> None:
    plugin = plugin_for([fakes.node("n1"), fakes.node("n2")], claims=[claim("c")], slices=[gpu_slice("n1", "gpu-0")])
    _, pre, per_node = run_filters(plugin, pod_with({"name": "gpu", "resourceClaimName": "c"}))
    assert pre is None
    assert per_node["n1"] is None
    assert per_node["n2"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert per_node["n2"].message == "cannot allocate all claims"


def test_an_allocated_claim_is_usable_only_where_its_node_selector_says() -> None:
    allocated = claim("c", status={"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n1", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}})
    plugin = plugin_for([fakes.node("n1"), fakes.node("n2")], claims=[allocated])
    state, pre, per_node = run_filters(plugin, pod_with({"name": "gpu", "resourceClaimName": "c"}))
    assert pre is None and per_node["n1"] is None
    assert per_node["n2"].message == "resourceclaim not available on the node"
    assert state.read("DynamicResources").allocator is None  # nothing left to allocate


def test_reserve_puts_the_allocation_in_flight_so_the_next_pod_cannot_take_the_device() -> None:
    plugin = plugin_for([fakes.node("n1")], claims=[claim("a"), claim("b")], slices=[gpu_slice("n1", "gpu-0")])
    first = pod_with({"name": "gpu", "resourceClaimName": "a"}, name="p1")
    second = pod_with({"name": "gpu", "resourceClaimName": "b"}, name="p2")
    state, _, per_node = run_filters(plugin, first)
    assert per_node["n1"] is None
    assert plugin.reserve(state, first, "n1") is None
    assert plugin.claims.has_pending("uid-claim-a")

    _, _, per_node = run_filters(plugin, second)
    assert per_node["n1"].message == "cannot allocate all claims"

    plugin.unreserve(state, first, "n1")
    assert not plugin.claims.has_pending("uid-claim-a")
    _, _, per_node = run_filters(plugin, second)
    assert per_node["n1"] is None


def test_in_flight_shares_of_a_gpu_count_against_its_memory() -> None:
    half = [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"memory": "40Gi"}}}}]
    shared = gpu_slice("n1", "gpu-0", allowMultipleAllocations=True, capacity={"memory": {"value": "80Gi"}})
    plugin = plugin_for([fakes.node("n1")], claims=[claim(n, requests=half) for n in "abc"], slices=[shared])
    pods = [pod_with({"name": "gpu", "resourceClaimName": n}, name=f"p-{n}") for n in "abc"]
    for pod in pods[:2]:
        state, _, per_node = run_filters(plugin, pod)
        assert per_node["n1"] is None
        assert plugin.reserve(state, pod, "n1") is None
    first, second = (plugin.claims._in_flight[f"uid-claim-{n}"]["status"]["allocation"]["devices"]["results"][0]
                     for n in "ab")
    assert first["device"] == second["device"] == "gpu-0" and first["shareID"] != second["shareID"]
    assert first["consumedCapacity"] == {"memory": "40Gi"}
    _, _, per_node = run_filters(plugin, pods[2])
    assert per_node["n1"].message == "cannot allocate all claims"  # 80Gi are spoken for


def test_a_pod_sharing_a_claim_whose_allocation_is_in_flight_waits_for_it() -> None:
    plugin = plugin_for([fakes.node("n1")], claims=[claim("shared")], slices=[gpu_slice("n1", "gpu-0")])
    first = pod_with({"name": "gpu", "resourceClaimName": "shared"}, name="p1")
    state, _, _ = run_filters(plugin, first)
    plugin.reserve(state, first, "n1")
    _, status = plugin.pre_filter(CycleState(), pod_with({"name": "gpu", "resourceClaimName": "shared"}, name="p2"), [])
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == "resource claim default/shared is in the process of being allocated"


def test_the_in_flight_claim_carries_the_allocation_and_the_finalizer() -> None:
    plugin = plugin_for([fakes.node("n1")], claims=[claim("c")], slices=[gpu_slice("n1", "gpu-0")])
    pod = pod_with({"name": "gpu", "resourceClaimName": "c"})
    state, _, _ = run_filters(plugin, pod)
    plugin.reserve(state, pod, "n1")
    pending = plugin.claims._in_flight["uid-claim-c"]
    assert pending["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert pending["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n1", "device": "gpu-0"}]
    assert "status" not in plugin.claims.get("default", "c")  # the informer's copy is untouched


def test_slice_changes_reach_the_inventory_before_the_next_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = plugin_for([fakes.node("n1")], claims=[claim("c")], slices=[gpu_slice("n1", "gpu-0")])
    inventory = plugin.slices.inventory
    handed: list[str] = []
    upsert = inventory.upsert
    monkeypatch.setattr(inventory, "upsert", lambda obj: (handed.append(obj["metadata"]["resourceVersion"]), upsert(obj)))
    pod = pod_with({"name": "gpu", "resourceClaimName": "c"})
    run_filters(plugin, pod)
    run_filters(plugin, pod)
    assert handed == ["1"]  # unchanged slices are not handed over again

    store = plugin.handle.store(kinds.RESOURCESLICES)
    store.update(gpu_slice("n1", "gpu-0", "gpu-1", rv="2"))
    run_filters(plugin, pod)
    assert handed == ["1", "2"]
    assert len(inventory) == 1

    store.delete(gpu_slice("n1"))
    _, _, per_node = run_filters(plugin, pod)
    assert len(inventory) == 0
    assert per_node["n1"].message == "cannot allocate all claims"


ADMIN = [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "adminAccess": True}}]


def test_admin_access_is_granted_in_a_namespace_with_the_label() -> None:
    plugin = plugin_for([fakes.node("n1")], claims=[claim("c", requests=ADMIN)], slices=[gpu_slice("n1", "gpu-0")])
    plugin.handle.store(kinds.NAMESPACES).replace([
        {"metadata": {"name": "default", "labels": {"resource.kubernetes.io/admin-access": "true"}}}])
    state, _, per_node = run_filters(plugin, pod_with({"name": "gpu", "resourceClaimName": "c"}))
    assert per_node["n1"] is None
    (result,) = state.read("DynamicResources").node_allocations["n1"][0][0][1]["devices"]["results"]
    assert result["adminAccess"] is True


def test_admin_access_outside_such_a_namespace_fails_the_attempt() -> None:
    plugin = plugin_for([fakes.node("n1")], claims=[claim("c", requests=ADMIN)], slices=[gpu_slice("n1", "gpu-0")])
    _, _, per_node = run_filters(plugin, pod_with({"name": "gpu", "resourceClaimName": "c"}))
    assert per_node["n1"].code is Code.ERROR
    assert "admin-access" in per_node["n1"].message


def test_a_failed_binding_makes_the_claim_unavailable_and_post_filter_deallocates_it() -> None:
    failed = claim("c", status={
        "allocation": {"devices": {"results": [{"request": "gpu", "driver": "nic.haru.dev", "pool": "n1",
                                                "device": "nic-0", "bindingConditions": ["nic.haru.dev/attached"],
                                                "bindingFailureConditions": ["nic.haru.dev/attach-failed"]}]}},
        "devices": [{"driver": "nic.haru.dev", "pool": "n1", "device": "nic-0", "conditions": [
            {"type": "nic.haru.dev/attach-failed", "status": "True", "reason": "AttachFailed", "message": "no link"}]}]})
    plugin = plugin_for([fakes.node("n1")], claims=[failed])
    state, _, per_node = run_filters(plugin, pod_with({"name": "gpu", "resourceClaimName": "c"}))
    assert per_node["n1"].message == "resourceclaim not available on the node"
    assert state.read("DynamicResources").unavailable == {0}


# --- extended resources -----------------------------------------------------------------------

def test_an_extended_resource_is_served_through_dra_only_where_the_node_does_not_advertise_it() -> None:
    nodes = [fakes.node("dra"), fakes.node("plugin", extra={"nvidia.com/gpu": "4"})]
    plugin = plugin_for(nodes, slices=[gpu_slice("dra", "gpu-0")],
                        classes=[device_class("gpu.nvidia.com", extended_resource="nvidia.com/gpu")])
    pod = pod_with(requests={"cpu": "1", "nvidia.com/gpu": "1"})
    state, pre, per_node = run_filters(plugin, pod)
    assert pre is None and per_node == {"dra": None, "plugin": None}
    s = state.read("DynamicResources")
    results, special = s.node_allocations["dra"]
    assert special["spec"]["devices"]["requests"] == [{"name": "container-0-request-1", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]
    assert special["metadata"]["generateName"] == "p-extended-resources-"
    assert special["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert results[0][1]["devices"]["results"][0]["device"] == "gpu-0"
    assert "plugin" not in s.node_allocations  # the device plugin serves it there

    assert plugin.reserve(state, pod, "plugin") is None  # nothing to put in flight on that node
    assert plugin.reserve(state, pod, "dra") is None
    assert plugin.claims.has_pending(special["metadata"]["uid"])


def test_an_extended_resource_nobody_offers_does_not_fit() -> None:
    plugin = plugin_for([fakes.node("n1")], classes=[device_class("gpu.nvidia.com", extended_resource="nvidia.com/gpu")])
    _, _, per_node = run_filters(plugin, pod_with(requests={"nvidia.com/gpu": "1", "example.com/fpga": "1"}))
    assert per_node["n1"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert per_node["n1"].message == "cannot fit resource"


def test_every_class_serves_its_implicit_extended_resource_name() -> None:
    plugin = plugin_for([fakes.node("n1")], slices=[gpu_slice("n1", "gpu-0")], classes=[device_class("gpu")])
    pod = pod_with(requests={"deviceclass.resource.kubernetes.io/gpu": "1"})
    state, pre, per_node = run_filters(plugin, pod)
    assert pre is None and per_node["n1"] is None
    special = state.read("DynamicResources").node_allocations["n1"][1]
    assert special["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu"


def test_the_later_class_wins_an_extended_resource_name() -> None:
    classes = [device_class("old", extended_resource="nvidia.com/gpu", created="2026-01-01T00:00:00Z"),
               device_class("new", extended_resource="nvidia.com/gpu", created="2026-02-01T00:00:00Z")]
    plugin = plugin_for([fakes.node("n1")], slices=[gpu_slice("n1", "gpu-0")], classes=classes)
    state, _, _ = run_filters(plugin, pod_with(requests={"nvidia.com/gpu": "1"}))
    special = state.read("DynamicResources").node_allocations["n1"][1]
    assert special["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "new"


def test_a_special_claim_left_from_an_earlier_attempt_is_refused_and_then_deleted() -> None:
    left = claim("p-extended-resources-abcde", owner_uid="uid-default-p")
    left["metadata"]["ownerReferences"][0]["name"] = "p"
    left["metadata"]["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
    plugin = plugin_for([fakes.node("n1")], claims=[left], slices=[gpu_slice("n1", "gpu-0")],
                        classes=[device_class("gpu.nvidia.com", extended_resource="nvidia.com/gpu")])
    _, _, per_node = run_filters(plugin, pod_with(requests={"nvidia.com/gpu": "1"}))
    assert per_node["n1"].message == "cannot schedule extended resource claim"


# --- hints and events -------------------------------------------------------------------------

def test_events_to_register_cover_claims_slices_classes_nodes_and_the_generated_claim() -> None:
    events = {(e.event.resource, e.event.action) for e in plugin_for().events_to_register()}
    assert events == {
        (Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE),
        (Resource.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE),
        (Resource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
        (Resource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
        (Resource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE),
    }


def test_device_taint_rule_changes_are_registered_when_the_rules_are_on() -> None:
    events = plugin_for(features={"DRADeviceTaintRules": True}).events_to_register()
    assert (Resource.DEVICE_TAINT_RULE, ActionType.ALL) in {(e.event.resource, e.event.action) for e in events}


def _claim_hint(plugin: DynamicResources) -> Any:
    return next(e.hint for e in plugin.events_to_register() if e.event.resource is Resource.RESOURCE_CLAIM)


def test_claim_hints() -> None:
    mine = claim("c")
    plugin = plugin_for(claims=[mine])
    hint = _claim_hint(plugin)
    pod = pod_with({"name": "gpu", "resourceClaimName": "c"})
    other = claim("other")
    allocated_other = copy.deepcopy(other)
    allocated_other["status"] = {"allocation": {"devices": {"results": []}}}
    with_status = copy.deepcopy(mine)
    with_status["status"] = {"reservedFor": [{"resource": "pods", "name": "x", "uid": "x"}]}
    relabelled = copy.deepcopy(mine)
    relabelled["metadata"]["labels"] = {"a": "b"}

    assert hint(pod, None, mine) is QueueingHint.QUEUE  # the claim the pod waited for appeared
    assert hint(pod, None, other) is QueueingHint.SKIP  # someone else's
    assert hint(pod, allocated_other, other) is QueueingHint.QUEUE  # deallocated: devices freed
    assert hint(pod, mine, relabelled) is QueueingHint.SKIP  # status unchanged
    assert hint(pod, mine, with_status) is QueueingHint.QUEUE
    waiting = pod_with({"name": "gpu", "resourceClaimName": "missing"})
    assert hint(waiting, None, mine) is QueueingHint.SKIP  # still cannot be scheduled


def test_a_claim_event_names_the_pods_naming_the_claim_unless_it_frees_devices() -> None:
    mine, other = claim("c"), claim("other")
    plugin = plugin_for(claims=[mine, other])
    user = pod_with({"name": "gpu", "resourceClaimName": "c"}, name="user")
    bystander = pod_with({"name": "gpu", "resourceClaimName": "other"}, name="bystander")
    plugin.handle.store(kinds.PODS).replace([user, bystander])
    candidates = next(e.candidates for e in plugin.events_to_register()
                      if e.event.resource is Resource.RESOURCE_CLAIM)
    assert candidates is not None
    assert candidates(None, mine) == {user["metadata"]["uid"]}
    allocated = copy.deepcopy(mine)
    allocated["status"] = {"allocation": {"devices": {"results": []}}}
    assert candidates(mine, allocated) == {user["metadata"]["uid"]}
    assert candidates(allocated, mine) is None  # deallocated: any pod may use the devices now
    assert candidates(mine, None) is None


def test_claim_hints_for_a_generated_claim_look_at_that_claim_only() -> None:
    mine = claim("p-gpu-x1", owner_uid="uid-default-p")
    neighbour = claim("q-gpu-x2", owner_uid="uid-default-q")
    elsewhere = claim("p-gpu-x1", namespace="other", owner_uid="uid-default-p")
    plugin = plugin_for(claims=[mine, neighbour, elsewhere])
    hint = _claim_hint(plugin)
    pod = pod_with({"name": "gpu", "resourceClaimTemplateName": "t"},
                   statuses=[{"name": "gpu", "resourceClaimName": "p-gpu-x1"}])
    allocated_neighbour = copy.deepcopy(neighbour)
    allocated_neighbour["status"] = {"allocation": {"devices": {"results": []}}}

    assert hint(pod, None, mine) is QueueingHint.QUEUE
    assert hint(pod, None, neighbour) is QueueingHint.SKIP
    assert hint(pod, None, elsewhere) is QueueingHint.SKIP  # same name, another namespace
    assert hint(pod, allocated_neighbour, neighbour) is QueueingHint.QUEUE  # its devices are free now
    unnamed = pod_with({"name": "gpu", "resourceClaimTemplateName": "t"})
    assert hint(unnamed, None, mine) is QueueingHint.SKIP  # the controller has not named it yet
    assert hint(unnamed, allocated_neighbour, neighbour) is QueueingHint.SKIP  # and cannot use freed devices


def test_pod_hint_queues_the_pod_once_its_generated_claim_is_named() -> None:
    plugin = plugin_for(claims=[claim("c", owner_uid="uid-default-p")])
    hint = next(e.hint for e in plugin.events_to_register() if e.event.resource is Resource.POD)
    before = pod_with({"name": "gpu", "resourceClaimTemplateName": "t"})
    after = pod_with({"name": "gpu", "resourceClaimTemplateName": "t"}, statuses=[{"name": "gpu", "resourceClaimName": "c"}])
    assert hint(before, before, after) is QueueingHint.QUEUE
    assert hint(before, before, before) is QueueingHint.SKIP
    assert hint(before, None, pod_with(name="q")) is QueueingHint.SKIP


# --- args -------------------------------------------------------------------------------------

@pytest.mark.parametrize("args,seconds", [({}, 600.0), ({"bindingTimeout": "10m0s"}, 600.0),
                                          ({"bindingTimeout": "1m30s"}, 90.0), ({"bindingTimeout": "1500ms"}, 1.5),
                                          ({"bindingTimeout": 42}, 42.0)])
def test_the_binding_timeout_comes_from_the_plugin_args(args: Obj, seconds: float) -> None:
    from scheduler.plugins.dynamic_resources import new
    handle = fakes.FakeHandle([], stores={})
    assert new(args, handle, {}).binding_timeout == seconds


@pytest.mark.parametrize("text,message", [("10", 'time: missing unit in duration "10"'),
                                          ("ten minutes", 'time: invalid duration "ten minutes"')])
def test_a_malformed_binding_timeout_is_refused_with_gos_message(text: str, message: str) -> None:
    from scheduler.plugins.dynamic_resources import new
    with pytest.raises(ValueError) as caught:
        new({"bindingTimeout": text}, fakes.FakeHandle([], stores={}), {})
    assert str(caught.value) == message


# --- Score ------------------------------------------------------------------------------------

def test_nodes_where_a_better_ranked_subrequest_fits_score_higher() -> None:
    def product(name: str) -> Obj:
        return {"productName": {"string": name}}
    slices = [gpu_slice("h100-node", "gpu-0", attributes=product("NVIDIA H100")),
              gpu_slice("a100-node", "gpu-0", attributes=product("NVIDIA A100")),
              gpu_slice("other-node", "gpu-0", attributes=product("NVIDIA L4"))]
    ranked = [{"name": "gpu", "firstAvailable": [
        {"name": "h100", "deviceClassName": "gpu", "selectors": [{"cel": {"expression":
            'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100"'}}]},
        {"name": "a100", "deviceClassName": "gpu", "selectors": [{"cel": {"expression":
            'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100"'}}]},
        {"name": "any", "deviceClassName": "gpu"}]}]
    nodes = [fakes.node(n) for n in ("h100-node", "a100-node", "other-node")]
    plugin = plugin_for(nodes, claims=[claim("c", requests=ranked)], slices=slices)
    pod = pod_with({"name": "gpu", "resourceClaimName": "c"})
    state, _, per_node = run_filters(plugin, pod)
    assert per_node == {"h100-node": None, "a100-node": None, "other-node": None}
    raw = {info.name: plugin.score(state, pod, info) for info in plugin.handle.snapshot}
    assert raw == {"h100-node": (8, None), "a100-node": (7, None), "other-node": (6, None)}
    scores = [NodeScore(name, value) for name, (value, _) in raw.items()]
    assert plugin.normalize_score(state, pod, scores) is None
    assert [(n.name, n.score) for n in scores] == [("h100-node", 100), ("a100-node", 87), ("other-node", 75)]


def test_filter_writes_out_an_allocation_only_for_the_node_reserve_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduler.dra import results

    written: list[str] = []
    real = results.allocation

    def counting(search: Any, index: int) -> Obj:
        written.append(search.node["metadata"]["name"])
        return real(search, index)

    monkeypatch.setattr(results, "allocation", counting)
    nodes = [fakes.node(n) for n in ("n1", "n2", "n3")]
    plugin = plugin_for(nodes, claims=[claim("c")], slices=[gpu_slice(n, "gpu-0") for n in ("n1", "n2", "n3")])
    pod = pod_with({"name": "gpu", "resourceClaimName": "c"})
    state, _, per_node = run_filters(plugin, pod)
    assert per_node == {"n1": None, "n2": None, "n3": None}
    assert [plugin.score(state, pod, info) for info in plugin.handle.snapshot] == [(0, None)] * 3
    assert written == []  # no firstAvailable list: Score has nothing to rank, so nothing to write
    assert plugin.reserve(state, pod, "n2") is None
    assert written == ["n2"]
    pending = plugin.claims.pending(claim("c")["metadata"]["uid"])
    assert pending is not None and pending["status"]["allocation"]["devices"]["results"][0]["pool"] == "n2"


def test_pods_without_subrequests_score_zero_everywhere() -> None:
    plugin = plugin_for([fakes.node("n1")], claims=[claim("c")], slices=[gpu_slice("n1", "gpu-0")])
    pod = pod_with({"name": "gpu", "resourceClaimName": "c"})
    state, _, _ = run_filters(plugin, pod)
    assert plugin.score(state, pod, plugin.handle.snapshot.get("n1")) == (0, None)
    scores = [NodeScore("n1", 0)]
    plugin.normalize_score(state, pod, scores)
    assert scores[0].score == 0
