"""What a container sees of its allocated GPUs: environment, `nvidia-smi -L`, `/dev` entries.

`visible(results, inventory)` picks this node's `gpu.nvidia.com` devices from allocation results
(`claims.container_results`), in the order `nvidia-smi` enumerates them (PCI bus order, MIG devices
under their parent). `container_env` gives `NVIDIA_VISIBLE_DEVICES` (the UUIDs, as the device
plugin's envvar strategy and the container toolkit read them) and `CUDA_VISIBLE_DEVICES` (the
container-local CUDA ordinals). NVIDIA's DRA plugin itself injects device nodes through CDI and
sets `NVIDIA_VISIBLE_DEVICES=void` (nvcdi's common edits); `cdi=True` gives that form. The kubelet
puts these into the container's environment and the shell's context (`nodes/shell.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from nodes.devices.names import GPU_DRIVER
from nodes.devices.inventory import Gpu, Inventory, MigPartition, mig_uuid

# Character devices the NVIDIA runtime injects next to the per-GPU ones.
CONTROL_DEVICES = ("nvidia-uvm", "nvidia-uvm-tools", "nvidiactl")


@dataclass
class Visible:
    gpu: Gpu
    full: bool = False  # the whole GPU (else only the MIG devices below)
    mig: list[MigPartition] = field(default_factory=list)


def visible(results: Iterable[dict[str, Any]], inventory: Inventory) -> list[Visible]:
    by_minor: dict[int, Visible] = {}
    for result in results:
        if result.get("driver") != GPU_DRIVER or result.get("pool") != inventory.node_name:
            continue
        name = str(result.get("device", ""))
        gpu = inventory.parent_of(name)
        if gpu is None:
            continue
        entry = by_minor.setdefault(gpu.minor, Visible(gpu))
        if name == gpu.name:
            entry.full = True
        else:
            part = next(p for p in gpu.mig if p.name == name)
            if part not in entry.mig:
                entry.mig.append(part)
    out = [by_minor[m] for m in sorted(by_minor)]
    for entry in out:
        entry.mig.sort(key=lambda p: (p.placement_start, p.profile.profile_id))
    return out


def _results(claim_allocations: Iterable[Any]) -> list[dict[str, Any]]:
    """Accepts allocation results, `claims.Held` values, or allocated ResourceClaim objects."""
    out: list[dict[str, Any]] = []
    for item in claim_allocations:
        if hasattr(item, "result"):
            out.append(item.result)
        elif isinstance(item, dict) and "status" in item:
            out.extend(((item["status"].get("allocation") or {}).get("devices") or {}).get("results") or [])
        else:
            out.append(item)
    return out


def uuids(inventory: Inventory) -> dict[str, str]:
    """Device name → UUID for every GPU and MIG device of the node (MIG UUIDs as created on prepare)."""
    out: dict[str, str] = {}
    for gpu in inventory.gpus:
        out[gpu.name] = gpu.uuid
        for part in gpu.mig:
            out[part.name] = mig_uuid(gpu.uuid, part.name)
    return out


def _cuda_devices(shown: list[Visible]) -> list[str]:
    """UUIDs of the CUDA devices, in enumeration order: a MIG device, or a GPU held whole."""
    ids: list[str] = []
    for entry in shown:
        if entry.full and not entry.mig:
            ids.append(entry.gpu.uuid)
        ids.extend(mig_uuid(entry.gpu.uuid, p.name) for p in entry.mig)
    return ids


def container_env(claim_allocations: Iterable[Any], node_devices: Inventory, *, cdi: bool = False) -> dict[str, str]:
    shown = visible(_results(claim_allocations), node_devices)
    ids = _cuda_devices(shown)
    if not ids:
        return {}
    if cdi:
        return {"NVIDIA_VISIBLE_DEVICES": "void"}
    return {"NVIDIA_VISIBLE_DEVICES": ",".join(ids), "CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(len(ids)))}


def nvidia_smi_list(shown: list[Visible]) -> list[str]:
    """`nvidia-smi -L` lines: `GPU 0: <product> (UUID: GPU-…)`, then `  MIG <profile> Device  0: …`."""
    lines: list[str] = []
    for index, entry in enumerate(shown):
        lines.append(f"GPU {index}: {entry.gpu.model.product_name} (UUID: {entry.gpu.uuid})")
        for number, part in enumerate(entry.mig):
            uuid = mig_uuid(entry.gpu.uuid, part.name)
            lines.append(f"  MIG {part.profile.name:<12}Device {number:>2}: (UUID: {uuid})")
    return lines


def nvidia_smi_lines(claim_allocations: Iterable[Any], node_devices: Inventory) -> list[str]:
    return nvidia_smi_list(visible(_results(claim_allocations), node_devices))


def dev_entries(shown: list[Visible]) -> list[str]:
    """The `/dev` names the GPUs add: `nvidia<minor>` per GPU, the control nodes, `nvidia-caps` for MIG."""
    if not shown:
        return []
    names = [f"nvidia{entry.gpu.minor}" for entry in shown]
    names.extend(CONTROL_DEVICES)
    if any(entry.mig for entry in shown):
        names.append("nvidia-caps")
    return names
