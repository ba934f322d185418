"""The ResourceClaim controller against a real API server (in-process), driven by its informers,
read back with the `kubernetes` 36.0.3 Python client too.

A template entry gets its claim (generated name, annotation, controller owner, the template's
labels, annotations and spec) recorded in the pod status; a missing template is a Warning event
and is retried; a claim the pod already owns is reused, not doubled; reservations of pods that are
done go, a claim under delete-protection is deallocated and loses the finalizer; a pod bound by
hand gets its allocated claim reserved; a generated claim of a finished pod is deleted.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kubernetes import client as pyclient

from client import errors
from client.resources import EVENTS, PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES
from controllers import pod_claims
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("resource-claim",)
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"
SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}
ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-0", "device": "gpu-0"}]}}


def _pod(name: str, claims: list[dict[str, Any]], node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "busybox", "resources": {
        "claims": [{"name": c["name"]} for c in claims]}}], "resourceClaims": claims}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _template(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"metadata": {"labels": {"team": "ml"}, "annotations": {"note": "from template"}}, "spec": SPEC}}


async def _claims_of(cluster: Cluster, uid: str) -> list[dict[str, Any]]:
    items = (await cluster.client.list(RESOURCECLAIMS, NS)).get("items") or []
    return [c for c in items if any(r.get("uid") == uid for r in c["metadata"].get("ownerReferences") or [])]


async def _statuses(cluster: Cluster, pod: str) -> list[dict[str, Any]]:
    return (await cluster.client.get(PODS, pod, NS)).get("status", {}).get("resourceClaimStatuses") or []


async def test_a_template_entry_gets_its_claim_recorded_in_the_pod_status(cluster: Cluster) -> None:
    await cluster.client.create(RESOURCECLAIMTEMPLATES, _template("gpu-template"), NS)
    pod = await cluster.client.create(PODS, _pod("trainer", [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]), NS)

    statuses = await eventually(lambda: _statuses(cluster, "trainer"))

    [claim] = await _claims_of(cluster, pod["metadata"]["uid"])
    meta = claim["metadata"]
    assert statuses == [{"name": "gpu", "resourceClaimName": meta["name"]}]
    assert meta["name"].startswith("trainer-gpu-") and len(meta["name"]) == len("trainer-gpu-") + 5
    assert meta["annotations"] == {"note": "from template", pod_claims.POD_CLAIM_NAME: "gpu"}
    assert meta["labels"] == {"team": "ml"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": pod["metadata"]["uid"],
                                        "controller": True, "blockOwnerDeletion": True}]
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    # The `kubernetes` 36.0.3 client reads the claim and the pod status as typed objects.
    api = pyclient.ApiClient(pyclient.Configuration(host=cluster.url))
    typed = await asyncio.to_thread(pyclient.ResourceV1Api(api).read_namespaced_resource_claim, meta["name"], NS)
    assert (typed.metadata.owner_references[0].controller, typed.metadata.owner_references[0].block_owner_deletion) == (True, True)
    typed_pod = await asyncio.to_thread(pyclient.CoreV1Api(api).read_namespaced_pod_status, "trainer", NS)
    assert [(s.name, s.resource_claim_name) for s in typed_pod.status.resource_claim_statuses] == [("gpu", meta["name"])]


async def test_a_missing_template_is_a_warning_event_and_is_retried(cluster: Cluster) -> None:
    pod = await cluster.client.create(PODS, _pod("waiting", [{"name": "gpu", "resourceClaimTemplateName": "later"}]), NS)

    async def warned() -> list[dict[str, Any]]:
        items = (await cluster.client.list(EVENTS, NS)).get("items") or []
        return [e for e in items if e["involvedObject"].get("name") == "waiting"]

    [event, *_] = await eventually(warned)
    assert (event["type"], event["reason"], event["source"]) == ("Warning", "FailedResourceClaimCreation",
                                                                 {"component": "resource_claim"})
    assert event["message"] == ('PodResourceClaim gpu: resource claim template "later": '
                                'resourceclaimtemplate.resource.k8s.io "later" not found')

    await cluster.client.create(RESOURCECLAIMTEMPLATES, _template("later"), NS)

    await eventually(lambda: _statuses(cluster, "waiting"), timeout=10)
    assert len(await _claims_of(cluster, pod["metadata"]["uid"])) == 1


async def test_a_claim_the_pod_already_owns_is_recorded_instead_of_a_second_one(cluster: Cluster) -> None:
    pod = await cluster.client.create(PODS, _pod("restarted", [{"name": "gpu", "resourceClaimTemplateName": "absent"}]), NS)
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "restarted", "uid": pod["metadata"]["uid"],
             "controller": True, "blockOwnerDeletion": True}
    made = await cluster.client.create(RESOURCECLAIMS, {"metadata": {
        "name": "restarted-gpu-abcde", "ownerReferences": [owner], "annotations": {pod_claims.POD_CLAIM_NAME: "gpu"}},
        "spec": SPEC}, NS)
    await cluster.client.create(RESOURCECLAIMTEMPLATES, _template("absent"), NS)

    statuses = await eventually(lambda: _statuses(cluster, "restarted"), timeout=10)

    assert statuses == [{"name": "gpu", "resourceClaimName": "restarted-gpu-abcde"}]
    assert [c["metadata"]["uid"] for c in await _claims_of(cluster, pod["metadata"]["uid"])] == [made["metadata"]["uid"]]


async def _write_status(cluster: Cluster, name: str, status: dict[str, Any]) -> dict[str, Any]:
    return await cluster.client.patch(RESOURCECLAIMS, name, {"status": status}, NS, subresource="status")


async def test_a_done_pods_reservation_goes_and_a_protected_claim_is_deallocated(cluster: Cluster) -> None:
    await cluster.client.create(RESOURCECLAIMS, {"metadata": {
        "name": "shared", "finalizers": [pod_claims.DELETE_PROTECTION]}, "spec": SPEC}, NS)
    pod = await cluster.client.create(PODS, _pod("user", [{"name": "gpu", "resourceClaimName": "shared"}], node="gpu-0"), NS)
    await _write_status(cluster, "shared", {"allocation": ALLOCATION, "reservedFor": [
        {"resource": "pods", "name": "user", "uid": pod["metadata"]["uid"]}]})

    await cluster.client.patch(PODS, "user", {"status": {"phase": "Succeeded"}}, NS, subresource="status")

    async def released() -> dict[str, Any] | None:
        claim = await cluster.client.get(RESOURCECLAIMS, "shared", NS)
        done = not claim.get("status", {}).get("reservedFor") and not claim["metadata"].get("finalizers")
        return claim if done else None

    claim = await eventually(released)
    assert "allocation" not in claim.get("status", {})


async def test_a_pod_bound_by_hand_gets_its_allocated_claim_reserved(cluster: Cluster) -> None:
    await cluster.client.create(RESOURCECLAIMS, {"metadata": {"name": "by-hand"}, "spec": SPEC}, NS)
    await _write_status(cluster, "by-hand", {"allocation": ALLOCATION})
    pod = await cluster.client.create(PODS, _pod("bound", [{"name": "gpu", "resourceClaimName": "by-hand"}], node="gpu-0"), NS)

    async def reserved() -> list[dict[str, Any]]:
        return (await cluster.client.get(RESOURCECLAIMS, "by-hand", NS)).get("status", {}).get("reservedFor") or []

    assert await eventually(reserved) == [{"resource": "pods", "name": "bound", "uid": pod["metadata"]["uid"]}]


async def test_the_generated_claim_of_a_finished_pod_is_deleted(cluster: Cluster) -> None:
    await cluster.client.create(RESOURCECLAIMTEMPLATES, _template("batch"), NS)
    pod = await cluster.client.create(PODS, _pod("job-0", [{"name": "gpu", "resourceClaimTemplateName": "batch"}]), NS)
    [status] = await eventually(lambda: _statuses(cluster, "job-0"))

    await cluster.client.patch(PODS, "job-0", {"status": {"phase": "Failed"}}, NS, subresource="status")

    async def gone() -> bool:
        try:
            await cluster.client.get(RESOURCECLAIMS, status["resourceClaimName"], NS)
        except errors.APIError as exc:
            return errors.is_not_found(exc)
        return False

    await eventually(gone)
    assert await _claims_of(cluster, pod["metadata"]["uid"]) == []


async def test_a_deleted_unused_protected_claim_is_deallocated_and_let_go(cluster: Cluster) -> None:
    await cluster.client.create(RESOURCECLAIMS, {"metadata": {
        "name": "leaving", "finalizers": [pod_claims.DELETE_PROTECTION]}, "spec": SPEC}, NS)
    await _write_status(cluster, "leaving", {"allocation": ALLOCATION})

    await cluster.client.delete(RESOURCECLAIMS, "leaving", NS)

    async def gone() -> bool:
        try:
            await cluster.client.get(RESOURCECLAIMS, "leaving", NS)
        except errors.APIError as exc:
            return errors.is_not_found(exc)
        return False

    await eventually(gone)


async def test_the_extended_resource_claim_of_a_finished_pod_is_released_and_deleted(cluster: Cluster) -> None:
    pod = await cluster.client.create(PODS, {"metadata": {"name": "extended"}, "spec": {"nodeName": "gpu-0", "containers": [
        {"name": "main", "image": "cuda", "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]}}, NS)
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "extended", "uid": pod["metadata"]["uid"], "controller": True}
    name = "extended-extended-resources-a1b2c"
    await cluster.client.create(RESOURCECLAIMS, {"metadata": {
        "name": name, "ownerReferences": [owner], "finalizers": [pod_claims.DELETE_PROTECTION],
        "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"}}, "spec": SPEC}, NS)
    await _write_status(cluster, name, {"allocation": ALLOCATION, "reservedFor": [
        {"resource": "pods", "name": "extended", "uid": pod["metadata"]["uid"]}]})
    await cluster.client.patch(PODS, "extended", {"status": {"extendedResourceClaimStatus": {
        "resourceClaimName": name, "requestMappings": [
            {"containerName": "main", "resourceName": "nvidia.com/gpu", "requestName": "gpu"}]}}}, NS, subresource="status")

    await cluster.client.patch(PODS, "extended", {"status": {"phase": "Succeeded"}}, NS, subresource="status")

    async def gone() -> bool:
        try:
            await cluster.client.get(RESOURCECLAIMS, name, NS)
        except errors.APIError as exc:
            return errors.is_not_found(exc)
        return False

    await eventually(gone)
