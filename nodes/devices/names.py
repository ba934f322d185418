"""The names the virtual devices go by on the wire: drivers, taint keys, binding condition types.

`gpu.nvidia.com` and its taint keys are NVIDIA's (`device_health.go`); `nic.haru.dev` is haru's
own late-binding NIC driver (no real driver is imitated there, so it says so in its domain).
Every module of `nodes.devices` takes its names from here.
"""

from __future__ import annotations

GPU_DRIVER = "gpu.nvidia.com"
NIC_DRIVER = "nic.haru.dev"
DRIVERS = (GPU_DRIVER, NIC_DRIVER)

TAINT_GPU_LOST = GPU_DRIVER + "/gpu-lost"
TAINT_XID = GPU_DRIVER + "/xid"
TAINT_UNMONITORED = GPU_DRIVER + "/unmonitored"
TAINT_NIC_DOWN = NIC_DRIVER + "/link-down"

NIC_ATTACHED = NIC_DRIVER + "/attached"
NIC_ATTACH_FAILED = NIC_DRIVER + "/attach-failed"


def is_nic(device: str) -> bool:
    return device.startswith("nic-")
