"""With DRAWorkloadResourceClaims off (the controllers' gates), a pod of a PodGroup gets its own
claim from the template even when its group names the same entry, and the group gets none."""

from __future__ import annotations

from typing import Any

import pytest

from client.resources import PODGROUPS, PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES
from controllers import features
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("resource-claim",)
SETTINGS = {"resource-claim": {"features": features.parse("DRAWorkloadResourceClaims=false")}}
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"
ENTRY = {"name": "gpu", "resourceClaimTemplateName": "t"}


async def test_the_pod_gets_its_own_claim(cluster: Cluster) -> None:
    await cluster.client.create(RESOURCECLAIMTEMPLATES, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}, NS)
    await cluster.client.create(PODGROUPS, {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"},
        "spec": {"schedulingPolicy": {"basic": {}}, "resourceClaims": [ENTRY]}}, NS)
    pod = await cluster.client.create(PODS, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "member"},
        "spec": {"schedulingGroup": {"podGroupName": "g"}, "resourceClaims": [ENTRY],
                 "containers": [{"name": "main", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}]}}, NS)

    async def recorded() -> list[dict[str, Any]] | None:
        return (await cluster.client.get(PODS, "member", NS)).get("status", {}).get("resourceClaimStatuses")
    [status] = await eventually(recorded)

    claim = await cluster.client.get(RESOURCECLAIMS, status["resourceClaimName"], NS)
    assert [(o["kind"], o["uid"]) for o in claim["metadata"]["ownerReferences"]] == [("Pod", pod["metadata"]["uid"])]
    assert len((await cluster.client.list(RESOURCECLAIMS, NS))["items"]) == 1
    group = await cluster.client.get(PODGROUPS, "g", NS)
    assert not (group.get("status") or {}).get("resourceClaimStatuses")
