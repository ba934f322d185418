"""The HorizontalPodAutoscaler controller against a real API server (in-process), with metric values
set by the test through the `haru-metrics` ConfigMap (External) and annotations (Object).

Only the HPA controller runs, so a Deployment's replicas are what the HPA wrote through `/scale`.
An External AverageValue metric scales 1 → 3 when the value rises, with the SuccessfulRescale event,
status and conditions; with minReplicas 0 it scales to 0 and back; a target at 0 with minReplicas 1
is left alone (ScalingDisabled); an unknown metric and a missing target set the failure conditions;
an Object metric read from an annotation scales; a Pods metric averages its pods' annotations;
StatefulSets and ReplicaSets scale through their `/scale` too; a replica count above max is brought down; the default 300 s scale-down window holds until the clock passes it.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from client import errors
from client.resources import CONFIGMAPS, DEPLOYMENTS, EVENTS, PODS, REPLICASETS, STATEFULSETS
from controllers import timestamps
from controllers.horizontal_pod_autoscaler import HPAS
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually



class Clock:
    """The controller's clock: real time plus what a test skipped ahead."""

    def __init__(self) -> None:
        self.skipped = 0.0

    def __call__(self) -> float:
        return time.time() + self.skipped


CLOCK = Clock()
CONTROLLERS = ("horizontal-pod-autoscaler",)
SETTINGS = {"horizontal-pod-autoscaler": {"sync_period": 0.2, "clock": CLOCK}}
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"
FAST_DOWN = {"scaleDown": {"stabilizationWindowSeconds": 0}}


def _deployment(name: str, replicas: int = 1, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "annotations": annotations or {}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}


def _external(metric: str, average: str) -> dict[str, Any]:
    return {"type": "External", "external": {"metric": {"name": metric},
                                             "target": {"type": "AverageValue", "averageValue": average}}}


def _hpa(name: str, target: str, metrics: list[dict[str, Any]], *, low: int = 1, high: int = 5,
         behavior: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                            "minReplicas": low, "maxReplicas": high, "metrics": metrics}
    if behavior is not None:
        spec["behavior"] = behavior
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": spec}


async def _set_metric(cluster: Cluster, key: str, value: str) -> None:
    try:
        await cluster.client.get(CONFIGMAPS, "haru-metrics", NS)
    except errors.APIError as exc:
        if not errors.is_not_found(exc):
            raise
        await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "haru-metrics"}, "data": {key: value}}, NS)
        return
    await cluster.client.patch(CONFIGMAPS, "haru-metrics", {"data": {key: value}}, NS)


async def _replicas(cluster: Cluster, name: str) -> int:
    return (await cluster.client.get(DEPLOYMENTS, name, NS))["spec"].get("replicas", 1)


async def _replicas_are(cluster: Cluster, name: str, n: int) -> bool:
    return await _replicas(cluster, name) == n


def _condition(hpa: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in (hpa.get("status") or {}).get("conditions") or [] if c["type"] == kind), {})


async def _hpa_where(cluster: Cluster, name: str, kind: str, reason: str) -> dict[str, Any] | None:
    hpa = await cluster.client.get(HPAS, name, NS)
    return hpa if _condition(hpa, kind).get("reason") == reason else None


async def _event_messages(cluster: Cluster, name: str, reason: str) -> list[str]:
    items = (await cluster.client.list(EVENTS, NS)).get("items") or []
    return [e["message"] for e in items if e["involvedObject"].get("name") == name and e["reason"] == reason]


async def test_an_external_metric_rising_scales_a_deployment_from_one_to_three(cluster: Cluster) -> None:
    await _set_metric(cluster, "web_queue", "10")
    await cluster.client.create(DEPLOYMENTS, _deployment("web"), NS)
    await cluster.client.create(HPAS, _hpa("web", "web", [_external("web_queue", "10")]), NS)
    hpa = await eventually(lambda: _hpa_where(cluster, "web", "ScalingActive", "ValidMetricFound"))
    assert await _replicas(cluster, "web") == 1
    await _set_metric(cluster, "web_queue", "30")
    await eventually(lambda: _replicas_are(cluster, "web", 3))
    assert await eventually(lambda: _event_messages(cluster, "web", "SuccessfulRescale")) == [
        "New size: 3; reason: external metric web_queue(nil) above target"]
    hpa = await eventually(lambda: _settled(cluster, "web", 3))
    status = hpa["status"]
    assert status["lastScaleTime"].endswith("Z") and status["observedGeneration"] == hpa["metadata"]["generation"]
    # No ReplicaSets run here, so the scale's status.replicas stays 0 and the average is the total.
    assert status["currentMetrics"] == [{"type": "External", "external": {"metric": {"name": "web_queue"},
                                                                          "current": {"averageValue": "30"}}}]
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("AbleToScale", "True", "ReadyForNewScale"), ("ScalingActive", "True", "ValidMetricFound"),
        ("ScalingLimited", "False", "DesiredWithinRange")]
    assert _condition(hpa, "ScalingActive")["message"] == (
        "the HPA was able to successfully calculate a replica count from external metric web_queue(nil)")


