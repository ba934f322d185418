"""Claims for a whole PodGroup (KEP-5729) made by the ResourceClaim controller, against a real API
server (in-process), read back with kubectl v1.36.3.

A PodGroup's template entry gets one claim (generateName `<group>-<entry>-`, the pod-claim-name
annotation, the PodGroup as controller) named in `status.resourceClaimStatuses`; every pod of the
group whose entry has the same name and template records that claim and gets none of its own; a
pod whose entry differs (another template) gets its own claim. A PodGroup reservation of a claim
goes once the PodGroup is gone.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from client.resources import PODGROUPS, PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("resource-claim",)
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"
SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}


def _template(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": SPEC}}


def _group(name: str, claims: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"basic": {}}, "resourceClaims": claims}}


def _pod(name: str, group: str, claims: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulingGroup": {"podGroupName": group}, "resourceClaims": claims,
                     "containers": [{"name": "main", "image": "busybox",
                                     "resources": {"claims": [{"name": c["name"]} for c in claims]}}]}}


async def _statuses(cluster: Cluster, resource: Any, name: str) -> list[dict[str, Any]]:
    return (await cluster.client.get(resource, name, NS)).get("status", {}).get("resourceClaimStatuses") or []


async def test_one_claim_for_the_group_shared_by_its_pods(cluster: Cluster) -> None:
    await cluster.client.create(RESOURCECLAIMTEMPLATES, _template("shared-gpu"), NS)
    await cluster.client.create(RESOURCECLAIMTEMPLATES, _template("own-gpu"), NS)
    entry = {"name": "gpu", "resourceClaimTemplateName": "shared-gpu"}
    # Pods first: they wait for their group, as the scheduler does.
    for name in ("worker-0", "worker-1"):
        await cluster.client.create(PODS, _pod(name, "trainers", [entry]), NS)
    await cluster.client.create(PODS, _pod("odd", "trainers", [{"name": "gpu", "resourceClaimTemplateName": "own-gpu"}]),
                                NS)
    group = await cluster.client.create(PODGROUPS, _group("trainers", [entry]), NS)

    [status] = await eventually(lambda: _statuses(cluster, PODGROUPS, "trainers"))
    claim = await cluster.client.get(RESOURCECLAIMS, status["resourceClaimName"], NS)
    assert status["name"] == "gpu"
    assert claim["metadata"]["generateName"] == "trainers-gpu-"
    assert claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpu"
    assert claim["metadata"]["ownerReferences"] == [{
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "name": "trainers",
        "uid": group["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert claim["spec"] == SPEC
    for name in ("worker-0", "worker-1"):
        statuses = await eventually(lambda: _statuses(cluster, PODS, name))
        assert statuses == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]
    odd = await eventually(lambda: _statuses(cluster, PODS, "odd"))
    assert odd[0]["resourceClaimName"] != claim["metadata"]["name"]
    claims = (await cluster.client.list(RESOURCECLAIMS, NS))["items"]
    assert sorted(c["metadata"]["generateName"] for c in claims) == ["odd-gpu-", "trainers-gpu-"]

    code, out, err = await cluster.kubectl("get", "podgroup", "trainers", "-o",
                                           "jsonpath={.status.resourceClaimStatuses}")
    assert code == 0, err
    assert json.loads(out) == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]


async def test_a_group_reservation_goes_with_its_group(cluster: Cluster) -> None:
    group = await cluster.client.create(PODGROUPS, _group("gone", []), NS)
    claim = await cluster.client.create(RESOURCECLAIMS, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "held"}, "spec": SPEC}, NS)
    ref = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "gone", "uid": group["metadata"]["uid"]}
    claim["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "p", "device": "d"}]}}, "reservedFor": [ref]}
    await cluster.client.update(RESOURCECLAIMS, claim, subresource="status")
    kept = await cluster.client.get(RESOURCECLAIMS, "held", NS)
    assert kept["status"]["reservedFor"] == [ref]

    await cluster.client.delete(PODGROUPS, "gone", NS)

    async def released() -> dict[str, Any] | None:
        current = await cluster.client.get(RESOURCECLAIMS, "held", NS)
        return current if not current.get("status", {}).get("reservedFor") else None
    await eventually(released)
