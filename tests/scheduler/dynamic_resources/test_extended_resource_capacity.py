"""Issue 11: plain pods asking `nvidia.com/gpu` through a DeviceClass's `extendedResourceName` get
each GPU at most once, and the GPUs of deleted pods are free again for the next pods.

An embedded cluster of hollow GPU nodes (`haru_cluster`), driven with the kubernetes 36.0.3 client:
more four-GPU pods than the cluster has room for, then deleting them all and filling it again.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from cluster.pytest_plugin import HaruCluster

pytestmark = pytest.mark.slow
NODES, GPUS = 8, 4
GPU_NODES = NODES // 2  # haru's default pools: half the nodes carry the GPUs
Obj = dict[str, Any]
GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
             "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}],
                      "extendedResourceName": "nvidia.com/gpu"}}


def gpu_pod(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "gpu4"}},
            "spec": {"containers": [{"name": "main", "image": "busybox",
                                     "resources": {"limits": {"nvidia.com/gpu": str(GPUS)}}}]}}


def wait_for(what: str, check: Any, timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, what
        time.sleep(0.3)


def bound(core: Any) -> list[Any]:
    return [p for p in core.list_namespaced_pod("default", label_selector="app=gpu4").items if p.spec.node_name]


def devices_of_claims(resource: Any) -> list[tuple[str, str, str]]:
    held = []
    for claim in resource.list_namespaced_resource_claim("default").items:
        allocation = claim.status and claim.status.allocation
        for result in (allocation.devices.results if allocation else None) or []:
            held.append((result.driver, result.pool, result.device))
    return held


def fill(core: Any, resource: Any, prefix: str, count: int) -> list[Any]:
    """Create `count` four-GPU pods; wait until the GPU nodes are full and the rest pending."""
    for i in range(count):
        core.create_namespaced_pod("default", gpu_pod(f"{prefix}-{i}"))
    expected = min(count, GPU_NODES)
    wait_for(f"{expected} of {count} pods bound", lambda: len(bound(core)) >= expected)
    pending = [f"{prefix}-{i}" for i in range(count)]
    for name in pending:  # every pod has had a scheduling attempt: bound, or unschedulable
        wait_for(f"{name} tried", lambda name=name: core.read_namespaced_pod(name, "default").spec.node_name or any(
            c.type == "PodScheduled" and c.reason == "Unschedulable"
            for c in core.read_namespaced_pod(name, "default").status.conditions or []))
    return bound(core)


@pytest.mark.haru_cluster(nodes=NODES, gpus_per_node=GPUS)
def test_four_gpu_pods_never_share_devices_and_deleted_pods_free_theirs(haru_cluster: HaruCluster) -> None:
    from kubernetes import client

    core, resource = client.CoreV1Api(haru_cluster.api_client), client.ResourceV1Api(haru_cluster.api_client)
    resource.create_device_class(GPU_CLASS)

    first = fill(core, resource, "first", GPU_NODES + 2)
    assert len(first) == GPU_NODES
    assert len({p.spec.node_name for p in first}) == GPU_NODES  # one pod per four-GPU node
    held = devices_of_claims(resource)
    assert len(held) == GPU_NODES * GPUS and len(set(held)) == len(held)  # no device in two claims

    core.delete_collection_namespaced_pod("default", label_selector="app=gpu4", grace_period_seconds=0)
    wait_for("pods gone", lambda: not core.list_namespaced_pod("default", label_selector="app=gpu4").items)
    wait_for("claims gone", lambda: not resource.list_namespaced_resource_claim("default").items)

    second = fill(core, resource, "second", GPU_NODES)
    assert len(second) == GPU_NODES, [p.metadata.name for p in core.list_namespaced_pod("default").items
                                  if not p.spec.node_name]
    held = devices_of_claims(resource)
    assert len(held) == GPU_NODES * GPUS and len(set(held)) == len(held)
