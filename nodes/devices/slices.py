"""The ResourceSlices a node's virtual devices make, as `gpu.nvidia.com`'s kubelet plugin publishes them.

Pure: `desired(inventory, health)` gives, per driver, the ordered slice specs of the node's pool
(the pool is named after the node). Without MIG all GPUs share one slice (the plugin's classic
path); with dynamic MIG (KEP-4815) the 1.35+ split layout: first the SharedCounters slice (one
counter set `gpu-<minor>-counter-set` per GPU), then one device-only slice per GPU holding the
full GPU and its partitions, all consuming the same counters (`driver.go`, `partitions.go`).
NICs with an attach step go in their own driver's pool. `publisher` writes what this returns.
"""

from __future__ import annotations

import re
from typing import Any

from nodes.devices import presets
from nodes.devices.health import NodeHealth
from nodes.devices.names import GPU_DRIVER, NIC_ATTACH_FAILED, NIC_ATTACHED, NIC_DRIVER
from nodes.devices.inventory import Gpu, Inventory, MigPartition, Nic

COUNTER_SETS_PER_SLICE = 8  # ResourceSliceSpec.sharedCounters holds at most 8 sets
STEP = presets.MIB  # consumable memory is handed out in 1Mi steps (consumable_shares.go)
_BINARY = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))


def quantity(n: int) -> str:
    """A byte count as Go's `resource.NewQuantity(n, BinarySI).String()` writes it."""
    if n == 0:
        return "0"
    for suffix, shift in _BINARY:
        if n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


def version(text: str) -> str:
    """Masterminds `semver.MustParse(v).String()`: "9.0" → "9.0.0", "575.57.8" stays."""
    parts = text.split(".")
    return ".".join((parts + ["0", "0"])[:3])