async def _settled(cluster: Cluster, name: str, n: int) -> dict[str, Any] | None:
    hpa = await cluster.client.get(HPAS, name, NS)
    status = hpa.get("status") or {}
    ready = _condition(hpa, "AbleToScale").get("reason") == "ReadyForNewScale"
    return hpa if ready and (status.get("currentReplicas"), status.get("desiredReplicas")) == (n, n) else None


async def test_min_replicas_zero_scales_to_zero_and_back(cluster: Cluster) -> None:
    await _set_metric(cluster, "idle_queue", "20")
    await cluster.client.create(DEPLOYMENTS, _deployment("idle", 2), NS)
    await cluster.client.create(HPAS, _hpa("idle", "idle", [_external("idle_queue", "10")], low=0,
                                           behavior=FAST_DOWN), NS)
    await eventually(lambda: _hpa_where(cluster, "idle", "ScalingActive", "ValidMetricFound"))
    await _set_metric(cluster, "idle_queue", "0")
    await eventually(lambda: _replicas_are(cluster, "idle", 0))
    hpa = await eventually(lambda: _hpa_where(cluster, "idle", "AbleToScale", "ReadyForNewScale"))
    assert _condition(hpa, "ScalingActive")["reason"] == "ValidMetricFound"  # the HPA did it: still active
    assert "New size: 0; reason: All metrics below target" in await eventually(
        lambda: _event_messages(cluster, "idle", "SuccessfulRescale"))
    await _set_metric(cluster, "idle_queue", "15")
    await eventually(lambda: _replicas_are(cluster, "idle", 2))


async def test_a_target_at_zero_with_min_replicas_one_is_left_alone(cluster: Cluster) -> None:
    await _set_metric(cluster, "off_queue", "50")
    await cluster.client.create(DEPLOYMENTS, _deployment("off", 0), NS)
    await cluster.client.create(HPAS, _hpa("off", "off", [_external("off_queue", "10")]), NS)
    hpa = await eventually(lambda: _hpa_where(cluster, "off", "ScalingActive", "ScalingDisabled"))
    assert _condition(hpa, "ScalingActive")["message"] == "scaling is disabled since the replica count of the target is zero"
    assert _condition(hpa, "ScalingActive")["status"] == "False"
    assert await _replicas(cluster, "off") == 0


async def test_an_unknown_metric_stops_scaling_with_the_reason(cluster: Cluster) -> None:
    await cluster.client.create(DEPLOYMENTS, _deployment("blind", 2), NS)
    await cluster.client.create(HPAS, _hpa("blind", "blind", [_external("no_such_metric", "10")]), NS)
    hpa = await eventually(lambda: _hpa_where(cluster, "blind", "ScalingActive", "FailedGetExternalMetric"))
    assert _condition(hpa, "ScalingActive")["message"] == (
        "the HPA was unable to compute the replica count: unable to get external metric default/no_such_metric/nil: "
        "unable to fetch metrics from external metrics API: the server could not find the metric no_such_metric "
        "for namespaces")
    messages = await eventually(lambda: _event_messages(cluster, "blind", "FailedComputeMetricsReplicas"))
    assert messages[0].startswith("invalid metrics (1 invalid out of 1), first error is: unable to get external metric")
    assert await _replicas(cluster, "blind") == 2


async def test_a_missing_target_cannot_be_scaled(cluster: Cluster) -> None:
    await cluster.client.create(HPAS, _hpa("ghost", "ghost", [_external("web_queue", "10")]), NS)
    hpa = await eventually(lambda: _hpa_where(cluster, "ghost", "AbleToScale", "FailedGetScale"))
    assert _condition(hpa, "AbleToScale")["message"] == (
        'the HPA controller was unable to get the target\'s current scale: deployments.apps "ghost" not found')
    assert await eventually(lambda: _event_messages(cluster, "ghost", "FailedGetScale"))


async def test_an_object_metric_from_an_annotation_scales_by_its_average(cluster: Cluster) -> None:
    await cluster.client.create(DEPLOYMENTS, _deployment("api", 1, {"metrics.haru.dev/requests": "400"}), NS)
    metric = {"type": "Object", "object": {"metric": {"name": "requests"},
                                           "describedObject": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                               "name": "api"},
                                           "target": {"type": "AverageValue", "averageValue": "100"}}}
    await cluster.client.create(HPAS, _hpa("api", "api", [metric], high=10), NS)
    await eventually(lambda: _replicas_are(cluster, "api", 4))
    hpa = await eventually(lambda: _hpa_where(cluster, "api", "ScalingActive", "ValidMetricFound"))
    assert _condition(hpa, "ScalingActive")["message"].endswith("from Deployment metric requests")
    assert "New size: 4; reason: Deployment metric requests above target" in await eventually(
        lambda: _event_messages(cluster, "api", "SuccessfulRescale"))


