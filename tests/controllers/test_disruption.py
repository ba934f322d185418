"""The disruption controller and the eviction subresource against a real API server in-process:
a budget over a ReplicaSet's pods counts them and allows the spare disruptions; an eviction
charges the budget (disruptionsAllowed down, the pod in disruptedPods) and the next one is
refused with upstream's 429; a Deployment's pods are counted by the Deployment's replicas; a
pod whose controller cannot be found fails the sync with SyncFailed.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from client import errors, retrying
from client.kubeconfig import Config
from client.resources import PODDISRUPTIONBUDGETS, PODS, REPLICASETS, Resource
from client.rest import RestClient
from controllers import pod_states
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("replicaset", "deployment", "disruption")
NS = "default"


def _rs(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def _pdb(name: str, app: str, **rule: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": app}}, **rule}}


async def _ready_pods(cluster: Cluster, app: str, n: int) -> list[str]:
    async def made() -> list[dict[str, Any]] | None:
        pods = (await cluster.client.list(PODS, NS, label_selector=f"app={app}"))["items"]
        return pods if len(pods) == n else None

    names = [p["metadata"]["name"] for p in await eventually(made)]
    now = pod_states.format_time(time.time())
    for name in names:
        await cluster.client.patch(PODS, name, {"status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": now}]}}, NS, subresource="status")
    return names


def _status_where(cluster: Cluster, name: str, **want: Any) -> Any:
    async def check() -> dict[str, Any] | None:
        status = (await cluster.client.get(PODDISRUPTIONBUDGETS, name, NS)).get("status") or {}
        return status if all(status.get(k) == v for k, v in want.items()) else None
    return check


async def _evict(cluster: Cluster, pod: str) -> Any:
    # Without retries: the client would resend a 429 (kubectl drain does its own every 5 s).
    once = RestClient(Config.for_url(cluster.url), retry=retrying.NEVER)
    try:
        return await once.request("POST", PODS.path(NS, pod, "eviction"), body={
            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": NS}})
    finally:
        await once.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_evictions_charge_the_budget_until_it_refuses(cluster: Cluster) -> None:
    await cluster.client.create(REPLICASETS, _rs("guarded", 3), NS)
    pods = await _ready_pods(cluster, "guarded", 3)
    await cluster.client.create(PODDISRUPTIONBUDGETS, _pdb("guard", "guarded", minAvailable=2), NS)

    status = await eventually(_status_where(cluster, "guard", currentHealthy=3, disruptionsAllowed=1))
    assert (status["expectedPods"], status["desiredHealthy"], status["observedGeneration"]) == (3, 2, 1)
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == \
        [("DisruptionAllowed", "True", "SufficientPods")]

    assert (await _evict(cluster, pods[0]))["status"] == "Success"
    charged = (await cluster.client.get(PODDISRUPTIONBUDGETS, "guard", NS))["status"]
    assert charged["disruptionsAllowed"] == 0 and list(charged["disruptedPods"]) == [pods[0]]

    with pytest.raises(errors.APIError) as refused:
        await _evict(cluster, pods[1])
    assert refused.value.code == 429 and refused.value.reason == "TooManyRequests"
    assert refused.value.message == "Cannot evict pod as it would violate the pod's disruption budget."
    [cause] = refused.value.status["details"]["causes"]
    # currentHealthy is 3 until the controller has seen the eviction, then 2: either may be read here.
    assert cause["reason"] == "DisruptionBudget"
    assert re.fullmatch(r"The disruption budget guard needs 2 healthy pods and has [23] currently", cause["message"])
    await cluster.client.get(PODS, pods[1], NS)  # still there

    # The evicted pod's deletion shows: it leaves disruptedPods; its replacement is not ready yet.
    settled = await eventually(_status_where(cluster, "guard", currentHealthy=2, disruptionsAllowed=0, disruptedPods=None))
    assert settled["conditions"][0]["reason"] == "InsufficientPods"


@pytest.mark.asyncio(loop_scope="module")
async def test_max_unavailable_counts_by_the_deployments_replicas(cluster: Cluster) -> None:
    from client.resources import DEPLOYMENTS
    labels = {"app": "dep"}
    await cluster.client.create(DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "dep"},
        "spec": {"replicas": 4, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}, NS)
    await _ready_pods(cluster, "dep", 4)
    await cluster.client.create(PODDISRUPTIONBUDGETS, _pdb("dep-budget", "dep", maxUnavailable="30%"), NS)

    status = await eventually(_status_where(cluster, "dep-budget", currentHealthy=4, expectedPods=4))
    assert (status["desiredHealthy"], status["disruptionsAllowed"]) == (2, 2)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_pod_whose_controller_is_unknown_fails_the_sync(cluster: Cluster) -> None:
    await cluster.client.create(PODS, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "labels": {"app": "stray"}, "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "nowhere", "uid": "no-such-uid", "controller": True}]},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, NS)
    await cluster.client.create(PODDISRUPTIONBUDGETS, _pdb("stray-budget", "stray", maxUnavailable=1), NS)

    async def failed() -> dict[str, Any] | None:
        status = (await cluster.client.get(PODDISRUPTIONBUDGETS, "stray-budget", NS)).get("status") or {}
        conditions = status.get("conditions") or []
        return conditions[0] if conditions and conditions[0]["reason"] == "SyncFailed" else None

    condition = await eventually(failed)
    assert condition["status"] == "False" and condition["message"] == 'found no controllers for pod "stray"'


CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False)
WIDGETS = Resource("example.com", "v1", "widgets", "Widget")


@pytest.mark.asyncio(loop_scope="module")
async def test_a_custom_controller_counts_by_its_scale_subresource(cluster: Cluster) -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer"}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}
    await cluster.client.create(CRDS, {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema},
                               "subresources": {"scale": {"specReplicasPath": ".spec.replicas",
                                                          "statusReplicasPath": ".status.replicas"}}}]}})

    async def made() -> dict[str, Any] | None:
        try:
            return await cluster.client.create(WIDGETS, {"apiVersion": "example.com/v1", "kind": "Widget",
                                                         "metadata": {"name": "w"}, "spec": {"replicas": 5}}, NS)
        except errors.APIError:
            return None  # not served yet

    widget = await eventually(made)
    await cluster.client.create(PODS, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "widget-pod", "labels": {"app": "widget"}, "ownerReferences": [
            {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": widget["metadata"]["uid"],
             "controller": True}]},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, NS)
    await cluster.client.create(PODDISRUPTIONBUDGETS, _pdb("widget-budget", "widget", maxUnavailable=1), NS)

    status = await eventually(_status_where(cluster, "widget-budget", expectedPods=5))
    assert (status["desiredHealthy"], status["currentHealthy"], status["disruptionsAllowed"]) == (4, 0, 0)
