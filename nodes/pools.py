"""Node pools: the shape of a hollow cluster, and the one Node per (pool, index) it expands to.

A `Pool` is what a cluster file or the `haru up` flags describe (count, cpu, memory, pods,
labels, taints, zone and rack spread, devices); `expand(pools)` turns pools into `NodeShape`s with
their names, zone, rack, podCIDR and instance type fixed. `devices` is passed through untouched to
the DRA driver (`nodes/devices/`, behind `kubelet/devices_seam.py`); the flags give it the shape
`{"gpus": G, "model": M}` that `nodes/devices/config.py` documents. `default_pools(...)` is the
cluster `haru up` starts without `-f`. Read by `cluster_file.py`, `kubelet/` and `cluster/cli.py`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

# Well-known topology labels. There is no upstream-registered rack label; `topology.kubernetes.io/rack`
# is the key the 1.36 Workload API's own topology examples name (shared/reference/api-1.36.md §1.8)
# and the one Kueue's TAS and the PodGroup benchmark workloads key on, so a topology constraint
# works against the default cluster without configuration.
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
RACK_LABEL = "topology.kubernetes.io/rack"
DEFAULT_REGION = "local"
GPU_MODELS = ("h100", "h200", "a100", "l40s")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# One /24 per node, as node-ipam hands them out; a /9 holds 32768 of them (the benchmark's 5,000
# nodes fit, kind's 10.244.0.0/16 would stop at 256) and stays clear of the 10.96.0.0/12 services.
POD_NETWORK = ipaddress.ip_network("10.128.0.0/9")
MAX_NODES = 2 ** (24 - POD_NETWORK.prefixlen)

# What an 8-GPU node of each model is sold as (AWS shapes: vCPU, memory); a CPU node is an m7i.4xlarge.
GPU_INSTANCE = {
    "h100": ("p5.48xlarge", "192", "2048Gi"),
    "h200": ("p5en.48xlarge", "192", "2048Gi"),
    "a100": ("p4de.24xlarge", "96", "1152Gi"),  # the 80 GB A100s, as devices/presets.py models them
    "l40s": ("g6e.48xlarge", "192", "1536Gi"),
}
CPU_INSTANCE = ("m7i.4xlarge", "16", "64Gi")


@dataclass(frozen=True)
class Pool:
    name: str
    count: int
    cpu: str = CPU_INSTANCE[1]
    memory: str = CPU_INSTANCE[2]
    pods: int = 110
    ephemeral_storage: str = "100Gi"
    instance_type: str = CPU_INSTANCE[0]
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()
    zones: tuple[str, ...] = ("local-a",)
    racks: tuple[str, ...] = ("rack-1", "rack-2")
    region: str = DEFAULT_REGION
    devices: dict[str, Any] = field(default_factory=dict)  # the DRA driver's business (devices/config.py)
    userns_blocks: int = 65535  # ID blocks of idsPerPod above 65536 (the kubelet's default range: 2^32 - 65536)


@dataclass(frozen=True)
class NodeShape:
    """One node as its kubelet registers it; everything a Node object needs that is not live state."""

    name: str
    pool: str
    index: int  # position in the whole cluster: picks the podCIDR
    cpu: str
    memory: str
    pods: int
    ephemeral_storage: str
    instance_type: str
    zone: str
    rack: str
    region: str
    labels: dict[str, str]
    taints: tuple[dict[str, str], ...]
    devices: dict[str, Any]
    userns_blocks: int

    @property
    def pod_cidr(self) -> str:
        return f"{ipaddress.ip_address(int(POD_NETWORK.network_address) + (self.index << 8))}/24"

    @property
    def provider_id(self) -> str:
        # Cloud controllers delete nodes without one (kwok's known issue); ours names the simulator.
        return f"haru://{self.name}"

    @property
    def gpu_count(self) -> int:
        """Full GPUs, read from the `devices` mapping's `gpus` (the driver's own check is `devices.config`)."""
        gpus = self.devices.get("gpus") if isinstance(self.devices, dict) else None
        return gpus if isinstance(gpus, int) and self.gpu_model != "none" else 0

    @property
    def gpu_model(self) -> str:
        model = self.devices.get("model", "h100") if isinstance(self.devices, dict) else "none"
        return model if isinstance(model, str) else "none"


def expand(pools: list[Pool]) -> list[NodeShape]:
    """Nodes `<pool>-<i>`; within a pool, node i goes to zone i mod zones and rack i mod racks."""
    shapes: list[NodeShape] = []
    for pool in pools:
        for i in range(pool.count):
            shapes.append(NodeShape(
                name=f"{pool.name}-{i}", pool=pool.name, index=len(shapes), cpu=pool.cpu, memory=pool.memory,
                pods=pool.pods, ephemeral_storage=pool.ephemeral_storage, instance_type=pool.instance_type,
                zone=pool.zones[i % len(pool.zones)], rack=pool.racks[i % len(pool.racks)], region=pool.region,
                labels=dict(pool.labels), taints=pool.taints, devices=pool.devices, userns_blocks=pool.userns_blocks))
    if len(shapes) > MAX_NODES:
        raise ValueError(f"{len(shapes)} nodes do not fit the pod network {POD_NETWORK} ({MAX_NODES} /24s)")
    return shapes


def default_pools(nodes: int = 4, gpus_per_node: int = 8, gpu_model: str = "h100") -> list[Pool]:
    """`haru up`'s cluster: half the nodes (at least one) carry `gpus_per_node` GPUs, the rest are CPU-only."""
    if nodes < 0:
        raise ValueError(f"--nodes must be 0 or more, got {nodes}")
    if gpus_per_node < 0:
        raise ValueError(f"--gpus-per-node must be 0 or more, got {gpus_per_node}")
    if gpu_model != "none" and gpu_model not in GPU_MODELS:
        raise ValueError(f"--gpu-model must be one of {', '.join(GPU_MODELS + ('none',))}, got {gpu_model!r}")
    with_gpus = gpu_model != "none" and gpus_per_node > 0 and nodes > 0
    gpu_nodes = max(1, nodes // 2) if with_gpus else 0
    pools = []
    if gpu_nodes:
        instance, cpu, memory = GPU_INSTANCE[gpu_model]
        pools.append(Pool("gpu", gpu_nodes, cpu=cpu, memory=memory, instance_type=instance,
                          ephemeral_storage="1Ti", devices={"gpus": gpus_per_node, "model": gpu_model}))
    if nodes - gpu_nodes:
        pools.append(Pool("cpu", nodes - gpu_nodes))
    return pools