def _counter_name(capacity: str) -> str:
    """camelToDNSName: "copyEngines" → "copy-engines"."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", capacity).lower()


def _common_attributes(gpu: Gpu) -> dict[str, Any]:
    model = gpu.model
    attrs: dict[str, Any] = {
        "productName": {"string": model.product_name},
        "brand": {"string": model.brand},
        "architecture": {"string": model.architecture},
        "cudaComputeCapability": {"version": version(model.cuda_compute_capability)},
        "driverVersion": {"version": version(model.driver_version)},
        "cudaDriverVersion": {"version": version(model.cuda_driver_version)},
        # Released driver charts (v25.x) publish `pcieBusID`; kubernetes-sigs v0.4+ the standard
        # `resource.kubernetes.io/pciBusID`. Both are published so selectors for either match.
        "pcieBusID": {"string": gpu.pci_bus_id},
        "resource.kubernetes.io/pciBusID": {"string": gpu.pci_bus_id},
        "resource.kubernetes.io/pcieRoot": {"string": gpu.pcie_root},
        "resource.kubernetes.io/numaNode": {"int": gpu.numa_node},
    }
    if gpu.module_id:
        # Fabric Manager attributes (gate FabricManagerPartitioning): the NVSwitch domain.
        attrs["gpuModuleID"] = {"int": gpu.module_id}
        for size, partition in sorted(gpu.partitions.items()):
            attrs[f"partition{size}"] = {"int": partition}
    return attrs


def _mig_capacities(profile: presets.MigProfile) -> dict[str, int]:
    return {
        "multiprocessors": profile.multiprocessors,
        "copyEngines": profile.copy_engines,
        "decoders": profile.decoders,
        "encoders": profile.encoders,
        "jpegEngines": profile.jpeg_engines,
        "ofaEngines": profile.ofa_engines,
        "memory": profile.memory_bytes,
    }


def _max_capacities(gpu: Gpu) -> dict[str, int]:
    """What the driver learns walking all MIG profiles: the largest value of each capacity."""
    out: dict[str, int] = {}
    for profile in gpu.model.mig_profiles:
        for name, value in _mig_capacities(profile).items():
            out[name] = max(out.get(name, 0), value)
    return out


def _capacity(values: dict[str, int]) -> dict[str, Any]:
    return {name: {"value": quantity(v)} for name, v in sorted(values.items())}


def _counters(values: dict[str, int], slice_start: int, slice_count: int) -> dict[str, Any]:
    counters = {_counter_name(name): {"value": quantity(v)} for name, v in values.items()}
    for i in range(slice_start, slice_start + slice_count):
        counters[f"memory-slice-{i}"] = {"value": "1"}
    return dict(sorted(counters.items()))


def counter_set_name(gpu: Gpu) -> str:
    return f"{gpu.name}-counter-set"


def _share(device: dict[str, Any], mode: str) -> None:
    """applyConsumableShares: many claims may hold the GPU, each taking memory (and shares)."""
    device["allowMultipleAllocations"] = True
    memory = device.get("capacity", {}).get("memory")
    if memory is None:
        return
    total = _parse_binary(memory["value"]) // STEP * STEP
    memory["value"] = quantity(total)
    if mode == "memory":
        memory["requestPolicy"] = {"default": quantity(total),
                                   "validRange": {"min": quantity(STEP), "max": quantity(total), "step": quantity(STEP)}}
        return
    memory["requestPolicy"] = {"default": "0", "validRange": {"min": "0", "max": quantity(total), "step": quantity(STEP)}}
    if mode != "unlimited":
        shares = int(mode)
        device["capacity"]["shares"] = {"value": str(shares), "requestPolicy": {
            "default": "1", "validRange": {"min": "1", "max": str(shares), "step": "1"}}}
        device["capacity"] = dict(sorted(device["capacity"].items()))


def _parse_binary(text: str) -> int:
    for suffix, shift in _BINARY:
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) << shift
    return int(text)


def gpu_device(gpu: Gpu, health: NodeHealth, partitionable: bool, share_mode: str = "memory") -> dict[str, Any]:
    attrs = {"type": {"string": "gpu"}, "uuid": {"string": gpu.uuid}, **_common_attributes(gpu)}
    device: dict[str, Any] = {"name": gpu.name, "attributes": dict(sorted(attrs.items()))}
    if partitionable and gpu.mig:
        maxcap = _max_capacities(gpu)
        device["capacity"] = _capacity(maxcap)
        device["consumesCounters"] = [{"counterSet": counter_set_name(gpu),
                                       "counters": _counters(maxcap, 0, gpu.model.memory_slices)}]
    else:
        device["capacity"] = _capacity({"memory": gpu.model.memory_bytes})
    if gpu.shared:
        _share(device, share_mode)
    taints = health.taints_for(gpu.name)
    if taints:
        device["taints"] = taints
    return device


def mig_device(gpu: Gpu, part: MigPartition, health: NodeHealth) -> dict[str, Any]:
    attrs = {"type": {"string": "mig"}, "parentUUID": {"string": gpu.uuid},
             "profile": {"string": part.profile.name}, **_common_attributes(gpu)}
    # FM attributes belong to the physical GPU only (the driver adds them in GpuInfo.Attributes).
    for key in [k for k in attrs if k == "gpuModuleID" or re.fullmatch(r"partition\d+", k)]:
        del attrs[key]
    caps = _mig_capacities(part.profile)
    device: dict[str, Any] = {
        "name": part.name,
        "attributes": dict(sorted(attrs.items())),
        "capacity": _capacity(caps),
        "consumesCounters": [{"counterSet": counter_set_name(gpu),
                              "counters": _counters(caps, part.placement_start, part.profile.placement_size)}],
    }
    taints = health.taints_for(part.name, gpu.name)
    if taints:
        device["taints"] = taints
    return device


def counter_set(gpu: Gpu) -> dict[str, Any]:
    return {"name": counter_set_name(gpu), "counters": _counters(_max_capacities(gpu), 0, gpu.model.memory_slices)}


def nic_device(nic: Nic, health: NodeHealth) -> dict[str, Any]:
    device: dict[str, Any] = {
        "name": nic.name,
        "attributes": {
            "type": {"string": "nic"},
            "uuid": {"string": nic.uuid},
            "resource.kubernetes.io/pciBusID": {"string": nic.pci_bus_id},
            "resource.kubernetes.io/pcieRoot": {"string": nic.pcie_root},
            "resource.kubernetes.io/numaNode": {"int": nic.numa_node},
        },
        # The scheduler waits in PreBind until the driver reports the attach (KEP-5007).
        "bindsToNode": True,
        "bindingConditions": [NIC_ATTACHED],
        "bindingFailureConditions": [NIC_ATTACH_FAILED],
    }
    taints = health.taints_for(nic.name)
    if taints:
        device["taints"] = taints
    return device


def desired(inventory: Inventory, health: NodeHealth) -> dict[str, list[dict[str, Any]]]:
    """Driver name → the ordered slice bodies (`devices` or `sharedCounters`) of this node's pool."""
    out: dict[str, list[dict[str, Any]]] = {}
    mode = inventory.config.share_mode
    if inventory.gpus:
        if any(g.mig for g in inventory.gpus):
            sets = [counter_set(g) for g in inventory.gpus if g.mig]
            bodies: list[dict[str, Any]] = [{"sharedCounters": sets[i:i + COUNTER_SETS_PER_SLICE]}
                                            for i in range(0, len(sets), COUNTER_SETS_PER_SLICE)]
            for gpu in inventory.gpus:
                devices = [gpu_device(gpu, health, True, mode)] + [mig_device(gpu, p, health) for p in gpu.mig]
                bodies.append({"devices": devices})
            out[GPU_DRIVER] = bodies
        else:
            out[GPU_DRIVER] = [{"devices": [gpu_device(g, health, False, mode) for g in inventory.gpus]}]
    if inventory.nics:
        out[NIC_DRIVER] = [{"devices": [nic_device(n, health) for n in inventory.nics]}]
    return out
