"""The GPU models a virtual node can carry (`--gpu-model h100|h200|a100|l40s|none`), as NVML reports them.

Each preset holds what `gpu.nvidia.com`'s kubelet plugin reads from NVML and publishes: the product
name, brand ("Nvidia", go-nvlib's spelling of NVML_BRAND_NVIDIA), architecture, memory, CUDA compute
capability, driver and CUDA driver versions, and the MIG GPU-instance profiles with their placements
(what `nvidia-smi mig -lgip` / `-lgipp` list). `config.parse` picks one by name; `inventory` turns it
into devices. Figures are the vendors' published ones for the SXM/PCIe parts named.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class MigProfile:
    """One GPU-instance profile: name ("1g.10gb"), NVML profile ID, engines, memory, placements."""

    name: str
    profile_id: int
    multiprocessors: int
    copy_engines: int
    decoders: int
    encoders: int
    jpeg_engines: int
    ofa_engines: int
    memory_mb: int  # nvmlGpuInstanceProfileInfo_t.memorySizeMB (MiB, despite the name)
    placement_size: int  # memory slices one instance takes
    placement_starts: tuple[int, ...]

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * MIB


@dataclass(frozen=True)
class GpuModel:
    key: str
    product_name: str
    brand: str
    architecture: str
    memory_mib: int  # as `nvidia-smi` reports the framebuffer total
    cuda_compute_capability: str
    driver_version: str
    cuda_driver_version: str
    multiprocessors: int
    memory_slices: int  # MIG memory slices; 0 = not MIG-capable
    mig_profiles: tuple[MigProfile, ...] = ()
    nvlink: bool = False  # sold as HGX boards with NVSwitch (single-node NVLink domain)

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MIB

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig_profiles)

    def profile(self, name: str) -> MigProfile | None:
        return next((p for p in self.mig_profiles if p.name == name), None)


def _hopper_profiles(sizes: tuple[str, str, str, str, str, str], mem: tuple[int, int, int, int, int, int],
                     ce_full: int) -> tuple[MigProfile, ...]:
    """H100/H200 share the GI layout (132 SMs, 8 memory slices); only memory differs."""
    one, one_big, two, three, four, seven = sizes
    m1, m1b, m2, m3, m4, m7 = mem
    return (
        MigProfile(one, 19, 16, 1, 1, 0, 1, 0, m1, 1, (0, 1, 2, 3, 4, 5, 6)),
        MigProfile(one_big, 15, 26, 1, 1, 0, 1, 0, m1b, 2, (0, 2, 4, 6)),
        MigProfile(two, 14, 32, 2, 2, 0, 2, 0, m2, 2, (0, 2, 4)),
        MigProfile(three, 9, 60, 3, 3, 0, 3, 0, m3, 4, (0, 4)),
        MigProfile(four, 5, 64, 4, 4, 0, 4, 0, m4, 4, (0,)),
        MigProfile(seven, 0, 132, ce_full, 7, 0, 7, 1, m7, 8, (0,)),
    )


MODELS: dict[str, GpuModel] = {
    "h100": GpuModel(
        key="h100", product_name="NVIDIA H100 80GB HBM3", brand="Nvidia", architecture="Hopper",
        memory_mib=81559, cuda_compute_capability="9.0", driver_version="550.54.15",
        cuda_driver_version="12.4", multiprocessors=132, memory_slices=8,
        mig_profiles=_hopper_profiles(("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
                                      (9984, 20096, 20096, 40448, 40448, 81152), 8),
        nvlink=True,
    ),
    "h200": GpuModel(
        key="h200", product_name="NVIDIA H200", brand="Nvidia", architecture="Hopper",
        memory_mib=143771, cuda_compute_capability="9.0", driver_version="570.133.20",
        cuda_driver_version="12.8", multiprocessors=132, memory_slices=8,
        mig_profiles=_hopper_profiles(("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
                                      (16640, 33536, 33536, 69888, 69888, 140544), 8),
        nvlink=True,
    ),
    "a100": GpuModel(
        key="a100", product_name="NVIDIA A100-SXM4-80GB", brand="Nvidia", architecture="Ampere",
        memory_mib=81920, cuda_compute_capability="8.0", driver_version="575.57.8",
        cuda_driver_version="12.9", multiprocessors=108, memory_slices=8,
        mig_profiles=(
            MigProfile("1g.10gb", 19, 14, 1, 0, 0, 0, 0, 9728, 1, (0, 1, 2, 3, 4, 5, 6)),
            MigProfile("1g.20gb", 15, 14, 1, 1, 0, 0, 0, 19968, 2, (0, 2, 4, 6)),
            MigProfile("2g.20gb", 14, 28, 2, 1, 0, 0, 0, 19968, 2, (0, 2, 4)),
            MigProfile("3g.40gb", 9, 42, 3, 2, 0, 0, 0, 40192, 4, (0, 4)),
            MigProfile("4g.40gb", 5, 56, 4, 2, 0, 0, 0, 40192, 4, (0,)),
            MigProfile("7g.80gb", 0, 98, 7, 5, 0, 1, 1, 80896, 8, (0,)),
        ),
        nvlink=True,
    ),
    "l40s": GpuModel(
        key="l40s", product_name="NVIDIA L40S", brand="Nvidia", architecture="Ada Lovelace",
        memory_mib=46068, cuda_compute_capability="8.9", driver_version="570.133.20",
        cuda_driver_version="12.8", multiprocessors=142, memory_slices=0,
    ),
}

NONE = "none"
CHOICES = (*MODELS, NONE)  # what `--gpu-model` accepts, in help order
DEFAULT = "h100"
