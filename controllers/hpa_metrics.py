"""One HPA metric → a replica proposal and its status, read through the metrics APIs as
kube-controller-manager's metrics clients read them.

Resource and ContainerResource: `metrics.k8s.io/v1beta1` PodMetrics of the target's pods; Pods:
`custom.metrics.k8s.io/v1beta2 .../pods/*/<metric>`; Object: `.../<resource.group>/<name>/<metric>`;
External: `external.metrics.k8s.io/v1beta1 .../<metric>`. `proposal(...)` answers a `Proposal`
(replicas, the metric's name for messages, the `currentMetrics` entry) or raises `MetricError` with
upstream's condition reason and message. Used by `horizontal_pod_autoscaler.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from client import errors
from client.rest import RestClient
from controllers import hpa_replicas as calc, quantities, timestamps

CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"
RESOURCE = "/apis/metrics.k8s.io/v1beta1"
PLURALS = {"Deployment": "deployments.apps", "ReplicaSet": "replicasets.apps", "StatefulSet": "statefulsets.apps",
           "DaemonSet": "daemonsets.apps", "Pod": "pods", "Service": "services", "Job": "jobs.batch",
           "Ingress": "ingresses.networking.k8s.io", "ConfigMap": "configmaps",
           "ReplicationController": "replicationcontrollers"}


class MetricError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Proposal:
    replicas: int
    name: str
    status: dict[str, Any]
    timestamp: float = 0.0


def go_selector(selector: dict[str, Any] | None) -> str:
    """`%+v` of a *metav1.LabelSelector, as upstream's messages print it."""
    if selector is None:
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    exprs = "".join(f"LabelSelectorRequirement{{Key:{e.get('key')},Operator:{e.get('operator')},"
                    f"Values:[{' '.join(e.get('values') or [])}],}}," for e in selector.get("matchExpressions") or [])
    return f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"


def selector_text(selector: dict[str, Any] | None) -> str:
    """A LabelSelector as the labelSelector query parameter writes it."""
    if not selector:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for e in selector.get("matchExpressions") or []:
        op, key, values = e.get("operator"), e.get("key"), ",".join(sorted(e.get("values") or []))
        parts.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key,
                      "DoesNotExist": f"!{key}"}.get(op, key))
    return ",".join(parts)


def _message(exc: BaseException) -> str:
    return exc.message if isinstance(exc, errors.APIError) and getattr(exc, "message", None) else str(exc)


class Reader:
    def __init__(self, client: RestClient) -> None:
        self.client = client

    async def _get(self, path: str, query: list[tuple[str, str]], api: str) -> dict[str, Any]:
        try:
            found = await self.client.request("GET", path, query=query)
        except errors.APIError as exc:
            raise calc.CalculationError(f"unable to fetch metrics from {api} API: {_message(exc)}") from None
        return found or {}

    async def pod_values(self, namespace: str, selector: str, resource: str, container: str
                         ) -> dict[str, calc.PodValue]:
        found = await self._get(f"{RESOURCE}/namespaces/{namespace}/pods", [("labelSelector", selector)], "resource metrics")
        items = found.get("items") or []
        if not items:
            raise calc.CalculationError("no metrics returned from resource metrics API")
        values: dict[str, calc.PodValue] = {}
        for item in items:
            total, seen = 0, False
            for c in item.get("containers") or []:
                if container and c.get("name") != container:
                    continue
                usage = (c.get("usage") or {}).get(resource)
                if usage is None:
                    continue
                total, seen = total + quantities.milli(usage), True
            if seen:
                window = item.get("window") or "0s"
                values[item["metadata"]["name"]] = calc.PodValue(
                    total, timestamps.parse(item.get("timestamp")) or 0.0, _seconds(window))
        return values

    async def pods_metric(self, namespace: str, metric: str, selector: str, metric_selector: str
                          ) -> dict[str, calc.PodValue]:
        query = [("labelSelector", selector)] + ([("metricLabelSelector", metric_selector)] if metric_selector else [])
        found = await self._get(f"{CUSTOM}/namespaces/{namespace}/pods/*/{quote(metric)}", query, "custom metrics")
        items = found.get("items") or []
        if not items:
            raise calc.CalculationError("no metrics returned from custom metrics API")
        return {i["describedObject"]["name"]: calc.PodValue(quantities.milli(i["value"]),
                                                            timestamps.parse(i.get("timestamp")) or 0.0)
                for i in items}

    async def object_metric(self, namespace: str, metric: str, described: dict[str, Any], metric_selector: str) -> int:
        kind = described.get("kind") or ""
        group = (described.get("apiVersion") or "").rpartition("/")[0]
        plural = PLURALS.get(kind) or (f"{kind.lower()}s.{group}" if group else f"{kind.lower()}s")
        scope = f"/namespaces/{namespace}" if kind != "Namespace" else ""
        path = (f"{CUSTOM}/namespaces/{described.get('name')}/metrics/{quote(metric)}" if kind == "Namespace" else
                f"{CUSTOM}{scope}/{plural}/{described.get('name')}/{quote(metric)}")
        query = [("metricLabelSelector", metric_selector)] if metric_selector else []
        items = (await self._get(path, query, "custom metrics")).get("items") or []
        if len(items) != 1:
            raise calc.CalculationError(f"expected exactly one metric value from custom metrics API, got {len(items)}")
        return quantities.milli(items[0]["value"])

    async def external_metric(self, namespace: str, metric: str, selector: dict[str, Any] | None) -> int:
        query = [("labelSelector", selector_text(selector))]
        items = (await self._get(f"{EXTERNAL}/namespaces/{namespace}/{quote(metric)}", query,
                                 "external metrics")).get("items") or []
        if not items:
            raise calc.CalculationError("no metrics returned from external metrics API")
        return sum(quantities.milli(i["value"]) for i in items)


