"""HorizontalPodAutoscalers under `haru up`, driven by kubectl v1.36.3: the HPA controller reads the
metrics APIs the API server serves and scales Deployments whose pods the scheduler binds and the
hollow nodes run.

An HPA on an External metric (`haru-metrics` ConfigMap) scales a Deployment from 1 to 3 when the
test raises the value; with minReplicas 0 it scales to 0 and back up; `kubectl autoscale ...
--cpu-percent=50` makes the autoscaling/v2 HPA kubectl makes, and `kubectl get hpa` shows
upstream's columns and a TARGETS cell `cpu: <current>/50%`; the external metrics API answers
`get --raw`; the Python client 36.0.3 reads the HPA's status; minReplicas 0 on a cpu metric alone is
refused with upstream's text.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client, config

from tests.conftest import Cluster

pytestmark = pytest.mark.slow
SYNC = 15  # the controller's sync period under haru up, as kube-controller-manager's default


def _deployment(name: str, replicas: int) -> str:
    return json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                       "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": {
                           "metadata": {"labels": {"app": name}},
                           "spec": {"containers": [{"name": "c", "image": "nginx",
                                                    "resources": {"requests": {"cpu": "100m"}}}]}}}})


def _hpa(name: str, metric: str, low: int) -> str:
    return json.dumps({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
                       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                                "minReplicas": low, "maxReplicas": 5,
                                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
                                "metrics": [{"type": "External", "external": {
                                    "metric": {"name": metric},
                                    "target": {"type": "AverageValue", "averageValue": "10"}}}]}})


def _set(haru: Cluster, metric: str, value: str) -> None:
    patch = json.dumps({"data": {metric: value}})
    haru.kubectl("patch", "configmap", "haru-metrics", "--type=merge", "-p", patch)


def _until(check: Callable[[], Any], timeout: float = 4 * SYNC) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached after {timeout}s (last: {value!r})")
        time.sleep(1)


def _spec_replicas(haru: Cluster, name: str) -> int:
    return int(haru.kubectl("get", "deployment", name, "-o", "jsonpath={.spec.replicas}").stdout)


def _ready_replicas(haru: Cluster, name: str) -> int:
    return int(haru.kubectl("get", "deployment", name, "-o", "jsonpath={.status.readyReplicas}").stdout or 0)


def test_an_external_metric_scales_a_deployment_from_one_to_three_to_zero_and_back(haru: Cluster) -> None:
    haru.kubectl("create", "configmap", "haru-metrics", "--from-literal=queue=10")
    haru.kubectl("apply", "-f", "-", input=_deployment("worker", 1))
    haru.kubectl("apply", "-f", "-", input=_hpa("worker", "queue", 0))
    raw = json.loads(haru.kubectl("get", "--raw", "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue").stdout)
    assert raw["kind"] == "ExternalMetricValueList" and raw["items"][0]["value"] == "10"
    _until(lambda: "ValidMetricFound" in haru.kubectl("get", "hpa", "worker", "-o",
                                                      "jsonpath={.status.conditions[*].reason}").stdout)
    _until(lambda: _ready_replicas(haru, "worker") == 1)

    _set(haru, "queue", "30")
    _until(lambda: _spec_replicas(haru, "worker") == 3)
    _until(lambda: _ready_replicas(haru, "worker") == 3)
    events = haru.kubectl("get", "events", "--field-selector", "involvedObject.name=worker,reason=SuccessfulRescale",
                          "-o", "jsonpath={.items[*].message}").stdout
    assert "New size: 3; reason: external metric queue(nil) above target" in events
    typed = client.AutoscalingV2Api(config.new_client_from_config(haru.kubeconfig)).read_namespaced_horizontal_pod_autoscaler(
        "worker", "default")
    assert typed.spec.min_replicas == 0 and typed.status.desired_replicas in (1, 3)
    assert {c.type for c in typed.status.conditions} == {"AbleToScale", "ScalingActive", "ScalingLimited"}
    lines = haru.kubectl("get", "hpa", "worker").stdout.splitlines()
    assert lines[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert re.match(r"^worker\s+Deployment/worker\s+\S+/10 \(avg\)\s+0\s+5\s+[13]\s+\S+$", lines[1]), lines

    _set(haru, "queue", "0")
    _until(lambda: _spec_replicas(haru, "worker") == 0)
    _until(lambda: haru.kubectl("get", "pods", "-l", "app=worker", "-o", "name").stdout.strip() == "")
    described = haru.kubectl("describe", "hpa", "worker").stdout
    assert "New size: 0; reason: All metrics below target" in described

    _set(haru, "queue", "20")
    _until(lambda: _spec_replicas(haru, "worker") == 2)
    _until(lambda: _ready_replicas(haru, "worker") == 2)


def test_kubectl_autoscale_makes_a_cpu_hpa_that_get_hpa_prints(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=_deployment("web", 1))
    out = haru.kubectl("autoscale", "deployment", "web", "--min=1", "--max=5", "--cpu-percent=50").stdout
    assert out.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
    hpa = json.loads(haru.kubectl("get", "hpa", "web", "-o", "json").stdout)
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]
    _until(lambda: haru.kubectl("get", "hpa", "web", "-o", "jsonpath={.status.conditions[0].type}").stdout)
    lines = haru.kubectl("get", "hpa", "web").stdout.splitlines()
    assert lines[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert re.match(r"^web\s+Deployment/web\s+cpu: (<unknown>|\d+%)/50%\s+1\s+5\s+\d+\s+\S+$", lines[1]), lines


def test_min_replicas_zero_without_an_object_or_external_metric_is_refused(haru: Cluster) -> None:
    bad = json.loads(_hpa("cpu-zero", "queue", 0))
    bad["spec"]["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 50}}}]
    result = haru.kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'The HorizontalPodAutoscaler "cpu-zero" is invalid: spec.metrics: Forbidden: must specify at least one '
        'Object or External metric to support scaling to zero replicas')
    assert haru.kubectl("get", "hpa", "cpu-zero", check=False).returncode == 1
