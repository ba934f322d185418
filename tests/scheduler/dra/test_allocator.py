"""The allocator's search, case by case: node selection, pools, selectors, counts, firstAvailable,
admin access, constraints, taints, binding conditions and the allocation objects it writes.
Consumable capacity and partitionable devices have their own files."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from tests.scheduler.dra.builders import (
    DRIVER, allocated, claim, device, device_class, exact, first_available, node, picked, run, slice_, sub,
)

D = f'device.attributes["{DRIVER}"]'
TWO = [device("gpu-0"), device("gpu-1")]


def one_node(devices: list[dict[str, Any]], **kw: Any) -> list[dict[str, Any]]:
    return [slice_("n1-gpu", devices, node="n1", **kw)]


SELECT_N1_ZONE_A = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}

CASES = [
    # -- which slices serve the node
    pytest.param(one_node(TWO), [claim("c", exact("g"))], dict(node_obj=node("n2")), "cannot allocate all claims",
                 id="a node-local slice serves only the node it names"),
    pytest.param([slice_("net", [device("nic-0")], pool="fabric", allNodes=True)], [claim("c", exact("g"))], {},
                 [[("g", "fabric/nic-0")]], id="a slice for all nodes serves any node"),
    pytest.param([slice_("zoned", [device("x")], pool="zone-a", nodeSelector=SELECT_N1_ZONE_A)],
                 [claim("c", exact("g"))], dict(node_obj=node("n1", zone="a")), [[("g", "zone-a/x")]],
                 id="a slice with a node selector serves the nodes it selects"),
    pytest.param([slice_("zoned", [device("x")], pool="zone-a", nodeSelector=SELECT_N1_ZONE_A)],
                 [claim("c", exact("g"))], dict(node_obj=node("n1", zone="b")), "cannot allocate all claims",
                 id="a slice with a node selector skips the nodes it does not select"),
    pytest.param([slice_("per", [device("a", nodeName="n2"), device("b", nodeName="n1"), device("c", allNodes=True)],
                         pool="p", perDeviceNodeSelection=True)],
                 [claim("c", exact("g", count=2))], {}, [[("g", "p/b"), ("g", "p/c")]],
                 id="per-device node selection takes only the devices meant for this node"),
    pytest.param([slice_("per", [device("b", nodeName="n1")], pool="p", perDeviceNodeSelection=True)],
                 [claim("c", exact("g"))], dict(features={"DRAPartitionableDevices": False}),
                 "cannot allocate all claims", id="per-device node selection is ignored with DRAPartitionableDevices off"),
    # -- pools
    pytest.param(one_node(TWO, count=2), [claim("c", exact("g"))], {}, "cannot allocate all claims",
                 id="an incomplete pool is skipped for an exact count"),
    pytest.param(one_node(TWO, count=2), [claim("c", exact("g", allocationMode="All"))], {},
                 "claim default/c, request g: asks for all devices, but resource pool gpu.example.com/n1 is "
                 "currently being updated", id="an incomplete pool makes All fail with upstream's message"),
    pytest.param([slice_("old", [device("gpu-0")], node="n1", pool="n1", generation=1),
                  slice_("new", [device("gpu-9")], node="n1", pool="n1", generation=2)],
                 [claim("c", exact("g", allocationMode="All"))], {}, [[("g", "n1/gpu-9")]],
                 id="only the newest generation of a pool counts"),
    pytest.param([slice_("a", [device("gpu-0")], node="n1", pool="n1", count=2),
                  slice_("b", [device("gpu-0")], node="n1", pool="n1", count=2)],
                 [claim("c", exact("g"))], {}, "invalid resource pools were encountered",
                 id="a pool that names one device twice is invalid"),
    # -- selectors in CEL
    pytest.param(one_node([device("gpu-0", attrs={"model": "A100"}), device("gpu-1", attrs={"model": "H100"})]),
                 [claim("c", exact("g", "gpu", f'{D}.model == "H100"'))], {}, [[("g", "n1/gpu-1")]],
                 id="class and claim selectors must both match"),
    pytest.param(one_node([device("gpu-0", attrs={"model": "A100"})]),
                 [claim("c", exact("g", "gpu", 'device.attributes["other.example.com"].size() == 0'))], {},
                 [[("g", "n1/gpu-0")]], id="an attribute domain the device lacks is an empty map"),
    pytest.param(one_node([device("gpu-0", attrs={"model": "A100"})]),
                 [claim("c", exact("g", "gpu", f"{D}.memory > 0"))], {},
                 "claim default/c: selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: no such key: memory",
                 id="an attribute the device lacks aborts with a CEL runtime error"),
    pytest.param(one_node([device("gpu-0", capacity={"memory": "40Gi"}), device("gpu-1", capacity={"memory": "80Gi"})]),
                 [claim("c", exact("g", "gpu", f'device.capacity["{DRIVER}"].memory.compareTo(quantity("64Gi")) >= 0'))],
                 {}, [[("g", "n1/gpu-1")]], id="capacities compare as quantities"),
    pytest.param(one_node([device("gpu-0", attrs={"driverVersion": "x"}),
                           {"name": "gpu-1", "attributes": {"driverVersion": {"version": "2.1.0"}}}]),
                 [claim("c", exact("g", "gpu", f'{D}.driverVersion.isGreaterThan(semver("2.0.0"))'))], {},
                 "claim default/c: selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: no such overload",
                 id="a selector that fails on the first device aborts even if a later one would match"),
    pytest.param(one_node([{"name": "gpu-0", "attributes": {"driverVersion": {"version": "1.9.0"}}},
                           {"name": "gpu-1", "attributes": {"driverVersion": {"version": "2.1.0"}}}]),
                 [claim("c", exact("g", "gpu", f'{D}.driverVersion.isGreaterThan(semver("2.0.0"))'))], {},
                 [[("g", "n1/gpu-1")]], id="version attributes are semvers"),
    pytest.param(one_node([device("gpu-0"), device("gpu-1", allowMultipleAllocations=True)]),
                 [claim("c", exact("g", "gpu", "device.allowMultipleAllocations"))], {}, [[("g", "n1/gpu-1")]],
                 id="device.allowMultipleAllocations is visible to selectors"),
    pytest.param(one_node(TWO), [claim("c", exact("g", "broken"))],
                 dict(classes=[device_class("broken", "device.driver ==")]), "class broken: selector #0: CEL compile error",
                 id="a class selector that does not compile names the class"),
    pytest.param(one_node(TWO), [claim("c", exact("g", "missing"))], {},
                 'claim default/c, request g: could not retrieve device class missing: '
                 'deviceclass.resource.k8s.io "missing" not found', id="an unknown device class is an error"),
    # -- counts
    pytest.param(one_node(TWO), [claim("c", exact("g", count=2))], {}, [[("g", "n1/gpu-0"), ("g", "n1/gpu-1")]],
                 id="count two takes two different devices"),
    pytest.param(one_node(TWO), [claim("c", exact("g", count=3))], {}, "cannot allocate all claims",
                 id="count beyond the devices cannot allocate"),
    pytest.param(one_node(TWO), [claim("c", exact("g", allocationMode="All"))], {},
                 [[("g", "n1/gpu-0"), ("g", "n1/gpu-1")]], id="All takes every matching device"),
    pytest.param(one_node(TWO), [claim("c", exact("g", allocationMode="All"))],
                 dict(held=[allocated("h", ("n1", "gpu-1"))]), "cannot allocate all claims",
                 id="All fails when a matching device is already allocated"),
    pytest.param(one_node(TWO), [claim("c", exact("g", "gpu", "false", allocationMode="All"))], {},
                 "cannot allocate all claims", id="All with no matching device cannot allocate"),
    pytest.param(one_node(TWO), [claim("c", exact("g"))], dict(held=[allocated("h", ("n1", "gpu-0"))]),
                 [[("g", "n1/gpu-1")]], id="an allocated device is not given again"),
    pytest.param(one_node(TWO), [claim("a", exact("g")), claim("b", exact("g"))], {},
                 [[("g", "n1/gpu-0")], [("g", "n1/gpu-1")]], id="two claims of one pod get different devices"),
    # -- a node whose every device is held (the search's shortcut for busy nodes)
    pytest.param(one_node(TWO), [claim("c", exact("g"))], dict(held=[allocated("h", ("n1", "gpu-0"), ("n1", "gpu-1"))]),
                 "cannot allocate all claims", id="no free device left on the node"),
    pytest.param([slice_("a", [device("gpu-0")], node="n1", pool="n1", count=2),
                  slice_("b", [device("gpu-0")], node="n1", pool="n1", count=2)],
                 [claim("c", exact("g"))], dict(held=[allocated("h", ("n1", "gpu-0"))]),
                 "invalid resource pools were encountered", id="no free device, and an invalid pool is reported"),
    pytest.param(one_node(TWO, count=2), [claim("c", exact("g", allocationMode="All"))],
                 dict(held=[allocated("h", ("n1", "gpu-0"), ("n1", "gpu-1"))]),
                 "claim default/c, request g: asks for all devices, but resource pool gpu.example.com/n1 is "
                 "currently being updated", id="no free device does not hide an All request's error"),
    pytest.param(one_node(TWO), [claim("c", exact("g", adminAccess=True))],
                 dict(admin=True, held=[allocated("h", ("n1", "gpu-0"), ("n1", "gpu-1"))]), [[("g", "n1/gpu-0")]],
                 id="no free device, but admin access takes a held one"),
    pytest.param(one_node([device(f"gpu-{i}") for i in range(40)]), [claim("c", exact("g", count=33))], {},
                 "claim default/c: number of requested devices 33 exceeds the claim limit of 32",
                 id="more than 32 devices in one claim is refused"),
    # -- firstAvailable
    pytest.param(one_node([device("gpu-0", attrs={"model": "A100"}), device("gpu-1", attrs={"model": "H100"})]),
                 [claim("c", first_available("g", sub("h100", "gpu", f'{D}.model == "H100"'), sub("any")))], {},
                 [[("g/h100", "n1/gpu-1")]], id="firstAvailable takes the first subrequest that fits"),
    pytest.param(one_node([device("gpu-0", attrs={"model": "A100"})]),
                 [claim("c", first_available("g", sub("h100", "gpu", f'{D}.model == "H100"'),
                                             sub("a100", "gpu", f'{D}.model == "A100"')))], {},
                 [[("g/a100", "n1/gpu-0")]], id="firstAvailable falls through to a later subrequest"),
    pytest.param(one_node(TWO), [claim("c", first_available("g", sub("two", count=2)))],
                 dict(features={"DRAPrioritizedList": False}),
                 "claim default/c, request g: has subrequests, but the DRAPrioritizedList feature is disabled",
                 id="firstAvailable is refused with DRAPrioritizedList off"),
    # -- admin access
    pytest.param(one_node([device("gpu-0")]), [claim("c", exact("g", adminAccess=True))],
                 dict(admin=True, held=[allocated("h", ("n1", "gpu-0"))]), [[("g", "n1/gpu-0")]],
                 id="admin access may take a device that is already allocated"),
    pytest.param(one_node([device("gpu-0")]), [claim("c", exact("g", adminAccess=True))], {},
                 "claim default/c, request g: admin access to devices requires the "
                 "`resource.kubernetes.io/admin-access: true` label on the containing namespace",
                 id="admin access outside an admin namespace is refused"),
    pytest.param(one_node([device("gpu-0")]), [claim("c", exact("g"))],
                 dict(held=[allocated("h", ("n1", "gpu-0"), adminAccess=True)]), [[("g", "n1/gpu-0")]],
                 id="a device held only with admin access is still free for others"),
    # -- constraints
    pytest.param(one_node([device("gpu-0", attrs={"numa": 0}), device("gpu-1", attrs={"numa": 1}),
                           device("nic-0", attrs={"numa": 1})]),
                 [claim("c", exact("gpu"), exact("nic", "gpu", f"{D}.numa == 1"),
                        constraints=[{"matchAttribute": f"{DRIVER}/numa"}])], {},
                 [[("gpu", "n1/gpu-1"), ("nic", "n1/nic-0")]],
                 id="matchAttribute backs out a first choice that a later request cannot match"),
    pytest.param(one_node([device("gpu-0", attrs={"numa": 0}), device("gpu-1", attrs={"numa": 0}),
                           device("gpu-2", attrs={"numa": 1})]),
                 [claim("c", exact("g", count=2), constraints=[{"distinctAttribute": f"{DRIVER}/numa"}])], {},
                 [[("g", "n1/gpu-0"), ("g", "n1/gpu-2")]], id="distinctAttribute needs different values"),
    pytest.param(one_node([device("gpu-0", attrs={"numa": 0}), device("gpu-1")]),
                 [claim("c", exact("g", count=2), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])], {},
                 "cannot allocate all claims", id="a device without the matched attribute never satisfies it"),
    pytest.param(one_node([device("gpu-0", attrs={"numa": 0}), device("gpu-1", attrs={"numa": 1})]),
                 [claim("c", exact("a"), exact("b"), constraints=[{"requests": ["a"], "matchAttribute": f"{DRIVER}/numa"}])],
                 {}, [[("a", "n1/gpu-0"), ("b", "n1/gpu-1")]], id="a constraint binds only the requests it names"),
    pytest.param(one_node([device("gpu-0", attrs={"numa": 0}), device("gpu-1", attrs={"numa": 1}),
                           device("gpu-2", attrs={"numa": 1})]),
                 [claim("c", first_available("a", sub("one")), exact("b"),
                        constraints=[{"requests": ["a/one", "b"], "matchAttribute": f"{DRIVER}/numa"}])], {},
                 [[("a/one", "n1/gpu-1"), ("b", "n1/gpu-2")]], id="a constraint may name a subrequest"),
    pytest.param(one_node(TWO), [claim("c", exact("g", allocationMode="All"),
                                       constraints=[{"distinctAttribute": f"{DRIVER}/numa"}])], {},
                 "claim default/c, request g: cannot add device gpu.example.com/n1/gpu-0 because a claim constraint "
                 "would not be satisfied", id="All with a constraint some device breaks is an error"),
    # -- taints
    pytest.param(one_node([device("gpu-0", taints=[{"key": "broken", "effect": "NoSchedule"}]), device("gpu-1")]),
                 [claim("c", exact("g"))], {}, [[("g", "n1/gpu-1")]], id="a NoSchedule taint keeps a request off the device"),
    pytest.param(one_node([device("gpu-0", taints=[{"key": "broken", "value": "x", "effect": "NoExecute"}])]),
                 [claim("c", exact("g"))], {}, "cannot allocate all claims", id="a NoExecute taint blocks allocation too"),
    pytest.param(one_node([device("gpu-0", taints=[{"key": "note", "effect": "None"}])]),
                 [claim("c", exact("g"))], {}, [[("g", "n1/gpu-0")]], id="a taint with effect None is ignored"),
    pytest.param(one_node([device("gpu-0", taints=[{"key": "broken", "effect": "NoSchedule"}])]),
                 [claim("c", exact("g", tolerations=[{"key": "broken", "operator": "Exists"}]))], {},
                 [[("g", "n1/gpu-0")]], id="a tolerated taint lets the request use the device"),
    pytest.param(one_node([device("gpu-0", taints=[{"key": "broken", "value": "a", "effect": "NoSchedule"}])]),
                 [claim("c", exact("g", tolerations=[{"key": "broken", "value": "b"}]))], {},
                 "cannot allocate all claims", id="an Equal toleration needs the same value"),
    pytest.param(one_node([device("gpu-0", taints=[{"key": "broken", "effect": "NoSchedule"}])]),
                 [claim("c", exact("g"))], dict(features={"DRADeviceTaints": False}), [[("g", "n1/gpu-0")]],
                 id="taints are not checked with DRADeviceTaints off"),
    pytest.param(one_node(TWO), [claim("c", exact("g"))],
                 dict(rules=[{"spec": {"deviceSelector": {"device": "gpu-0"}, "taint": {"key": "k", "effect": "NoSchedule"}}}],
                      features={"DRADeviceTaintRules": True}),
                 [[("g", "n1/gpu-1")]], id="a DeviceTaintRule taints the devices it selects"),
    pytest.param(one_node(TWO), [claim("c", exact("g"))],
                 dict(rules=[{"spec": {"deviceSelector": {"device": "gpu-0"}, "taint": {"key": "k", "effect": "NoSchedule"}}}]),
                 [[("g", "n1/gpu-0")]], id="DeviceTaintRules count only with their gate on"),
    pytest.param(one_node(TWO), [claim("c", exact("g"))],
                 dict(rules=[{"spec": {"deviceSelector": {}, "taint": {"key": "k", "effect": "NoExecute"}}}],
                      features={"DRADeviceTaintRules": True}),
                 "cannot allocate all claims", id="a DeviceTaintRule with an empty selector taints every device"),
    pytest.param(one_node(TWO), [claim("c", exact("g"))],
                 dict(rules=[{"spec": {"taint": {"key": "k", "effect": "NoExecute"}}}], features={"DRADeviceTaintRules": True}),
                 [[("g", "n1/gpu-0")]],
                 id="a DeviceTaintRule without a selector taints nothing"),
    # -- binding conditions
    pytest.param(one_node([device("nic-0", bindingConditions=["Attached"])]), [claim("c", exact("g"))],
                 dict(features={"DRADeviceBindingConditions": False}), "cannot allocate all claims",
                 id="devices with binding conditions are not used with the gate off"),
]


@pytest.mark.parametrize("slices, claims, kwargs, want", CASES)
def test_allocate(slices: list[dict[str, Any]], claims: list[dict[str, Any]], kwargs: dict[str, Any], want: Any) -> None:
    got = picked(run(slices, claims, **kwargs))
    if isinstance(want, str) and isinstance(got, str) and want.endswith("CEL compile error"):
        assert got.startswith(want)
    else:
        assert got == want


def test_the_allocation_object_for_a_node_local_device() -> None:
    outcome = run(one_node(TWO), [claim("c", exact("g", tolerations=[{"key": "x", "operator": "Exists"}]))])
    assert outcome.allocations == [{
        "devices": {"results": [{"request": "g", "driver": DRIVER, "pool": "n1", "device": "gpu-0",
                                 "tolerations": [{"key": "x", "operator": "Exists"}]}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
    }]
    assert outcome.reason == "" and not outcome.fatal


def test_a_shared_slice_leaves_the_claim_usable_everywhere_or_where_its_selector_says() -> None:
    everywhere = run([slice_("net", [device("x")], pool="fabric", allNodes=True)], [claim("c", exact("g"))])
    assert "nodeSelector" not in everywhere.allocations[0]
    zoned = run([slice_("z", [device("x")], pool="zone-a", nodeSelector=SELECT_N1_ZONE_A)], [claim("c", exact("g"))],
                node_obj=node("n1", zone="a"))
    assert zoned.allocations[0]["nodeSelector"] == SELECT_N1_ZONE_A


def test_binding_conditions_are_copied_and_binds_to_node_pins_the_node() -> None:
    nic = device("nic-0", bindsToNode=True, bindingConditions=["Attached"], bindingFailureConditions=["AttachFailed"])
    outcome = run([slice_("net", [nic], pool="fabric", allNodes=True)], [claim("c", exact("g"))], node_obj=node("n7"))
    (allocation,) = outcome.allocations
    (result,) = allocation["devices"]["results"]
    assert result["bindingConditions"] == ["Attached"]
    assert result["bindingFailureConditions"] == ["AttachFailed"]
    assert allocation["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n7"]}]}]}


def test_admin_access_is_marked_in_the_result() -> None:
    outcome = run(one_node([device("gpu-0")]), [claim("c", exact("g", adminAccess=True))], admin=True)
    assert outcome.allocations[0]["devices"]["results"][0]["adminAccess"] is True


def test_config_from_the_class_once_and_from_the_claim_once_per_request_it_names() -> None:
    gpu = device_class("gpu", f'device.driver == "{DRIVER}"',
                       config=[{"opaque": {"driver": DRIVER, "parameters": {"mode": "class"}}}])
    other = device_class("other", "true", config=[{"opaque": {"driver": DRIVER, "parameters": {"mode": "other"}}}])
    c = claim("c", exact("a"), exact("b"), exact("x", "other"),
              config=[{"requests": ["a"], "opaque": {"driver": DRIVER, "parameters": {"for": "a"}}},
                      {"requests": ["b", "x"], "opaque": {"driver": DRIVER, "parameters": {"for": "b and x"}}},
                      {"opaque": {"driver": DRIVER, "parameters": {"for": "all"}}},
                      {"requests": ["nobody"], "opaque": {"driver": DRIVER, "parameters": {"for": "none"}}}])
    outcome = run(one_node([device("gpu-0"), device("gpu-1"), device("gpu-2")]), [c], classes=[gpu, other])
    assert outcome.allocations[0]["devices"]["config"] == [
        {"source": "FromClass", "requests": ["a", "b"], "opaque": {"driver": DRIVER, "parameters": {"mode": "class"}}},
        {"source": "FromClass", "requests": ["x"], "opaque": {"driver": DRIVER, "parameters": {"mode": "other"}}},
        {"source": "FromClaim", "requests": ["a"], "opaque": {"driver": DRIVER, "parameters": {"for": "a"}}},
        # Once per request it names, as upstream's loop adds it.
        {"source": "FromClaim", "requests": ["b", "x"], "opaque": {"driver": DRIVER, "parameters": {"for": "b and x"}}},
        {"source": "FromClaim", "requests": ["b", "x"], "opaque": {"driver": DRIVER, "parameters": {"for": "b and x"}}},
        {"source": "FromClaim", "opaque": {"driver": DRIVER, "parameters": {"for": "all"}}},
    ]


def test_a_class_config_used_by_every_request_drops_its_request_list() -> None:
    gpu = device_class("gpu", "true", config=[{"opaque": {"driver": DRIVER, "parameters": {}}}])
    outcome = run(one_node(TWO), [claim("c", exact("a"), first_available("b", sub("s")))], classes=[gpu])
    assert outcome.allocations[0]["devices"]["config"] == [{"source": "FromClass",
                                                           "opaque": {"driver": DRIVER, "parameters": {}}}]
    assert [r["request"] for r in outcome.allocations[0]["devices"]["results"]] == ["a", "b/s"]


FATAL: list[tuple[str, Callable[[], Any]]] = [
    ("a CEL runtime error", lambda: run(one_node([device("gpu-0")]), [claim("c", exact("g", "gpu", f"{D}.x == 1"))])),
    ("an unknown class", lambda: run(one_node(TWO), [claim("c", exact("g", "nope"))])),
]


@pytest.mark.parametrize("name, call", FATAL, ids=[f[0] for f in FATAL])
def test_errors_upstream_returns_as_errors_are_fatal(name: str, call: Callable[[], Any]) -> None:
    outcome = call()
    assert outcome.allocations is None and outcome.fatal


def test_cannot_allocate_is_not_fatal() -> None:
    outcome = run(one_node(TWO), [claim("c", exact("g", count=5))])
    assert outcome.reason == "cannot allocate all claims" and not outcome.fatal


def test_allocated_state_counts_exclusive_devices_and_shares_apart() -> None:
    from scheduler.dra.allocated import AllocatedState
    shared = allocated("s", ("n1", "gpu-1"), shareID="abc", consumedCapacity={"memory": "10Gi"})
    state = AllocatedState.of([allocated("a", ("n1", "gpu-0")), shared, shared])
    assert state.devices == {(DRIVER, "n1", "gpu-0")}
    assert state.capacity[(DRIVER, "n1", "gpu-1")] == {f"{DRIVER}/memory": 20 * 2**30}
    state.remove(shared)
    state.remove(shared)
    assert state.capacity == {} and state.in_use((DRIVER, "n1", "gpu-0"))


# -- what a search leaves behind

def test_the_search_stops_at_the_first_device_that_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduler.dra import selectors

    seen: list[str] = []
    real = selectors._result

    def counting(expression: str, dev: Any) -> Any:
        seen.append(dev.name)
        return real(expression, dev)

    monkeypatch.setattr(selectors, "_result", counting)
    outcome = run(one_node([device("gpu-0"), device("gpu-1"), device("gpu-2")]), [claim("c", exact("g"))])
    assert picked(outcome) == [[("g", "n1/gpu-0")]]
    assert seen == ["gpu-0"]  # the class selector, evaluated for the one device looked at


def test_the_allocation_is_written_out_when_first_read() -> None:
    outcome = run(one_node(TWO), [claim("c", exact("g"))])
    assert outcome.found
    first = outcome.allocations
    assert first is not None and outcome.allocations is first  # built once, then kept
    assert first[0]["devices"]["results"][0]["device"] == "gpu-0"
    nothing = run(one_node(TWO), [claim("c", exact("g", count=3))])
    assert not nothing.found and nothing.allocations is None


def test_a_finished_search_is_freed_without_the_cycle_collector() -> None:
    import gc
    import weakref

    from scheduler.dra import allocator as allocator_module

    made: list[weakref.ref[Any]] = []
    real = allocator_module._Search.__init__

    def tracking(self: Any, *args: Any) -> None:
        real(self, *args)
        made.append(weakref.ref(self))

    gc.disable()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(allocator_module._Search, "__init__", tracking)
            outcome = run(one_node(TWO), [claim("c", exact("g"))])
            assert outcome.allocations is not None
            del outcome
        assert made and all(ref() is None for ref in made)
    finally:
        gc.enable()
