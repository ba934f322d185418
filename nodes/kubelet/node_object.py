"""The Node a hollow kubelet registers, and the status it reports, in the real kubelet's shape.

`registration(shape, ...)` is the object the kubelet POSTs at start (status included, as
`registerWithAPIServer` does): labels (hostname, os, arch, instance type, zone, region, rack and the
beta os/arch the kubelet still sets), the podCIDR (haru has no node-ipam controller, so the kubelet
fills it), providerID, taints; capacity and allocatable (allocatable = capacity minus the default
hard eviction thresholds: memory.available 100Mi, nodefs.available 10%); addresses (InternalIP,
Hostname); the kubelet endpoint port; nodeInfo; the four conditions with the kubelet's reasons.
`conditions(...)` re-renders them with a heartbeat time; `kubelet.py` decides when to write.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any

from nodes import pools
from nodes.kubelet import resources
from nodes.runtime.records import rfc3339

KUBELET_VERSION = "v1.36.3"
OS_IMAGE = "Debian GNU/Linux 12 (bookworm)"
KERNEL = "6.1.0-28-cloud-amd64"
RUNTIME = "containerd://2.1.4"
EVICTION_MEMORY = 100 * 2**20


def _condition(kind: str, status: str, reason: str, message: str, now: str, since: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": since,
            "reason": reason, "message": message}


def conditions(now: datetime, since: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The kubelet's four conditions, in its order; `since` keeps each one's lastTransitionTime."""
    stamp = rfc3339(now)
    since = since or {}
    rows = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    return [_condition(kind, status, reason, message, stamp, since.get(kind, stamp)) for kind, status, reason, message in rows]


def _ki(quantity: str) -> str:
    return f"{resources.whole(quantity) // 1024}Ki"


def capacity(shape: pools.NodeShape, extended: dict[str, str] | None = None) -> dict[str, str]:
    return {"cpu": shape.cpu, "ephemeral-storage": _ki(shape.ephemeral_storage), "hugepages-1Gi": "0",
            "hugepages-2Mi": "0", "memory": _ki(shape.memory), "pods": str(shape.pods), **(extended or {})}


def allocatable(shape: pools.NodeShape, extended: dict[str, str] | None = None) -> dict[str, str]:
    memory = resources.whole(shape.memory) - EVICTION_MEMORY
    storage = resources.whole(shape.ephemeral_storage)
    return {"cpu": shape.cpu, "ephemeral-storage": str(storage - storage // 10), "hugepages-1Gi": "0",
            "hugepages-2Mi": "0", "memory": f"{memory // 1024}Ki", "pods": str(shape.pods), **(extended or {})}


def labels(shape: pools.NodeShape) -> dict[str, str]:
    return {
        **shape.labels,
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": shape.name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": shape.instance_type,
        pools.REGION_LABEL: shape.region,
        pools.ZONE_LABEL: shape.zone,
        pools.RACK_LABEL: shape.rack,
    }


def node_info(shape: pools.NodeShape, boot_id: str) -> dict[str, str]:
    digest = hashlib.sha256(shape.name.encode()).hexdigest()
    return {
        "architecture": "amd64",
        "bootID": boot_id,
        "containerRuntimeVersion": RUNTIME,
        "kernelVersion": KERNEL,
        "kubeProxyVersion": "",
        "kubeletVersion": KUBELET_VERSION,
        "machineID": digest[:32],
        "operatingSystem": "linux",
        "osImage": OS_IMAGE,
        "systemUUID": str(uuid.UUID(digest[32:64])),
        "swap": {},
    }


def status(shape: pools.NodeShape, *, address: str, port: int, boot_id: str, now: datetime,
           since: dict[str, str] | None = None, extended: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "capacity": capacity(shape, extended),
        "allocatable": allocatable(shape, extended),
        "conditions": conditions(now, since),
        "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": shape.name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        "nodeInfo": node_info(shape, boot_id),
        "features": {"supplementalGroupsPolicy": True},
        "runtimeHandlers": [
            {"name": "runc", "features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}},
            {"name": "", "features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}},
        ],
    }


def registration(shape: pools.NodeShape, *, address: str, port: int, boot_id: str, now: datetime) -> dict[str, Any]:
    spec: dict[str, Any] = {"podCIDR": shape.pod_cidr, "podCIDRs": [shape.pod_cidr], "providerID": shape.provider_id}
    if shape.taints:
        spec["taints"] = [dict(t) for t in shape.taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": shape.name,
            "labels": labels(shape),
            "annotations": {"volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": spec,
        "status": status(shape, address=address, port=port, boot_id=boot_id, now=now),
    }
