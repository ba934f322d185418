"""Device selectors in the one CEL environment: the `device` variable as DRA declares it, and
evaluation once per (expression, device, slice version) however many nodes and cycles ask."""

from __future__ import annotations

from typing import Any

import pytest

from admission import cel
from scheduler.dra import allocator, inventory, selectors
from scheduler.dra.devices import Device
from tests.scheduler.dra.builders import GPU_CLASS, claim, exact, node, slice_

DEV = {"name": "gpu-0", "allowMultipleAllocations": True,
       "attributes": {"model": {"string": "H100"}, "index": {"int": 3}, "nvlink": {"bool": True},
                      "driverVersion": {"version": "550.54.15"}, "ext.example.com/family": {"string": "hopper"}},
       "capacity": {"memory": {"value": "80Gi"}, "ext.example.com/bandwidth": {"value": "900G"}}}

CASES = [
    ('device.driver == "gpu.example.com"', True, "the driver is device.driver"),
    ('device.attributes["gpu.example.com"].model == "H100"', True, "a bare attribute name is in the driver's domain"),
    ('device.attributes["ext.example.com"].family == "hopper"', True, "a qualified attribute is in its own domain"),
    ('device.attributes["gpu.example.com"].index == 3 && device.attributes["gpu.example.com"].nvlink', True,
     "ints and bools keep their types"),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("550.0.0"))', True, "versions are semvers"),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) > 0', True, "capacities are quantities"),
    ('device.capacity["ext.example.com"].bandwidth == quantity("0.9T")', True, "quantities compare by value"),
    ("device.allowMultipleAllocations", True, "allowMultipleAllocations is a bool"),
    ('device.attributes["nowhere.example.com"].size() == 0', True, "an unknown domain is an empty map"),
    ('cel.bind(a, device.attributes["gpu.example.com"], a.model.startsWith("H"))', True, "cel.bind is available"),
]


@pytest.mark.parametrize("expression, want", [c[:2] for c in CASES], ids=[c[2] for c in CASES])
def test_the_device_variable(expression: str, want: Any) -> None:
    device = Device(DEV, "gpu.example.com", "pool", None)
    assert selectors.match([{"cel": {"expression": expression}}], device, "claim ns/c") is want


def test_an_unknown_field_is_a_runtime_error_with_upstreams_wording() -> None:
    device = Device(DEV, "gpu.example.com", "pool", None)
    with pytest.raises(selectors.SelectorError) as err:
        selectors.match([{"cel": {"expression": "true"}}, {"cel": {"expression": 'device.attributes["gpu.example.com"].x'}}],
                        device, "claim ns/c")
    assert str(err.value) == "claim ns/c: selector #1 on device gpu.example.com/pool/gpu-0: CEL runtime error: no such key: x"


def test_a_compile_error_is_remembered_and_raised_again() -> None:
    device = Device(DEV, "gpu.example.com", "pool", None)
    for _ in range(2):
        with pytest.raises(selectors.SelectorError, match=r"^class gpu: selector #0: CEL compile error: ERROR: <input>"):
            selectors.match([{"cel": {"expression": "device.driver =="}}], device, "class gpu")


def test_string_constants_lists_every_literal_of_a_program() -> None:
    program = cel.Environment({"device": cel.DYN}).compile(
        'device.attributes["a.example.com"].x == "y" || ["b.example.com"].exists(d, d in device.capacity)')
    assert program.string_constants == {"a.example.com", "x", "y", "b.example.com"} - {"x"}


def test_a_selector_is_evaluated_once_per_device_whatever_the_number_of_nodes_and_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []
    real = selectors._result

    def counting(expression: str, device: Device) -> Any:
        calls.append((expression, device.name))
        return real(expression, device)

    monkeypatch.setattr(selectors, "_result", counting)
    inv = inventory.Inventory()
    inv.upsert(slice_("fabric", [{"name": "x"}, {"name": "y"}], pool="fabric", allNodes=True, rv="1"))
    # Two devices asked for, so the search looks at both (it stops at the first that serves).
    c = claim("c", exact("g", "gpu", 'device.attributes["gpu.example.com"].size() == 0', count=2))
    for _cycle in range(3):
        a = allocator.Allocator(inventory=inv, classes={"gpu": GPU_CLASS}, allocated=allocator.AllocatedState())
        for n in range(5):
            assert a.allocate(node(f"n{n}"), [c], admin_access_namespace=False).allocations is not None
    assert sorted(calls) == [(expression, name) for expression in ('device.attributes["gpu.example.com"].size() == 0',
                                                                   'device.driver == "gpu.example.com"')
                             for name in ("x", "y")]
    inv.upsert(slice_("fabric", [{"name": "x"}, {"name": "y"}], pool="fabric", allNodes=True, rv="2"))
    a = allocator.Allocator(inventory=inv, classes={"gpu": GPU_CLASS}, allocated=allocator.AllocatedState())
    a.allocate(node("n0"), [c])
    assert len(calls) == 8
