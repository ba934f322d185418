"""The virtual hardware of one node: GPUs, their MIG placements and NICs, derived from the node's name.

Everything is deterministic in (node name, `DevicesConfig`): UUIDs in NVIDIA's `GPU-xxxxxxxx-xxxx-…`
form (`MIG-…` for MIG devices) hashed from the node name and minor, PCI bus IDs laid out as on an
HGX H100 board (two GPUs per PCIe switch and root complex), NUMA nodes split evenly, and the
NVSwitch partitions Fabric Manager defines for 1, 2, 4 and 8 GPUs. `slices` publishes it,
`container` shows it inside containers; restarting the nodes process rebuilds the same inventory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from nodes.devices import presets
from nodes.devices.config import DevicesConfig

# The eight GPU bus numbers of a DGX/HGX H100 board; more GPUs continue the pattern.
_HGX_BUSES = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)


def _hex_uuid(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def gpu_uuid(node_name: str, minor: int) -> str:
    return "GPU-" + _hex_uuid(f"{node_name}/gpu/{minor}")


def mig_uuid(parent_uuid: str, device_name: str) -> str:
    return "MIG-" + _hex_uuid(f"{parent_uuid}/{device_name}")


def nic_uuid(node_name: str, index: int) -> str:
    return _hex_uuid(f"{node_name}/nic/{index}")


@dataclass(frozen=True)
class MigPartition:
    """One MIG placement the driver can create on demand (dynamic MIG): `gpu-<m>-mig-<p>-<id>-<start>`."""

    parent_minor: int
    profile: presets.MigProfile
    placement_start: int

    @property
    def name(self) -> str:
        # The driver strips the dots: "1g.10gb" → "1g10gb" (toRFC1123Compliant of the profile name).
        profile = self.profile.name.replace(".", "")
        return f"gpu-{self.parent_minor}-mig-{profile}-{self.profile.profile_id}-{self.placement_start}"


@dataclass(frozen=True)
class Gpu:
    minor: int
    uuid: str
    model: presets.GpuModel
    pci_bus_id: str
    pcie_root: str
    numa_node: int
    mig: tuple[MigPartition, ...] = ()
    shared: bool = False
    module_id: int = 0  # Fabric Manager's GPU module ID (1-based); 0 = no NVSwitch domain
    partitions: dict[int, int] = field(default_factory=dict)  # FM partition size → partition ID

    @property
    def name(self) -> str:
        return f"gpu-{self.minor}"


@dataclass(frozen=True)
class Nic:
    index: int
    uuid: str
    pci_bus_id: str
    pcie_root: str
    numa_node: int

    @property
    def name(self) -> str:
        return f"nic-{self.index}"


@dataclass(frozen=True)
class Inventory:
    node_name: str
    config: DevicesConfig
    gpus: tuple[Gpu, ...] = ()
    nics: tuple[Nic, ...] = ()

    def gpu(self, name: str) -> Gpu | None:
        return next((g for g in self.gpus if g.name == name), None)

    def device_names(self) -> list[str]:
        names = []
        for gpu in self.gpus:
            names.append(gpu.name)
            names.extend(p.name for p in gpu.mig)
        names.extend(n.name for n in self.nics)
        return names

    def parent_of(self, device: str) -> Gpu | None:
        """The physical GPU a device name lives on (itself for a full GPU), or None."""
        for gpu in self.gpus:
            if gpu.name == device or any(p.name == device for p in gpu.mig):
                return gpu
        return None


def _bus(index: int) -> int:
    if index < len(_HGX_BUSES):
        return _HGX_BUSES[index]
    return 0x1C + 0x10 * index


def fabric_partitions(gpus: int) -> list[tuple[int, ...]]:
    """Fabric Manager's default partition table: all GPUs, then halves, quarters, … single GPUs.

    For an 8-GPU HGX board that is partition 0 = GPUs 1–8, 1–2 = halves, 3–6 = pairs, 7–14 =
    single GPUs (module IDs are 1-based), the table in NVIDIA's Fabric Manager guide.
    """
    table: list[tuple[int, ...]] = []
    size = gpus
    while size >= 1:
        for start in range(0, gpus, size):
            table.append(tuple(range(start + 1, start + size + 1)))
        size //= 2
    return table


CLIQUE_LABEL = "nvidia.com/gpu.clique"


def node_labels(config: DevicesConfig) -> dict[str, str]:
    """Labels the NVIDIA stack puts on a GPU node: the multi-node NVLink clique (compute-domain plugin)."""
    return {CLIQUE_LABEL: config.clique} if config.clique and config.gpus else {}


def build(node_name: str, config: DevicesConfig) -> Inventory:
    gpus: list[Gpu] = []
    model = config.model
    table = fabric_partitions(config.gpus) if config.nvlink else []
    for minor in range(config.gpus if model is not None else 0):
        assert model is not None
        bus = _bus(minor)
        root_bus = _bus(minor - minor % 2) - 3  # the root port sits a few buses above its switch
        partitions = {len(members): pid for pid, members in enumerate(table) if minor + 1 in members}
        mig: tuple[MigPartition, ...] = ()
        if minor in config.mig_gpus:
            mig = tuple(MigPartition(minor, p, start)
                        for p in model.mig_profiles if p.name in config.mig_profiles
                        for start in p.placement_starts)
        gpus.append(Gpu(
            minor=minor, uuid=gpu_uuid(node_name, minor), model=model,
            pci_bus_id=f"0000:{bus:02x}:00.0", pcie_root=f"pci0000:{root_bus:02x}",
            numa_node=minor * config.numa_nodes // config.gpus, mig=mig,
            shared=minor in config.shared_gpus,
            module_id=minor + 1 if config.nvlink else 0, partitions=partitions,
        ))
    nics = tuple(
        Nic(index=i, uuid=nic_uuid(node_name, i), pci_bus_id=f"0000:{_bus(i) + 1:02x}:00.0",
            pcie_root=f"pci0000:{_bus(i - i % 2) - 3:02x}",
            numa_node=i * config.numa_nodes // max(config.nics, 1))
        for i in range(config.nics)
    )
    return Inventory(node_name, config, tuple(gpus), nics)