async def test_replicas_above_max_are_brought_down(cluster: Cluster) -> None:
    await _set_metric(cluster, "big_queue", "10")
    await cluster.client.create(DEPLOYMENTS, _deployment("big", 8), NS)
    await cluster.client.create(HPAS, _hpa("big", "big", [_external("big_queue", "10")], high=3), NS)
    await eventually(lambda: _replicas_are(cluster, "big", 3))
    assert await eventually(lambda: _event_messages(cluster, "big", "SuccessfulRescale")) == [
        "New size: 3; reason: Current number of replicas above Spec.MaxReplicas"]


async def _running_pod(cluster: Cluster, name: str, app: str, qps: str) -> None:
    pod = await cluster.client.create(PODS, {"metadata": {"name": name, "labels": {"app": app},
                                                          "annotations": {"metrics.haru.dev/qps": qps}},
                                             "spec": {"containers": [{"name": "c", "image": "busybox"}]}}, NS)
    now = timestamps.format(time.time())
    pod["status"] = {"phase": "Running", "startTime": now,
                     "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}]}
    await cluster.client.update(PODS, pod, subresource="status")


async def test_a_pods_metric_averages_the_pods_annotations(cluster: Cluster) -> None:
    # Two running pods the test made itself (no ReplicaSet controller here) at 30 and 50: average 40
    # against a target of 10 per pod is 4 × the 2 ready pods = 8; without `behavior` one step grows to at
    # most max(2 × 2, 4) = 4, the next to maxReplicas 6.
    await cluster.client.create(DEPLOYMENTS, _deployment("front", 2), NS)
    await _running_pod(cluster, "front-a", "front", "30")
    await _running_pod(cluster, "front-b", "front", "50")
    metric = {"type": "Pods", "pods": {"metric": {"name": "qps"},
                                       "target": {"type": "AverageValue", "averageValue": "10"}}}
    await cluster.client.create(HPAS, _hpa("front", "front", [metric], high=6), NS)
    await eventually(lambda: _replicas_are(cluster, "front", 6))
    hpa = await cluster.client.get(HPAS, "front", NS)
    assert hpa["status"]["currentMetrics"] == [{"type": "Pods", "pods": {"metric": {"name": "qps"},
                                                                         "current": {"averageValue": "40"}}}]
    async def both() -> list[str] | None:
        found = sorted(await _event_messages(cluster, "front", "SuccessfulRescale"))
        return found if len(found) >= 2 else None

    assert await eventually(both) == [
        "New size: 4; reason: pods metric qps above target", "New size: 6; reason: pods metric qps above target"]
    hpa = await eventually(lambda: _hpa_where(cluster, "front", "ScalingLimited", "TooManyReplicas"))
    assert _condition(hpa, "ScalingLimited")["status"] == "True"


async def test_a_statefulset_and_a_replicaset_scale_through_their_scale_subresources(cluster: Cluster) -> None:
    await _set_metric(cluster, "sets_queue", "20")
    labels = {"app": "db"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    await cluster.client.create(STATEFULSETS, {"metadata": {"name": "db"}, "spec": {
        "replicas": 1, "serviceName": "db", "selector": {"matchLabels": labels}, "template": template}}, NS)
    await cluster.client.create(REPLICASETS, {"metadata": {"name": "db-rs"}, "spec": {
        "replicas": 1, "selector": {"matchLabels": labels}, "template": template}}, NS)
    for name, kind in (("db", "StatefulSet"), ("db-rs", "ReplicaSet")):
        hpa = _hpa(name, name, [_external("sets_queue", "10")])
        hpa["spec"]["scaleTargetRef"]["kind"] = kind
        await cluster.client.create(HPAS, hpa, NS)

    async def scaled() -> bool:
        replicas = [(await cluster.client.get(r, n, NS))["spec"]["replicas"]
                    for r, n in ((STATEFULSETS, "db"), (REPLICASETS, "db-rs"))]
        return replicas == [2, 2]

    await eventually(scaled)


async def test_the_default_scale_down_window_holds_until_300_seconds_pass(cluster: Cluster) -> None:
    await _set_metric(cluster, "calm_queue", "40")
    await cluster.client.create(DEPLOYMENTS, _deployment("calm", 4), NS)
    await cluster.client.create(HPAS, _hpa("calm", "calm", [_external("calm_queue", "10")]), NS)
    await eventually(lambda: _hpa_where(cluster, "calm", "ScalingActive", "ValidMetricFound"))
    await _set_metric(cluster, "calm_queue", "10")
    hpa = await eventually(lambda: _hpa_where(cluster, "calm", "AbleToScale", "ScaleDownStabilized"))
    assert _condition(hpa, "AbleToScale")["message"] == (
        "recent recommendations were higher than current one, applying the highest recent recommendation")
    assert await _replicas(cluster, "calm") == 4
    CLOCK.skipped += 301
    await eventually(lambda: _replicas_are(cluster, "calm", 1))
    assert await eventually(lambda: _event_messages(cluster, "calm", "SuccessfulRescale")) == [
        "New size: 1; reason: All metrics below target"]
