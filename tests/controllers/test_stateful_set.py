"""The StatefulSet controller and the volume binder: the pure parts as tables (ordinals, the
revision hash, what one pass does), then against a real API server in-process: pods made one at a
time in ordinal order with upstream's names, labels, hostname and claims; Parallel making them all
at once; a rolling update from the highest ordinal down that stops at the partition; scale-down
highest first; the claims' retention policy; claims provisioned on hostPath volumes (Immediate and
WaitForFirstConsumer) and bound, a released volume kept or deleted by its reclaim policy.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from client.resources import CONTROLLERREVISIONS, EVENTS, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODS, STATEFULSETS, STORAGECLASSES
from controllers import controller_history, pod_states, stateful_identity, volume_binder
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("statefulset", "persistentvolume-binder", "garbage-collector")
NS = "default"
NOW = 1_800_000_000.0


def _sts(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
            "spec": {"replicas": replicas, "serviceName": "svc", "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, **spec}}


def _pod(name: str, *, ready: bool = True, revision: str = "r2", phase: str = "Running", deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {stateful_identity.REVISION_LABEL: revision}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"phase": phase, "conditions": [
        {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": pod_states.format_time(NOW - 100)}]}}


ORDINAL_CASES = [
    ("a pod named for the set has its ordinal", "web", "web-3", 3),
    ("a set whose name ends in digits still parses", "web-1", "web-1-0", 0),
    ("another set's pod is not one of ours", "web", "webx-0", None),
    ("a generated name is no ordinal", "web", "web-abcde", None),
    ("a prefix of our name is not ours", "web", "we-0", None),
]


@pytest.mark.parametrize("set_name, pod_name, want", [c[1:] for c in ORDINAL_CASES], ids=[c[0] for c in ORDINAL_CASES])
def test_ordinal_of(set_name: str, pod_name: str, want: int | None) -> None:
    assert stateful_identity.ordinal_of(set_name, pod_name) == want


def test_the_revision_hash_follows_the_template_and_the_collision_count() -> None:
    a, b = _sts("web", 1), _sts("web", 1)
    b["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    data_a, data_b = controller_history.patch_of(a), controller_history.patch_of(b)
    assert data_a["spec"]["template"]["$patch"] == "replace"
    assert controller_history.revision_hash(data_a) == controller_history.revision_hash(controller_history.patch_of(_sts("web", 5)))
    assert controller_history.revision_hash(data_a) != controller_history.revision_hash(data_b)
    assert controller_history.revision_hash(data_a, 1) != controller_history.revision_hash(data_a)
    assert set(controller_history.revision_hash(data_a)) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert controller_history.template_of({"data": data_b}) == b["spec"]["template"]


PLAN_CASES = [
    ("OrderedReady creates only the lowest missing ordinal", {}, {}, [0], []),
    ("OrderedReady waits for a pod that is not ready before the next", {},
     {0: _pod("web-0", ready=False)}, [], []),
    ("OrderedReady creates the next once the ones below are ready", {}, {0: _pod("web-0")}, [1], []),
    ("Parallel creates every missing ordinal at once", {"podManagementPolicy": "Parallel"},
     {1: _pod("web-1", ready=False)}, [0, 2], []),
    ("a failed pod is deleted to be made again", {}, {0: _pod("web-0", phase="Failed")}, [], ["web-0"]),
    ("scale-down deletes the highest condemned ordinal first, one at a time", {"replicas": 1},
     {0: _pod("web-0"), 1: _pod("web-1"), 2: _pod("web-2")}, [], ["web-2"]),
    ("OrderedReady scale-down waits at an unready condemned pod above another unready one", {"replicas": 1},
     {0: _pod("web-0"), 1: _pod("web-1", ready=False), 2: _pod("web-2", ready=False)}, [], []),
    ("OrderedReady scale-down deletes the lowest unready condemned pod when it is the highest", {"replicas": 1},
     {0: _pod("web-0"), 1: _pod("web-1"), 2: _pod("web-2", ready=False)}, [], ["web-2"]),
    ("Parallel scale-down deletes every condemned pod", {"replicas": 1, "podManagementPolicy": "Parallel"},
     {0: _pod("web-0"), 1: _pod("web-1"), 2: _pod("web-2")}, [], ["web-2", "web-1"]),
    ("a rolling update deletes the highest pod not at the update revision",
     {}, {0: _pod("web-0", revision="r1"), 1: _pod("web-1", revision="r1"), 2: _pod("web-2", revision="r1")}, [], ["web-2"]),
    ("a rolling update waits while an updated pod is not ready",
     {}, {0: _pod("web-0", revision="r1"), 1: _pod("web-1", revision="r1"), 2: _pod("web-2", ready=False)}, [], []),
    ("a rolling update leaves pods below the partition alone",
     {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}},
     {0: _pod("web-0", revision="r1"), 1: _pod("web-1", revision="r1"), 2: _pod("web-2")}, [], []),
    ("maxUnavailable 2 replaces the two highest old pods at once",
     {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}},
     {0: _pod("web-0", revision="r1"), 1: _pod("web-1", revision="r1"), 2: _pod("web-2", revision="r1")}, [], ["web-2", "web-1"]),
    ("an unavailable pod uses up part of maxUnavailable", {"podManagementPolicy": "Parallel",
     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}},
     {0: _pod("web-0", revision="r1", ready=False), 1: _pod("web-1", revision="r1"), 2: _pod("web-2", revision="r1")}, [], ["web-2"]),
    ("a percent maxUnavailable rounds down but never below one",
     {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}}},
     {0: _pod("web-0", revision="r1"), 1: _pod("web-1", revision="r1"), 2: _pod("web-2", revision="r1")}, [], ["web-2"]),
    ("OnDelete never deletes a pod for its revision", {"updateStrategy": {"type": "OnDelete"}},
     {0: _pod("web-0", revision="r1"), 1: _pod("web-1", revision="r1"), 2: _pod("web-2", revision="r1")}, [], []),
    ("ordinals start at spec.ordinals.start", {"ordinals": {"start": 5}}, {5: _pod("web-5")}, [6], []),
]


@pytest.mark.parametrize("spec, pods, create, delete", [c[1:] for c in PLAN_CASES], ids=[c[0] for c in PLAN_CASES])
def test_plan(spec: dict[str, Any], pods: dict[int, dict[str, Any]], create: list[int], delete: list[str]) -> None:
    sts = _sts("web", spec.pop("replicas", 3), **spec)
    got = stateful_identity.plan(sts, pods, "r2", NOW)
    assert (got.create, got.delete) == (create, delete)


def test_the_pod_for_an_ordinal_has_its_identity_and_claims() -> None:
    sts = _sts("web", 2, volumeClaimTemplates=[{"metadata": {"name": "www"}, "spec": {"accessModes": ["ReadWriteOnce"]}}])
    pod = stateful_identity.new_pod(sts, sts["spec"]["template"], "web-abc", 1)
    assert pod["metadata"]["name"] == "web-1"
    assert pod["metadata"]["labels"] == {"app": "web", "statefulset.kubernetes.io/pod-name": "web-1",
                                         "apps.kubernetes.io/pod-index": "1", "controller-revision-hash": "web-abc"}
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-1", "svc")
    assert pod["spec"]["volumes"] == [{"name": "www", "persistentVolumeClaim": {"claimName": "www-web-1"}}]
    [claim] = stateful_identity.new_claims(sts, 1)
    assert claim["metadata"]["name"] == "www-web-1" and claim["metadata"]["labels"] == {"app": "web"}


RETENTION_CASES = [
    ("Retain/Retain leaves the claim unowned", "Retain", "Retain", 0, []),
    ("whenDeleted=Delete makes the set the claim's owner", "Delete", "Retain", 0, ["StatefulSet"]),
    ("whenScaled=Delete gives a condemned ordinal's claim to its pod", "Retain", "Delete", 5, ["Pod"]),
    ("whenScaled=Delete leaves an ordinal in range alone", "Retain", "Delete", 0, []),
]


@pytest.mark.parametrize("when_deleted, when_scaled, ordinal, kinds", [c[1:] for c in RETENTION_CASES],
                         ids=[c[0] for c in RETENTION_CASES])
def test_claim_owner_refs(when_deleted: str, when_scaled: str, ordinal: int, kinds: list[str]) -> None:
    sts = _sts("web", 1, persistentVolumeClaimRetentionPolicy={"whenDeleted": when_deleted, "whenScaled": when_scaled})
    pod = {"metadata": {"name": f"web-{ordinal}", "uid": "pod-uid"}}
    refs = stateful_identity.claim_owner_refs(sts, {"metadata": {"name": f"www-web-{ordinal}"}}, pod, ordinal)
    assert [r["kind"] for r in refs] == kinds


FIT_CASES = [
    ("a bigger volume of the class fits", {"storage": "10Gi"}, "fast", ["ReadWriteOnce"], True),
    ("a smaller volume does not", {"storage": "500Mi"}, "fast", ["ReadWriteOnce"], False),
    ("another class does not", {"storage": "10Gi"}, "slow", ["ReadWriteOnce"], False),
    ("missing an access mode does not", {"storage": "10Gi"}, "fast", ["ReadOnlyMany"], False),
]


@pytest.mark.parametrize("capacity, cls, modes, want", [c[1:] for c in FIT_CASES], ids=[c[0] for c in FIT_CASES])
def test_volume_fits_claim(capacity: dict[str, str], cls: str, modes: list[str], want: bool) -> None:
    pv = {"metadata": {"name": "pv"}, "spec": {"capacity": capacity, "storageClassName": cls, "accessModes": modes}}
    pvc = {"metadata": {"name": "c"}, "spec": {"storageClassName": "fast", "accessModes": ["ReadWriteOnce"],
                                                "resources": {"requests": {"storage": "1Gi"}}}}
    assert volume_binder.fits(pv, pvc) is want


# -- against the API server ----------------------------------------------------------------------


async def _pods(cluster: Cluster, app: str) -> dict[str, dict[str, Any]]:
    items = (await cluster.client.list(PODS, NS, label_selector=f"app={app}")).get("items") or []
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


async def _make_ready(cluster: Cluster, name: str) -> None:
    now = pod_states.format_time(time.time())
    await cluster.client.patch(PODS, name, {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": now}]}}, NS, subresource="status")


async def _finish_deletions(cluster: Cluster, app: str) -> None:
    """Stand in for the kubelet: pods being deleted go at once."""
    items = (await cluster.client.list(PODS, NS, label_selector=f"app={app}")).get("items") or []
    for pod in items:
        if pod["metadata"].get("deletionTimestamp"):
            await cluster.client.delete(PODS, pod["metadata"]["name"], NS, grace_period_seconds=0)


async def _status(cluster: Cluster, name: str) -> dict[str, Any]:
    return (await cluster.client.get(STATEFULSETS, name, NS)).get("status") or {}


def _body(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    body = _sts(name, replicas, **spec)
    del body["metadata"]["uid"]
    return body


@pytest.mark.asyncio(loop_scope="module")
async def test_ordered_ready_makes_pods_one_at_a_time_in_order(cluster: Cluster) -> None:
    await cluster.client.create(STATEFULSETS, _body("web", 3), NS)
    for ordinal in range(3):
        async def exactly() -> dict[str, dict[str, Any]] | None:
            pods = await _pods(cluster, "web")
            return pods if sorted(pods) == [f"web-{i}" for i in range(ordinal + 1)] else None
        pods = await eventually(exactly)
        await _make_ready(cluster, f"web-{ordinal}")
    pod = pods["web-0"]
    labels = pod["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "web-0" and labels["apps.kubernetes.io/pod-index"] == "0"
    assert labels["controller-revision-hash"].startswith("web-")
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-0", "svc")
    [revision] = (await cluster.client.list(CONTROLLERREVISIONS, NS, label_selector="app=web"))["items"]
    assert revision["metadata"]["name"] == labels["controller-revision-hash"] and revision["revision"] == 1

    async def complete() -> dict[str, Any] | None:
        status = await _status(cluster, "web")
        return status if status.get("readyReplicas") == 3 else None
    status = await eventually(complete)
    assert status["replicas"] == status["currentReplicas"] == status["updatedReplicas"] == status["availableReplicas"] == 3
    assert status["currentRevision"] == status["updateRevision"] == revision["metadata"]["name"]
    assert status["observedGeneration"] == 1 and status["collisionCount"] == 0

    items = (await cluster.client.list(EVENTS, NS)).get("items") or []
    messages = {e["message"] for e in items if e["reason"] == "SuccessfulCreate" and e["involvedObject"]["name"] == "web"}
    assert {"create Pod web-0 in StatefulSet web successful", "create Pod web-2 in StatefulSet web successful"} <= messages


@pytest.mark.asyncio(loop_scope="module")
async def test_a_rolling_update_goes_from_the_highest_ordinal_and_stops_at_the_partition(cluster: Cluster) -> None:
    await cluster.client.create(STATEFULSETS, _body("roll", 3, podManagementPolicy="Parallel"), NS)

    async def three() -> dict[str, dict[str, Any]] | None:
        pods = await _pods(cluster, "roll")
        return pods if len(pods) == 3 else None
    old = await eventually(three)
    for name in old:
        await _make_ready(cluster, name)
    old_revision = old["roll-0"]["metadata"]["labels"]["controller-revision-hash"]
    await cluster.client.patch(STATEFULSETS, "roll", {"spec": {
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
        "template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}, NS, patch_type="strategic")

    updated: list[str] = []
    for expected in ("roll-2", "roll-1"):
        async def replaced() -> dict[str, Any] | None:
            await _finish_deletions(cluster, "roll")
            pod = (await _pods(cluster, "roll")).get(expected)
            return pod if pod and pod["metadata"]["labels"]["controller-revision-hash"] != old_revision else None
        pod = await eventually(replaced)
        assert pod["spec"]["containers"][0]["image"] == "nginx:2"
        updated.append(expected)
        await _make_ready(cluster, expected)

    async def partitioned() -> dict[str, Any] | None:
        status = await _status(cluster, "roll")
        return status if status.get("updatedReplicas") == 2 and status.get("readyReplicas") == 3 else None
    status = await eventually(partitioned)
    assert status["currentRevision"] == old_revision != status["updateRevision"]
    pods = await _pods(cluster, "roll")
    assert pods["roll-0"]["metadata"]["labels"]["controller-revision-hash"] == old_revision
    revisions = (await cluster.client.list(CONTROLLERREVISIONS, NS, label_selector="app=roll"))["items"]
    assert sorted(r["revision"] for r in revisions) == [1, 2]


@pytest.mark.asyncio(loop_scope="module")
async def test_claims_come_from_templates_and_are_provisioned_and_bound(cluster: Cluster) -> None:
    await cluster.client.create(STORAGECLASSES, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                                 "metadata": {"name": "local"}, "provisioner": "haru.dev/hostpath"})
    await cluster.client.create(STATEFULSETS, _body("db", 2, podManagementPolicy="Parallel", volumeClaimTemplates=[
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                                                "resources": {"requests": {"storage": "1Gi"}}}}],
        persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Delete"}), NS)

    async def bound() -> list[dict[str, Any]] | None:
        claims = [(await cluster.client.get(PERSISTENTVOLUMECLAIMS, f"data-db-{i}", NS)) for i in range(2)
                  if f"data-db-{i}" in {c["metadata"]["name"] for c in (await cluster.client.list(PERSISTENTVOLUMECLAIMS, NS))["items"]}]
        return claims if len(claims) == 2 and all(c["status"]["phase"] == "Bound" for c in claims) else None
    claims = await eventually(bound)
    for claim in claims:
        pv = await cluster.client.get(PERSISTENTVOLUMES, claim["spec"]["volumeName"])
        assert pv["metadata"]["name"] == f"pvc-{claim['metadata']['uid']}"
        assert pv["spec"]["hostPath"]["path"].endswith(pv["metadata"]["name"]) and pv["status"]["phase"] == "Bound"
        assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
        assert [r["kind"] for r in claim["metadata"]["ownerReferences"]] == ["StatefulSet"]
    pods = await _pods(cluster, "db")
    assert pods["db-1"]["spec"]["volumes"][-1] == {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}}
    items = (await cluster.client.list(EVENTS, NS)).get("items") or []
    assert any(e["reason"] == "ProvisioningSucceeded" and e["involvedObject"]["name"] == "data-db-0"
               and e["message"] == f"Successfully provisioned volume {claims[0]['spec']['volumeName']} using haru.dev/hostpath"
               for e in items)

    for name in pods:
        await _make_ready(cluster, name)
    await cluster.client.patch(STATEFULSETS, "db", {"spec": {"replicas": 1}}, NS)

    async def scaled_claim_gone() -> list[str] | None:
        # whenScaled=Delete: the condemned pod owns its claim, so the collector takes it with the pod.
        names = sorted(c["metadata"]["name"] for c in (await cluster.client.list(PERSISTENTVOLUMECLAIMS, NS))["items"]
                       if c["metadata"]["name"].startswith("data-db-"))
        return names if names == ["data-db-0"] else None
    await eventually(scaled_claim_gone, timeout=10)


@pytest.mark.asyncio(loop_scope="module")
async def test_an_immediate_claim_binds_to_the_smallest_available_volume(cluster: Cluster) -> None:
    for name, size in (("big", "10Gi"), ("small", "2Gi"), ("tiny", "100Mi")):
        await cluster.client.create(PERSISTENTVOLUMES, {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                                                        "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                                                                 "storageClassName": "manual", "hostPath": {"path": f"/tmp/{name}"}}})
    await cluster.client.create(PERSISTENTVOLUMECLAIMS, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                                         "metadata": {"name": "want"}, "spec": {
                                                             "storageClassName": "manual", "accessModes": ["ReadWriteOnce"],
                                                             "resources": {"requests": {"storage": "1Gi"}}}}, NS)

    async def bound() -> dict[str, Any] | None:
        claim = await cluster.client.get(PERSISTENTVOLUMECLAIMS, "want", NS)
        return claim if claim["status"].get("phase") == "Bound" else None
    claim = await eventually(bound)
    assert claim["spec"]["volumeName"] == "small" and claim["status"]["capacity"] == {"storage": "2Gi"}
    assert (await cluster.client.get(PERSISTENTVOLUMES, "tiny"))["status"]["phase"] == "Available"


@pytest.mark.asyncio(loop_scope="module")
async def test_a_wait_for_first_consumer_claim_binds_the_volume_the_scheduler_pre_bound(cluster: Cluster) -> None:
    await cluster.client.create(STORAGECLASSES, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                                 "metadata": {"name": "local-static"}, "provisioner": "kubernetes.io/no-provisioner",
                                                 "volumeBindingMode": "WaitForFirstConsumer"})
    for name in ("local-a", "local-b"):
        await cluster.client.create(PERSISTENTVOLUMES, {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                                                        "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                                                                 "storageClassName": "local-static", "hostPath": {"path": f"/tmp/{name}"}}})
    claim = await cluster.client.create(PERSISTENTVOLUMECLAIMS, {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "local-data"},
        "spec": {"storageClassName": "local-static", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}, NS)
    # The scheduler's VolumeBinding PreBind writes only the PV's claimRef; no selected-node for a static bind.
    pv = await cluster.client.get(PERSISTENTVOLUMES, "local-b")
    pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": NS, "name": "local-data",
                              "uid": claim["metadata"]["uid"], "resourceVersion": claim["metadata"]["resourceVersion"]}
    pv["metadata"].setdefault("annotations", {})[volume_binder.ANN_BOUND_BY_CONTROLLER] = "yes"
    await cluster.client.update(PERSISTENTVOLUMES, pv)

    async def bound() -> dict[str, Any] | None:
        got = await cluster.client.get(PERSISTENTVOLUMECLAIMS, "local-data", NS)
        return got if got["status"].get("phase") == "Bound" else None
    got = await eventually(bound)
    assert got["spec"]["volumeName"] == "local-b"
    assert got["metadata"]["annotations"][volume_binder.ANN_BIND_COMPLETED] == "yes"
    assert volume_binder.ANN_SELECTED_NODE not in got["metadata"]["annotations"]
    assert (await cluster.client.get(PERSISTENTVOLUMES, "local-b"))["status"]["phase"] == "Bound"
    assert (await cluster.client.get(PERSISTENTVOLUMES, "local-a"))["status"]["phase"] == "Available"


@pytest.mark.asyncio(loop_scope="module")
async def test_a_revision_name_taken_by_other_data_bumps_the_collision_count(cluster: Cluster) -> None:
    # The hash covers only the template, so a probe set with the same template shows the name "clash" would take.
    await cluster.client.create(STATEFULSETS, _body("probe", 0, template={
        "metadata": {"labels": {"app": "clash"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        selector={"matchLabels": {"app": "clash"}}), NS)

    async def probe_revision() -> str | None:
        status = await _status(cluster, "probe")
        return status.get("updateRevision")
    taken = (await eventually(probe_revision)).removeprefix("probe-")
    await cluster.client.delete(STATEFULSETS, "probe", NS)
    await cluster.client.create(CONTROLLERREVISIONS, {
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": f"clash-{taken}", "labels": {"other": "owner"}}, "data": {"something": "else"}, "revision": 1}, NS)

    await cluster.client.create(STATEFULSETS, _body("clash", 1), NS)

    async def collided() -> dict[str, Any] | None:
        status = await _status(cluster, "clash")
        return status if status.get("collisionCount") == 1 and status.get("updateRevision") else None
    status = await eventually(collided)
    assert status["updateRevision"] != f"clash-{taken}"
    mine = await cluster.client.get(CONTROLLERREVISIONS, status["updateRevision"], NS)
    assert mine["metadata"]["ownerReferences"][0]["name"] == "clash"
    assert (await cluster.client.get(CONTROLLERREVISIONS, f"clash-{taken}", NS))["data"] == {"something": "else"}


@pytest.mark.asyncio(loop_scope="module")
async def test_a_wait_for_first_consumer_claim_is_provisioned_on_the_node_the_scheduler_selects(cluster: Cluster) -> None:
    await cluster.client.create(STORAGECLASSES, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                                 "metadata": {"name": "late"}, "provisioner": "haru.dev/hostpath",
                                                 "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"})
    await cluster.client.create(PERSISTENTVOLUMECLAIMS, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                                         "metadata": {"name": "later"}, "spec": {
                                                             "storageClassName": "late", "accessModes": ["ReadWriteOnce"],
                                                             "resources": {"requests": {"storage": "3Gi"}}}}, NS)

    async def waiting() -> list[dict[str, Any]] | None:
        items = (await cluster.client.list(EVENTS, NS)).get("items") or []
        return [e for e in items if e["involvedObject"]["name"] == "later" and e["reason"] == "WaitForFirstConsumer"] or None
    [event] = await eventually(waiting)
    assert event["message"] == "waiting for first consumer to be created before binding"
    assert (await cluster.client.get(PERSISTENTVOLUMECLAIMS, "later", NS))["status"]["phase"] == "Pending"

    # The scheduler's VolumeBinding PreBind: the node it chose, on the claim.
    await cluster.client.patch(PERSISTENTVOLUMECLAIMS, "later", {"metadata": {"annotations": {
        volume_binder.ANN_SELECTED_NODE: "node-7"}}}, NS, patch_type="merge")

    async def bound() -> dict[str, Any] | None:
        claim = await cluster.client.get(PERSISTENTVOLUMECLAIMS, "later", NS)
        return claim if claim["status"].get("phase") == "Bound" else None
    claim = await eventually(bound)
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] == "haru.dev/hostpath"
    pv = await cluster.client.get(PERSISTENTVOLUMES, claim["spec"]["volumeName"])
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-7"]}]
    assert pv["spec"]["capacity"] == {"storage": "3Gi"} and pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"

    # Retain: once the claim goes the volume stays, Released.
    await cluster.client.delete(PERSISTENTVOLUMECLAIMS, "later", NS)

    async def released() -> dict[str, Any] | None:
        volume = await cluster.client.get(PERSISTENTVOLUMES, pv["metadata"]["name"])
        return volume if volume["status"].get("phase") == "Released" else None
    await eventually(released)
