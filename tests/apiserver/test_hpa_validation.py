"""autoscaling/v2 HorizontalPodAutoscalers through the API server: upstream's defaults (minReplicas 1,
80% cpu, behavior rules) and the checks that gate minReplicas 0 on HPAScaleToZero, with the exact
422 causes; a refused HPA leaves nothing stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from apiserver import runner

HPAS = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
pytestmark = pytest.mark.asyncio
EXTERNAL = {"type": "External", "external": {"metric": {"name": "queue"},
                                             "target": {"type": "AverageValue", "averageValue": "10"}}}
CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}


def _hpa(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 5, **spec}}


def _causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


async def test_defaults_fill_min_replicas_metrics_and_behavior(api: Any) -> None:
    status, body, _ = await api.request("POST", HPAS, json=_hpa("plain", behavior={"scaleDown": {
        "stabilizationWindowSeconds": 60}}))
    assert status == 201, body
    spec = body["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}]
    assert spec["behavior"]["scaleUp"] == {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}
    assert spec["behavior"]["scaleDown"] == {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
        {"type": "Percent", "value": 100, "periodSeconds": 15}]}


async def test_min_replicas_zero_needs_an_object_or_external_metric(api: Any) -> None:
    status, body, _ = await api.request("POST", HPAS, json=_hpa("zero-ok", minReplicas=0, metrics=[EXTERNAL]))
    assert status == 201, body
    status, body, _ = await api.request("POST", HPAS, json=_hpa("zero-cpu", minReplicas=0, metrics=[CPU]))
    assert status == 422, body
    assert _causes(body) == [("spec.metrics", "Forbidden: must specify at least one Object or External metric to "
                                              "support scaling to zero replicas")]
    status, _, _ = await api.request("GET", f"{HPAS}/zero-cpu")
    assert status == 404


async def test_bad_replica_bounds_and_target_are_refused(api: Any) -> None:
    bad = _hpa("bad", minReplicas=3, maxReplicas=2, metrics=[CPU])
    bad["spec"]["scaleTargetRef"] = {"apiVersion": "apps/v1", "kind": "Deployment"}
    status, body, _ = await api.request("POST", HPAS, json=bad)
    assert status == 422, body
    assert _causes(body) == [("spec.maxReplicas", "Invalid value: 2: must be greater than or equal to `minReplicas`"),
                             ("spec.scaleTargetRef.name", "Required value")]


async def test_without_the_gate_min_replicas_zero_is_refused(tmp_path: Path) -> None:
    running = await runner.start(str(tmp_path / "data"), port=0, feature_gates="HPAScaleToZero=false")
    try:
        async with aiohttp.ClientSession() as session:
            async with session.post(running.url + HPAS, json=_hpa("zero", minReplicas=0, metrics=[EXTERNAL])) as resp:
                body = await resp.json()
                assert resp.status == 422, body
        assert _causes(body) == [("spec.minReplicas", "Invalid value: 0: must be greater than or equal to 1")]
    finally:
        await running.stop()
