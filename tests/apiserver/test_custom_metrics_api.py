"""custom.metrics.k8s.io/v1beta2 and external.metrics.k8s.io/v1beta1 from an in-process API server:
values from `metrics.haru.dev/<metric>` annotations and the `haru-metrics` ConfigMap, answered in
upstream's MetricValueList / ExternalMetricValueList shapes, with the adapters' 404 texts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"
pytestmark = pytest.mark.asyncio


def _deployment(name: str, annotations: dict[str, str]) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "containers": [{"name": "c", "image": "busybox"}]}}}}


async def _create(api: Any, path: str, obj: dict[str, Any]) -> None:
    status, body, _ = await api.request("POST", path, json=obj)
    assert status == 201, body


async def test_an_annotated_deployment_has_its_object_metric(api: Any) -> None:
    await _create(api, "/apis/apps/v1/namespaces/default/deployments",
                  _deployment("web", {"metrics.haru.dev/requests-per-second": "1500m"}))
    status, body, _ = await api.request("GET", f"{CUSTOM}/namespaces/default/deployments.apps/web/requests-per-second")
    assert status == 200, body
    assert body["kind"] == "MetricValueList" and body["apiVersion"] == "custom.metrics.k8s.io/v1beta2"
    [item] = body["items"]
    assert item["describedObject"] == {"kind": "Deployment", "namespace": "default", "name": "web",
                                       "apiVersion": "apps/v1"}
    assert item["metric"]["name"] == "requests-per-second" and item["value"] == "1500m"
    assert item["timestamp"].endswith("Z")


async def test_an_unknown_object_metric_is_the_adapters_not_found(api: Any) -> None:
    await _create(api, "/apis/apps/v1/namespaces/default/deployments", _deployment("quiet", {}))
    status, body, _ = await api.request("GET", f"{CUSTOM}/namespaces/default/deployments.apps/quiet/hits")
    assert status == 404 and body["reason"] == "NotFound"
    assert body["message"] == "the server could not find the metric hits for deployments.apps quiet"
    status, body, _ = await api.request("GET", f"{CUSTOM}/namespaces/default/deployments.apps/missing/hits")
    assert status == 404
    assert body["message"] == "the server could not find the metric hits for deployments.apps missing"


async def test_pods_metrics_list_every_selected_pod_with_a_value(api: Any) -> None:
    for name, app, value in (("a", "web", "10"), ("b", "web", "20"), ("c", "db", "30")):
        await _create(api, "/api/v1/namespaces/default/pods", {"metadata": {
            "name": name, "labels": {"app": app}, "annotations": {"metrics.haru.dev/queue": value}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    status, body, _ = await api.request("GET", f"{CUSTOM}/namespaces/default/pods/*/queue?labelSelector=app%3Dweb")
    assert status == 200, body
    assert [(i["describedObject"]["name"], i["value"]) for i in body["items"]] == [("a", "10"), ("b", "20")]
    assert all(i["describedObject"]["kind"] == "Pod" and i["describedObject"]["apiVersion"] == "v1"
               for i in body["items"])
    status, body, _ = await api.request("GET", f"{CUSTOM}/namespaces/default/pods/*/latency")
    assert status == 404 and body["message"] == "the server could not find the metric latency for pods"


async def test_external_metrics_come_from_the_haru_metrics_configmap(api: Any) -> None:
    series = [{"labels": {"queue": "jobs"}, "value": "7"}, {"labels": {"queue": "mail"}, "value": "2500m"}]
    await _create(api, "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "haru-metrics"},
                                                                 "data": {"backlog": "12", "queues": json.dumps(series)}})
    status, body, _ = await api.request("GET", f"{EXTERNAL}/namespaces/default/backlog")
    assert status == 200, body
    assert body["kind"] == "ExternalMetricValueList" and body["apiVersion"] == "external.metrics.k8s.io/v1beta1"
    [item] = body["items"]
    assert (item["metricName"], item["metricLabels"], item["value"]) == ("backlog", {}, "12")
    status, body, _ = await api.request("GET", f"{EXTERNAL}/namespaces/default/queues?labelSelector=queue%3Dmail")
    assert [(i["metricLabels"], i["value"]) for i in body["items"]] == [({"queue": "mail"}, "2500m")]
    status, body, _ = await api.request("GET", f"{EXTERNAL}/namespaces/default/queues?labelSelector=queue%3Dnone")
    assert status == 200 and body["items"] == []


async def test_an_unknown_external_metric_is_not_found_and_writes_are_refused(api: Any) -> None:
    status, body, _ = await api.request("GET", f"{EXTERNAL}/namespaces/default/nothing")
    assert status == 404 and body["message"] == "the server could not find the metric nothing for namespaces"
    status, body, _ = await api.request("POST", f"{EXTERNAL}/namespaces/default/nothing", json={})
    assert status == 405, body
    status, body, _ = await api.request("GET", f"{EXTERNAL}/namespaces/default/x?labelSelector=a%3D%3D%3Db")
    assert status == 400, body


async def test_each_group_version_lists_the_metrics_that_have_values(api: Any) -> None:
    await _create(api, "/apis/apps/v1/namespaces/default/deployments", _deployment("listed", {
        "metrics.haru.dev/hits": "3"}))
    await _create(api, "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "haru-metrics"},
                                                                 "data": {"backlog": "1"}})
    status, body, _ = await api.request("GET", CUSTOM)
    assert status == 200, body
    assert body["groupVersion"] == "custom.metrics.k8s.io/v1beta2"
    assert body["resources"] == [{"name": "deployments.apps/hits", "singularName": "", "namespaced": True,
                                  "kind": "MetricValueList", "verbs": ["get"]}]
    status, body, _ = await api.request("GET", EXTERNAL)
    assert [r["name"] for r in body["resources"]] == ["backlog"]
    assert body["resources"][0]["kind"] == "ExternalMetricValueList"
    status, body, _ = await api.request("GET", "/apis/external.metrics.k8s.io")
    assert body["preferredVersion"] == {"groupVersion": "external.metrics.k8s.io/v1beta1", "version": "v1beta1"}
    status, _, _ = await api.request("GET", "/apis/external.metrics.k8s.io/v1beta2")
    assert status == 404
