"""The allocator on what the hollow nodes publish (`nodes/devices/slices.py`): `gpu.nvidia.com` GPUs
with dynamic MIG (a counters slice, then per GPU the full device and its partitions), and GPUs
shared by memory. The classes are the NVIDIA chart's selectors."""

from __future__ import annotations

from typing import Any

from nodes.devices import config, health, inventory as nodeinventory, slices
from scheduler.dra import allocator, inventory
from tests.scheduler.dra.builders import claim, device_class, exact, node

GPU = device_class("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'")
MIG = device_class("mig.nvidia.com", "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'")
CLASSES = {c["metadata"]["name"]: c for c in (GPU, MIG)}


def published(node_name: str, raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The ResourceSlice objects `publisher.py` would write for this node's config."""
    node_health = health.NodeHealth()
    bodies = slices.desired(nodeinventory.build(node_name, config.parse(raw)), node_health)
    out = []
    for driver, items in bodies.items():
        for index, body in enumerate(items):
            out.append({"metadata": {"name": f"{node_name}-{driver}-{index}", "resourceVersion": "1"},
                        "spec": {"driver": driver, "nodeName": node_name,
                                 "pool": {"name": node_name, "generation": 1, "resourceSliceCount": len(items)},
                                 **body}})
    return out


def allocate(inv: inventory.Inventory, claims: list[dict[str, Any]], held: list[dict[str, Any]] = (),
             node_name: str = "gpu-node-0") -> allocator.Outcome:
    a = allocator.Allocator(inventory=inv, classes=CLASSES, allocated=allocator.AllocatedState.of(held))
    return a.allocate(node(node_name), claims)


def with_allocation(c: dict[str, Any], outcome: allocator.Outcome, index: int = 0) -> dict[str, Any]:
    return {**c, "status": {"allocation": outcome.allocations[index]}}


def devices_of(outcome: allocator.Outcome) -> list[str]:
    assert outcome.allocations is not None, outcome.reason
    return [r["device"] for a in outcome.allocations for r in a["devices"]["results"]]


def mig_inventory() -> inventory.Inventory:
    inv = inventory.Inventory()
    for s in published("gpu-node-0", {"gpus": 1, "model": "h100", "mig": True}):
        inv.upsert(s)
    return inv


def test_a_full_gpu_and_a_mig_partition_are_allocated_from_the_published_slices() -> None:
    inv = mig_inventory()
    assert devices_of(allocate(inv, [claim("full", exact("gpu", "gpu.nvidia.com"))])) == ["gpu-0"]
    mig = allocate(inv, [claim("part", exact("mig", "mig.nvidia.com",
                                             "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"))])
    assert devices_of(mig) == ["gpu-0-mig-1g10gb-19-0"]
    assert mig.allocations[0]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["gpu-node-0"]


def test_the_full_gpu_and_a_mig_partition_compete_for_the_same_counters() -> None:
    inv = mig_inventory()
    full = claim("full", exact("gpu", "gpu.nvidia.com"))
    part = claim("part", exact("mig", "mig.nvidia.com"))
    got_full = allocate(inv, [full])
    assert allocate(inv, [part], held=[with_allocation(full, got_full)]).reason == "cannot allocate all claims"
    got_part = allocate(inv, [part])
    assert devices_of(got_part) == ["gpu-0-mig-1g10gb-19-0"]
    assert allocate(inv, [full], held=[with_allocation(part, got_part)]).reason == "cannot allocate all claims"
    # Both in one pod: no way, whichever is tried first.
    assert allocate(inv, [full, part]).reason == "cannot allocate all claims"


def test_seven_smallest_partitions_fill_an_h100_and_an_eighth_does_not_fit() -> None:
    inv = mig_inventory()
    small = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
    seven = allocate(inv, [claim("seven", exact("mig", "mig.nvidia.com", small, count=7))])
    assert len(set(devices_of(seven))) == 7
    held = [with_allocation(claim("seven", exact("mig", "mig.nvidia.com", small, count=7)), seven)]
    assert allocate(inv, [claim("one", exact("mig", "mig.nvidia.com"))], held=held).reason == "cannot allocate all claims"


def test_two_pods_share_one_gpu_by_memory() -> None:
    inv = inventory.Inventory()
    for s in published("gpu-node-0", {"gpus": 1, "model": "h100", "sharedGpu": True}):
        inv.upsert(s)
    # The H100 publishes 81559Mi: two 30Gi shares fit, a third does not, nor does a 40Gi one beside one.
    share = claim("a", exact("gpu", "gpu.nvidia.com", capacity={"requests": {"memory": "30Gi"}}))
    first = allocate(inv, [share])
    second = allocate(inv, [share], held=[with_allocation(share, first)])
    assert devices_of(first) == devices_of(second) == ["gpu-0"]
    shares = [o.allocations[0]["devices"]["results"][0] for o in (first, second)]
    assert shares[0]["consumedCapacity"] == {"memory": "30Gi"} and shares[0]["shareID"] != shares[1]["shareID"]
    held = [with_allocation(share, first), with_allocation(share, second)]
    assert allocate(inv, [share], held=held).reason == "cannot allocate all claims"
    big = claim("b", exact("gpu", "gpu.nvidia.com", capacity={"requests": {"memory": "52Gi"}}))
    assert allocate(inv, [big], held=held[:1]).reason == "cannot allocate all claims"
    assert devices_of(allocate(inv, [big])) == ["gpu-0"]


def test_a_node_sees_only_its_own_gpus() -> None:
    inv = mig_inventory()
    for s in published("gpu-node-1", {"gpus": 2, "model": "a100"}):
        inv.upsert(s)
    assert devices_of(allocate(inv, [claim("c", exact("gpu", "gpu.nvidia.com", count=2))], node_name="gpu-node-1")) \
        == ["gpu-0", "gpu-1"]
    assert allocate(inv, [claim("c", exact("gpu", "gpu.nvidia.com", count=2))]).reason == "cannot allocate all claims"
