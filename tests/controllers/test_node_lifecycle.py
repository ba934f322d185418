"""The node lifecycle and taint-eviction controllers against a real API server, with Nodes and
Leases made by hand (no kubelet: a Lease nobody renews expires), grace shortened to 1.5 s.

A node whose Lease stops is marked Unknown and tainted unreachable; renewed and Ready again, the
taints go. Ready False taints not-ready. A pod that tolerates unreachable for 1 s is evicted (the
DisruptionTarget condition, the TaintManagerEviction event), one with the default 300 s stays; a
NoExecute taint kubectl adds evicts the pods that do not tolerate it.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from client import errors
from client.resources import EVENTS, LEASES, NODES, PODS
from controllers.node_lifecycle import NOT_READY, UNREACHABLE
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("node-lifecycle", "taint-eviction")
SETTINGS = {"node-lifecycle": {"grace": 1.5, "startup_grace": 2.0, "monitor_period": 0.2}}
pytestmark = pytest.mark.asyncio(loop_scope="module")


def _micro(moment: datetime | None = None) -> str:
    return (moment or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def _node(cluster: Cluster, name: str, ready: str = "True") -> dict[str, Any]:
    node = await cluster.client.create(NODES, {"metadata": {"name": name}})
    await _post_status(cluster, name, ready)
    await _renew(cluster, name)
    return node


async def _post_status(cluster: Cluster, name: str, ready: str) -> None:
    now = _micro()
    conditions = [{"type": kind, "status": "False", "reason": "Kubelet" + kind, "message": "fine",
                   "lastHeartbeatTime": now, "lastTransitionTime": now}
                  for kind in ("MemoryPressure", "DiskPressure", "PIDPressure")]
    conditions.append({"type": "Ready", "status": ready, "reason": "KubeletReady" if ready == "True" else "KubeletNotReady",
                       "message": "kubelet is posting ready status", "lastHeartbeatTime": now,
                       "lastTransitionTime": now})
    await cluster.client.patch(NODES, name, {"status": {"conditions": conditions}}, patch_type="strategic",
                               subresource="status")


async def _renew(cluster: Cluster, name: str) -> None:
    spec = {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": _micro()}
    try:
        await cluster.client.create(LEASES, {"metadata": {"name": name}, "spec": spec}, "kube-node-lease")
    except errors.APIError as exc:
        if not errors.is_already_exists(exc):
            raise
        await cluster.client.patch(LEASES, name, {"spec": spec}, "kube-node-lease", patch_type="merge")


def _taints(node: dict[str, Any]) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in (node.get("spec") or {}).get("taints") or []}


async def _pod(cluster: Cluster, name: str, node: str, tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return await cluster.client.create(PODS, {"metadata": {"name": name}, "spec": spec}, "default")


async def test_a_node_whose_lease_expires_is_unknown_and_unreachable_then_recovers(cluster: Cluster) -> None:
    await _node(cluster, "quiet")

    async def unreachable() -> dict[str, Any] | None:
        node = await cluster.client.get(NODES, "quiet")
        return node if _taints(node) == {(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")} else None

    node = await eventually(unreachable, timeout=15)
    conditions = {c["type"]: c for c in node["status"]["conditions"]}
    for kind in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
        assert conditions[kind]["status"] == "Unknown"
        assert conditions[kind]["reason"] == "NodeStatusUnknown"
        assert conditions[kind]["message"] == "Kubelet stopped posting node status."
    no_execute = next(t for t in node["spec"]["taints"] if t["effect"] == "NoExecute")
    assert no_execute["timeAdded"]

    await _renew(cluster, "quiet")
    await _post_status(cluster, "quiet", "True")

    async def untainted() -> bool:
        return not _taints(await cluster.client.get(NODES, "quiet"))

    await eventually(untainted, timeout=15)


async def test_a_node_not_ready_is_tainted_not_ready(cluster: Cluster) -> None:
    await _node(cluster, "sick", ready="False")

    async def tainted() -> bool:
        node = await cluster.client.get(NODES, "sick")
        return _taints(node) == {(NOT_READY, "NoSchedule"), (NOT_READY, "NoExecute")}

    await eventually(tainted, timeout=15)


async def test_a_node_that_never_posted_status_is_marked_never_updated(cluster: Cluster) -> None:
    await cluster.client.create(NODES, {"metadata": {"name": "mute"}})

    async def marked() -> dict[str, Any] | None:
        node = await cluster.client.get(NODES, "mute")
        return node if _taints(node) else None

    node = await eventually(marked, timeout=15)
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == \
        ("Unknown", "NodeStatusNeverUpdated", "Kubelet never posted node status.")
    assert _taints(node) == {(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")}


async def test_pods_on_an_unreachable_node_go_after_their_toleration_seconds(cluster: Cluster) -> None:
    await _node(cluster, "lost")
    brief = [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 1}]
    short = await _pod(cluster, "short-lived", "lost", brief)
    patient = await _pod(cluster, "patient", "lost")
    assert any(t.get("tolerationSeconds") == 300 and t["key"] == UNREACHABLE for t in patient["spec"]["tolerations"])

    async def going() -> dict[str, Any] | None:
        pod = await cluster.client.get(PODS, "short-lived", "default")
        return pod if pod["metadata"].get("deletionTimestamp") else None

    pod = await eventually(going, timeout=20)
    assert pod["metadata"]["uid"] == short["metadata"]["uid"]
    target = next(c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["status"], target["reason"]) == ("True", "DeletionByTaintManager")
    assert target["message"] == "Taint manager: deleting due to NoExecute taint"
    events = (await cluster.client.list(EVENTS, "default"))["items"]
    assert any(e["reason"] == "TaintManagerEviction" and e["message"] == "Marking for deletion Pod default/short-lived"
               and e["involvedObject"]["name"] == "short-lived" for e in events)
    still = await cluster.client.get(PODS, "patient", "default")
    assert not still["metadata"].get("deletionTimestamp")


async def test_kubectl_taint_no_execute_evicts_the_pods_that_do_not_tolerate_it(cluster: Cluster) -> None:
    await _node(cluster, "drained")
    await _pod(cluster, "intolerant", "drained")
    await _pod(cluster, "tolerant", "drained", [{"key": "example.com/maintenance", "operator": "Exists"}])

    code, out, err = await cluster.kubectl("taint", "nodes", "drained", "example.com/maintenance=now:NoExecute")
    assert code == 0, err
    assert out.strip() == "node/drained tainted"

    async def evicted() -> bool:
        pod = await cluster.client.get(PODS, "intolerant", "default")
        return bool(pod["metadata"].get("deletionTimestamp"))

    await eventually(evicted, timeout=15)
    code, out, err = await cluster.kubectl("get", "events", "-n", "default", "--field-selector",
                                           "reason=TaintManagerEviction,involvedObject.name=intolerant",
                                           "-o", "jsonpath={.items[*].message}")
    assert code == 0, err
    assert "Marking for deletion Pod default/intolerant" in out
    tolerant = await cluster.client.get(PODS, "tolerant", "default")
    assert not tolerant["metadata"].get("deletionTimestamp")
