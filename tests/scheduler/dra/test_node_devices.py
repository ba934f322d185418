"""`NodeDevices`: a node's devices are worked out once and reused until a slice or the node changes."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.dra import inventory, node_devices
from scheduler.dra.allocated import AllocatedState
from scheduler.dra.node_devices import NodeDevices
from tests.scheduler.dra.builders import allocated, device, node, slice_

ZONE_A = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}


def names(view: node_devices.NodeView) -> list[str]:
    return [f"{pool.key[1]}/{d.name}" for pool, d in view[0]]


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = node_devices.compute

    def compute(inv: inventory.Inventory, node_obj: dict[str, Any], partitionable: bool) -> node_devices.NodeView:
        calls.append(node_obj["metadata"]["name"])
        return real(inv, node_obj, partitionable)

    monkeypatch.setattr(node_devices, "compute", compute)
    return calls


def test_the_same_node_and_inventory_reuse_the_first_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting(monkeypatch)
    inv = inventory.Inventory()
    inv.upsert(slice_("n1-gpu", [device("gpu-0"), device("gpu-1")], node="n1", rv="1"))
    cache, n1 = NodeDevices(), node("n1")
    first = cache.of(inv, n1, True)
    assert cache.of(inv, n1, True) is first
    assert names(first) == ["n1/gpu-0", "n1/gpu-1"] and calls == ["n1"]


def test_a_changed_slice_is_seen_on_the_next_call(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting(monkeypatch)
    inv = inventory.Inventory()
    inv.upsert(slice_("n1-gpu", [device("gpu-0")], node="n1", rv="1"))
    cache, n1 = NodeDevices(), node("n1")
    cache.of(inv, n1, True)
    inv.upsert(slice_("n1-gpu", [device("gpu-0"), device("gpu-7")], node="n1", rv="2"))
    assert names(cache.of(inv, n1, True)) == ["n1/gpu-0", "n1/gpu-7"]
    assert calls == ["n1", "n1"]


def test_a_new_node_object_is_matched_again_against_node_selectors() -> None:
    inv = inventory.Inventory()
    inv.upsert(slice_("zoned", [device("x")], pool="zone-a", nodeSelector=ZONE_A, rv="1"))
    cache = NodeDevices()
    assert names(cache.of(inv, node("n1", zone="b"), True)) == []
    assert names(cache.of(inv, node("n1", zone="a"), True)) == ["zone-a/x"]  # relabelled: a new object


def test_the_partitionable_gate_is_part_of_the_key() -> None:
    inv = inventory.Inventory()
    inv.upsert(slice_("per", [device("a", nodeName="n1")], pool="p", perDeviceNodeSelection=True, rv="1"))
    cache, n1 = NodeDevices(), node("n1")
    assert names(cache.of(inv, n1, True)) == ["p/a"]
    assert names(cache.of(inv, n1, False)) == []


def test_the_free_list_follows_allocations_on_the_nodes_pools() -> None:
    inv = inventory.Inventory()
    inv.upsert(slice_("n1-gpu", [device("gpu-0"), device("gpu-1")], node="n1", rv="1"))
    inv.upsert(slice_("n2-gpu", [device("gpu-0")], node="n2", rv="1"))
    cache, n1, n2 = NodeDevices(), node("n1"), node("n2")
    held = AllocatedState()

    def free(n: dict[str, Any]) -> list[str]:
        name = n["metadata"]["name"]
        return [f"{pool.key[1]}/{d.name}" for pool, d in cache.free(name, cache.of(inv, n, True), held)]

    assert free(n1) == ["n1/gpu-0", "n1/gpu-1"] and free(n2) == ["n2/gpu-0"]
    claim = allocated("c", ("n1", "gpu-1"))
    held.add(claim)
    assert free(n1) == ["n1/gpu-0"]
    n2_before = cache.free("n2", cache.of(inv, n2, True), held)
    held.add(allocated("d", ("n1", "gpu-0")))
    assert free(n1) == []
    assert cache.free("n2", cache.of(inv, n2, True), held) is n2_before  # another pool's change: kept
    held.remove(claim)
    assert free(n1) == ["n1/gpu-1"]
