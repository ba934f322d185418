"""The ReplicaSet controller: the pure parts as tables (deletion order, slow-start batches, the
ReplicaFailure condition, status counting), then against a real API server in-process: pods made
from the template with upstream's names, owner references and events; surplus pods deleted in
upstream's order; orphans adopted and strays released; status counting ready and available pods.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from client import errors
from client.resources import EVENTS, PODS, REPLICASETS, Resource
from controllers import pod_states, replica_set
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

NOW = 1_800_000_000.0


def _pod(name: str, *, node: str = "", phase: str = "Running", ready: bool | None = None, ready_at: float = NOW - 100,
         created: float = NOW - 1000, restarts: int = 0, cost: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "creationTimestamp": pod_states.format_time(created)}
    if cost is not None:
        meta["annotations"] = {pod_states.DELETION_COST: str(cost)}
    status: dict[str, Any] = {"phase": phase, "containerStatuses": [{"name": "c", "restartCount": restarts}]}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False",
                                 "lastTransitionTime": pod_states.format_time(ready_at)}]
    return {"metadata": meta, "spec": {"nodeName": node}, "status": status}


ORDER_CASES = [
    ("an unscheduled pod goes before a scheduled one",
     [_pod("a", node="n1", ready=True), _pod("b", phase="Pending")], ["b", "a"]),
    ("a pending pod goes before an unknown one, which goes before a running one",
     [_pod("run", node="n1"), _pod("unk", node="n1", phase="Unknown"), _pod("pend", node="n1", phase="Pending")],
     ["pend", "unk", "run"]),
    ("a pod that is not ready goes before a ready one",
     [_pod("ready", node="n1", ready=True), _pod("unready", node="n1", ready=False)], ["unready", "ready"]),
    ("a lower pod-deletion-cost goes first",
     [_pod("dear", node="n1", ready=True, cost=10), _pod("cheap", node="n1", ready=True, cost=-5)], ["cheap", "dear"]),
    ("a pod doubled up on a node goes before one alone on its node",
     [_pod("alone", node="n1", ready=True), _pod("twin1", node="n2", ready=True, created=NOW - 10**6),
      _pod("twin2", node="n2", ready=True, created=NOW - 10**6)], ["twin1", "twin2", "alone"]),
    ("a pod ready more recently goes before one ready for much longer",
     [_pod("old", node="n1", ready=True, ready_at=NOW - 100_000), _pod("new", node="n2", ready=True, ready_at=NOW - 10)],
     ["new", "old"]),
    ("more container restarts go first",
     [_pod("calm", node="n1", ready=True), _pod("flappy", node="n2", ready=True, restarts=7)], ["flappy", "calm"]),
    ("a newer pod goes before a much older one",
     [_pod("elder", node="n1", created=NOW - 10**6), _pod("young", node="n2", created=NOW - 5)], ["young", "elder"]),
    ("creation times in the same log2 bucket fall back to the uid",
     [_pod("b", node="n1", created=NOW - 1000), _pod("a", node="n2", created=NOW - 1001)], ["a", "b"]),
]


@pytest.mark.parametrize("pods, want", [c[1:] for c in ORDER_CASES], ids=[c[0] for c in ORDER_CASES])
def test_deletion_order(pods: list[dict[str, Any]], want: list[str]) -> None:
    got = [p["metadata"]["name"] for p in pod_states.deletion_order(pods, pods, NOW)]
    assert got == want


BATCH_CASES = [
    ("nothing to create makes no batch", 0, []),
    ("one pod is one batch", 1, [1]),
    ("batches double and the last takes what is left", 10, [1, 2, 4, 3]),
    ("a power-of-two total less one fills every batch", 15, [1, 2, 4, 8]),
]


@pytest.mark.parametrize("count, want", [c[1:] for c in BATCH_CASES], ids=[c[0] for c in BATCH_CASES])
def test_slow_start_batches(count: int, want: list[int]) -> None:
    assert replica_set.slow_start_batches(count) == want


FAILURE = {"type": "ReplicaFailure", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
           "reason": "FailedCreate", "message": "quota"}
CONDITION_CASES = [
    ("a failed creation adds FailedCreate", {}, "quota", -2, [{**FAILURE, "lastTransitionTime": "now"}]),
    ("a failed deletion adds FailedDelete", {}, "boom", 1,
     [{**FAILURE, "reason": "FailedDelete", "message": "boom", "lastTransitionTime": "now"}]),
    ("an existing failure is kept as it was", {"conditions": [FAILURE]}, "other", -1, [FAILURE]),
    ("a pass without error removes the failure", {"conditions": [FAILURE]}, None, 0, []),
    ("no error and no failure leaves no condition", {}, None, 0, []),
]


@pytest.mark.parametrize("status, error, diff, want", [c[1:] for c in CONDITION_CASES], ids=[c[0] for c in CONDITION_CASES])
def test_replica_failure_condition(status: dict[str, Any], error: str | None, diff: int, want: list[dict[str, Any]]) -> None:
    assert replica_set.failure_condition(status, error, diff, "now") == want


def test_status_counts_labeled_ready_and_available_pods() -> None:
    rs = {"metadata": {"name": "web", "generation": 4}, "spec": {"replicas": 3, "minReadySeconds": 30,
          "template": {"metadata": {"labels": {"app": "web", "tier": "front"}}}}}
    pods = [_pod("a", ready=True, ready_at=NOW - 60), _pod("b", ready=True, ready_at=NOW - 5), _pod("c", ready=False)]
    for pod in pods[:2]:
        pod["metadata"]["labels"] = {"app": "web", "tier": "front"}
    pods[2]["metadata"]["labels"] = {"app": "web"}

    status = replica_set.calculate_status(rs, pods, 1, None, NOW)

    assert status == {"replicas": 3, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 1,
                      "terminatingReplicas": 1, "observedGeneration": 4}


# -- against a real API server --------------------------------------------------------------

CONTROLLERS = ("replicaset",)
NS = "default"


def _rs(name: str, replicas: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, "annotations": {"note": "x"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


async def _pods_of(cluster: Cluster, uid: str) -> list[dict[str, Any]]:
    items = (await cluster.client.list(PODS, NS)).get("items") or []
    return [p for p in items if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or [])
            and not p["metadata"].get("deletionTimestamp")]


def _count(cluster: Cluster, uid: str, n: int) -> Any:
    async def check() -> list[dict[str, Any]] | None:
        pods = await _pods_of(cluster, uid)
        return pods if len(pods) == n else None
    return check


async def _make_ready(cluster: Cluster, name: str) -> None:
    now = pod_states.format_time(time.time())
    await cluster.client.patch(PODS, name, {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": now}]}}, NS, subresource="status")


@pytest.mark.asyncio(loop_scope="module")
async def test_a_replicaset_makes_its_pods_from_the_template(cluster: Cluster) -> None:
    rs = await cluster.client.create(REPLICASETS, _rs("front", 3), NS)
    uid = rs["metadata"]["uid"]

    pods = await eventually(_count(cluster, uid, 3))

    for pod in pods:
        meta = pod["metadata"]
        assert meta["name"].startswith("front-") and len(meta["name"]) == len("front-") + 5
        assert meta["labels"] == {"app": "front"} and meta["annotations"] == {"note": "x"}
        assert meta["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "front", "uid": uid,
                                            "controller": True, "blockOwnerDeletion": True}]

    async def created_events() -> list[dict[str, Any]]:
        items = (await cluster.client.list(EVENTS, NS)).get("items") or []
        return [e for e in items if e["involvedObject"].get("uid") == uid and e["reason"] == "SuccessfulCreate"]

    got = await eventually(created_events)
    assert {e["message"] for e in got} <= {f"Created pod: {p['metadata']['name']}" for p in pods}
    assert got[0]["involvedObject"]["kind"] == "ReplicaSet" and got[0]["source"] == {"component": "replicaset-controller"}

    async def counted() -> dict[str, Any] | None:
        status = (await cluster.client.get(REPLICASETS, "front", NS)).get("status") or {}
        return status if status.get("replicas") == 3 else None

    status = await eventually(counted)
    assert (status["fullyLabeledReplicas"], status.get("readyReplicas", 0), status.get("availableReplicas", 0),
            status["observedGeneration"]) == (3, 0, 0, 1)

    for pod in pods:
        await _make_ready(cluster, pod["metadata"]["name"])

    async def available() -> dict[str, Any] | None:
        status = (await cluster.client.get(REPLICASETS, "front", NS)).get("status") or {}
        return status if status.get("availableReplicas") == 3 else None

    assert (await eventually(available))["readyReplicas"] == 3


@pytest.mark.asyncio(loop_scope="module")
async def test_scaling_down_deletes_the_unscheduled_pod_first(cluster: Cluster) -> None:
    rs = await cluster.client.create(REPLICASETS, _rs("trim", 3), NS)
    uid = rs["metadata"]["uid"]
    pods = await eventually(_count(cluster, uid, 3))
    keep = [p["metadata"]["name"] for p in pods[:2]]
    for name in keep:
        await cluster.client.request("POST", PODS.path(NS, name, "binding"), body={
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": "node-1"}})
        await _make_ready(cluster, name)

    async def seen_ready() -> bool:  # the controller's cache has the two bound, ready pods
        return ((await cluster.client.get(REPLICASETS, "trim", NS)).get("status") or {}).get("readyReplicas") == 2

    await eventually(seen_ready)
    await cluster.client.patch(REPLICASETS, "trim", {"spec": {"replicas": 2}}, NS)

    left = await eventually(_count(cluster, uid, 2))
    assert sorted(p["metadata"]["name"] for p in left) == sorted(keep)

    async def deleted_event() -> list[dict[str, Any]]:
        items = (await cluster.client.list(EVENTS, NS)).get("items") or []
        return [e for e in items if e["involvedObject"].get("uid") == uid and e["reason"] == "SuccessfulDelete"]

    [event] = await eventually(deleted_event)
    assert event["message"] == f"Deleted pod: {pods[2]['metadata']['name']}"


@pytest.mark.asyncio(loop_scope="module")
async def test_an_orphan_is_adopted_and_a_pod_relabelled_away_is_released(cluster: Cluster) -> None:
    labels = {"app": "adopter"}
    orphan = await cluster.client.create(PODS, {"metadata": {"name": "stray", "labels": labels},
                                                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, NS)
    rs = await cluster.client.create(REPLICASETS, _rs("adopter", 2, labels), NS)
    uid = rs["metadata"]["uid"]

    pods = await eventually(_count(cluster, uid, 2))
    assert orphan["metadata"]["name"] in [p["metadata"]["name"] for p in pods]

    await cluster.client.patch(PODS, "stray", {"metadata": {"labels": {"app": "elsewhere"}}}, NS)

    async def released() -> dict[str, Any] | None:
        pod = await cluster.client.get(PODS, "stray", NS)
        return pod if not pod["metadata"].get("ownerReferences") else None

    await eventually(released)
    await eventually(_count(cluster, uid, 2))  # and a replacement is made


VAP = Resource("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy",
               namespaced=False, verbs=PODS.verbs)
VAP_BINDINGS = Resource("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
                        "ValidatingAdmissionPolicyBinding", namespaced=False, verbs=PODS.verbs)


@pytest.mark.asyncio(loop_scope="module")
async def test_refused_creations_are_a_warning_event_and_the_replica_failure_condition(cluster: Cluster) -> None:
    rule = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
    await cluster.client.create(VAP, {"metadata": {"name": "no-refused"}, "spec": {
        "matchConstraints": {"resourceRules": [rule]},
        "validations": [{"expression": "!has(object.metadata.labels) || !('refused' in object.metadata.labels)",
                         "message": "refused pods are refused"}]}})
    await cluster.client.create(VAP_BINDINGS, {"metadata": {"name": "no-refused"}, "spec": {
        "policyName": "no-refused", "validationActions": ["Deny"]}})
    labels = {"app": "refused", "refused": "yes"}

    async def refused() -> bool:
        try:
            await cluster.client.create(PODS, {"metadata": {"name": "probe", "labels": labels},
                                               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, NS)
        except errors.APIError:
            return True
        await cluster.client.delete(PODS, "probe", NS, grace_period_seconds=0)
        return False

    await eventually(refused)  # the policy is in force
    rs = await cluster.client.create(REPLICASETS, _rs("refused", 2, labels), NS)

    async def failed() -> dict[str, Any] | None:
        status = (await cluster.client.get(REPLICASETS, "refused", NS)).get("status") or {}
        return next((c for c in status.get("conditions") or [] if c["type"] == "ReplicaFailure"), None)

    condition = await eventually(failed)
    text = "ValidatingAdmissionPolicy 'no-refused' with binding 'no-refused' denied request: refused pods are refused"
    assert (condition["status"], condition["reason"]) == ("True", "FailedCreate")
    assert condition["message"].endswith(text)
    items = (await cluster.client.list(EVENTS, NS)).get("items") or []
    warnings = [e for e in items if e["involvedObject"].get("uid") == rs["metadata"]["uid"] and e["reason"] == "FailedCreate"]
    assert {e["type"] for e in warnings} == {"Warning"}
    assert f"Error creating: {condition['message']}" in {e["message"] for e in warnings}

    await cluster.client.delete(VAP_BINDINGS, "no-refused")

    async def recovered() -> bool:
        return await failed() is None and len(await _pods_of(cluster, rs["metadata"]["uid"])) == 2

    await eventually(recovered, timeout=20)
