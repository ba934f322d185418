"""PodGC against a real API server, sweeping every 0.2 s with a 0.5 s quarantine and a threshold of 3.

Pods bound to a node that does not exist are marked Failed with DisruptionTarget DeletionByPodGC
and force-deleted (kubectl waits for one to go); terminated pods beyond the threshold go oldest
first; a terminating pod that was never scheduled is marked Failed and force-deleted. Finalizers
keep some pods visible after the deletion so the test can read what PodGC wrote.
"""

from __future__ import annotations

from typing import Any

import pytest

from client import errors
from client.resources import NODES, PODS
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("pod-garbage-collector",)
SETTINGS = {"pod-garbage-collector": {"period": 0.2, "quarantine": 0.5, "threshold": 3}}
pytestmark = pytest.mark.asyncio(loop_scope="module")
FINALIZER = "example.com/hold"


async def _pod(cluster: Cluster, name: str, node: str | None = None, hold: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    meta: dict[str, Any] = {"name": name}
    if hold:
        meta["finalizers"] = [FINALIZER]
    return await cluster.client.create(PODS, {"metadata": meta, "spec": spec}, "default")


async def _release(cluster: Cluster, name: str) -> None:
    await cluster.client.patch(PODS, name, {"metadata": {"finalizers": None}}, "default")


async def _exists(cluster: Cluster, name: str) -> bool:
    try:
        await cluster.client.get(PODS, name, "default")
    except errors.APIError as exc:
        if errors.is_not_found(exc):
            return False
        raise
    return True


async def test_pods_of_a_node_that_does_not_exist_are_failed_and_deleted(cluster: Cluster) -> None:
    await cluster.client.create(NODES, {"metadata": {"name": "present"}})
    await _pod(cluster, "orphan", node="ghost", hold=True)
    await _pod(cluster, "housed", node="present")

    async def deleted() -> dict[str, Any] | None:
        pod = await cluster.client.get(PODS, "orphan", "default")
        return pod if pod["metadata"].get("deletionTimestamp") else None

    pod = await eventually(deleted, timeout=10)
    assert pod["status"]["phase"] == "Failed"
    target = next(c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["status"], target["reason"], target["message"]) == \
        ("True", "DeletionByPodGC", "PodGC: node no longer exists")
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 0
    housed = await cluster.client.get(PODS, "housed", "default")
    assert not housed["metadata"].get("deletionTimestamp")
    await _release(cluster, "orphan")


async def test_kubectl_sees_an_orphaned_pod_go(cluster: Cluster) -> None:
    manifest = cluster.home / "stray.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: stray\n  namespace: default\n"
                        "spec:\n  nodeName: vanished\n  containers:\n  - name: c\n    image: busybox\n")
    code, out, err = await cluster.kubectl("apply", "-f", str(manifest))
    assert code == 0, err
    code, out, err = await cluster.kubectl("wait", "--for=delete", "pod/stray", "-n", "default", "--timeout=20s",
                                           timeout=30)
    assert code == 0, err
    assert out.strip() == "pod/stray condition met"


async def test_terminated_pods_over_the_threshold_go_oldest_first(cluster: Cluster) -> None:
    await cluster.client.create(NODES, {"metadata": {"name": "worker"}})
    names = [f"done-{n}" for n in range(5)]
    for name in names:
        await _pod(cluster, name, node="worker")
        await cluster.client.patch(PODS, name, {"status": {"phase": "Succeeded"}}, "default", subresource="status")

    async def trimmed() -> list[bool] | None:
        present = [await _exists(cluster, name) for name in names]
        return present if sum(present) == 3 else None

    assert await eventually(trimmed, timeout=10) == [False, False, True, True, True]


async def test_an_unscheduled_terminating_pod_is_failed_and_force_deleted(cluster: Cluster) -> None:
    await _pod(cluster, "unplaced", hold=True)
    await cluster.client.delete(PODS, "unplaced", "default")

    async def failed() -> dict[str, Any] | None:
        pod = await cluster.client.get(PODS, "unplaced", "default")
        return pod if (pod.get("status") or {}).get("phase") == "Failed" else None

    pod = await eventually(failed, timeout=10)
    assert pod["metadata"]["deletionTimestamp"]
    await _release(cluster, "unplaced")