def _seconds(go_duration: str) -> float:
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    i = 0
    while i < len(go_duration):
        ch = go_duration[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = "ms" if go_duration.startswith("ms", i) else ch
        total += float(number or 0) * units.get(unit, 0.0)
        number, i = "", i + len(unit)
    return total


async def proposal(reader: Reader, spec: dict[str, Any], namespace: str, current: int, status_replicas: int,
                   selector: str, pods: list[dict[str, Any]], now: float, tolerance: calc.Tolerance = calc.TOLERANCE
                   ) -> Proposal:
    kind = spec.get("type")
    if kind == "External":
        return await _external(reader, spec.get("external") or {}, namespace, current, status_replicas, pods, tolerance)
    if kind == "Object":
        return await _object(reader, spec.get("object") or {}, namespace, current, status_replicas, pods, tolerance)
    if kind == "Pods":
        return await _pods(reader, spec.get("pods") or {}, namespace, current, selector, pods, now, tolerance)
    if kind in ("Resource", "ContainerResource"):
        return await _resource(reader, spec, namespace, current, selector, pods, now, tolerance)
    raise MetricError("InvalidMetricSourceType", f"the HPA was unable to compute the replica count: "
                                                 f"unknown metric source type \"{kind}\"")


def _failed(reason: str, message: str) -> MetricError:
    return MetricError(reason, message)


async def _external(reader: Reader, source: dict[str, Any], namespace: str, current: int, status_replicas: int,
                    pods: list[dict[str, Any]], tolerance: calc.Tolerance) -> Proposal:
    metric = source.get("metric") or {}
    name, selector = metric.get("name", ""), metric.get("selector")
    target = source.get("target") or {}
    try:
        usage = await reader.external_metric(namespace, name, selector)
        if target.get("averageValue") is not None:
            replicas, per_pod = calc.per_pod_replicas(status_replicas, usage, quantities.milli(target["averageValue"]),
                                                      tolerance)
            current_value = {"averageValue": quantities.from_milli(per_pod)}
        elif target.get("value") is not None:
            ratio = usage / quantities.milli(target["value"])
            replicas = calc.usage_ratio_replicas(current, ratio, pods, tolerance)
            current_value = {"value": quantities.from_milli(usage)}
        else:
            raise calc.CalculationError("invalid external metric source: neither a value target nor an average value "
                                        "target was set")
    except calc.CalculationError as exc:
        raise _failed("FailedGetExternalMetric", f"unable to get external metric {namespace}/{name}/"
                                                 f"{go_selector(selector)}: {exc}") from None
    return Proposal(replicas, f"external metric {name}({go_selector(selector)})",
                    {"type": "External", "external": {"metric": metric, "current": current_value}})


async def _object(reader: Reader, source: dict[str, Any], namespace: str, current: int, status_replicas: int,
                  pods: list[dict[str, Any]], tolerance: calc.Tolerance) -> Proposal:
    metric = source.get("metric") or {}
    described = source.get("describedObject") or {}
    name = metric.get("name", "")
    target = source.get("target") or {}
    try:
        usage = await reader.object_metric(namespace, name, described, selector_text(metric.get("selector")))
        if target.get("type") == "AverageValue" or (target.get("value") is None and target.get("averageValue") is not None):
            replicas, per_pod = calc.per_pod_replicas(status_replicas, usage, quantities.milli(target["averageValue"]),
                                                      tolerance)
            current_value = {"averageValue": quantities.from_milli(per_pod)}
        elif target.get("value") is not None:
            replicas = calc.usage_ratio_replicas(current, usage / quantities.milli(target["value"]), pods, tolerance)
            current_value = {"value": quantities.from_milli(usage)}
        else:
            raise calc.CalculationError("invalid object metric source: neither a value target nor an average value "
                                        "target was set")
    except calc.CalculationError as exc:
        raise _failed("FailedGetObjectMetric", f"unable to get metric {name}: {described.get('kind')} on "
                                               f"{namespace} {described.get('name')}/{exc}") from None
    return Proposal(replicas, f"{described.get('kind')} metric {name}",
                    {"type": "Object", "object": {"metric": metric, "describedObject": described,
                                                  "current": current_value}})


async def _pods(reader: Reader, source: dict[str, Any], namespace: str, current: int, selector: str,
                pods: list[dict[str, Any]], now: float, tolerance: calc.Tolerance) -> Proposal:
    metric = source.get("metric") or {}
    name = metric.get("name", "")
    target = source.get("target") or {}
    try:
        if target.get("averageValue") is None:
            raise calc.CalculationError("invalid pods metric source: an average value target must be set")
        values = await reader.pods_metric(namespace, name, selector, selector_text(metric.get("selector")))
        replicas, usage = calc.plain_metric_replicas(current, quantities.milli(target["averageValue"]), pods, values,
                                                     "", now, tolerance)
    except calc.CalculationError as exc:
        raise _failed("FailedGetPodsMetric", f"unable to get metric {name}: {exc}") from None
    return Proposal(replicas, f"pods metric {name}",
                    {"type": "Pods", "pods": {"metric": metric, "current": {"averageValue": quantities.from_milli(usage)}}})


async def _resource(reader: Reader, spec: dict[str, Any], namespace: str, current: int, selector: str,
                    pods: list[dict[str, Any]], now: float, tolerance: calc.Tolerance) -> Proposal:
    container_metric = spec.get("type") == "ContainerResource"
    source = spec.get("containerResource" if container_metric else "resource") or {}
    resource, container = source.get("name", ""), source.get("container", "") if container_metric else ""
    target = source.get("target") or {}
    reason = "FailedGetContainerResourceMetric" if container_metric else "FailedGetResourceMetric"
    label = f"{resource} container resource" if container_metric else f"{resource} resource"
    try:
        values = await reader.pod_values(namespace, selector, resource, container)
        if target.get("averageValue") is not None:
            replicas, usage = calc.plain_metric_replicas(current, quantities.milli(target["averageValue"]), pods,
                                                         values, resource, now, tolerance)
            current_value: dict[str, Any] = {"averageValue": quantities.from_milli(usage)}
            name = label
        elif target.get("averageUtilization") is not None:
            replicas, utilization, raw = calc.resource_utilization_replicas(
                current, int(target["averageUtilization"]), pods, values, resource, container, now, tolerance)
            current_value = {"averageUtilization": utilization, "averageValue": quantities.from_milli(raw)}
            name = f"{label} utilization (percentage of request)"
        else:
            raise calc.CalculationError("invalid resource metric source: neither an average utilization target nor "
                                        "an average value target was set")
    except calc.CalculationError as exc:
        raise _failed(reason, f"failed to get {resource} utilization: {exc}") from None
    key = "containerResource" if container_metric else "resource"
    entry: dict[str, Any] = {"name": resource, "current": current_value}
    if container_metric:
        entry["container"] = container
    return Proposal(replicas, name, {"type": spec.get("type"), key: entry})
