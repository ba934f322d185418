"""GETs of custom.metrics.k8s.io/v1beta2 and external.metrics.k8s.io/v1beta1, as custom-metrics-apiserver
answers them for an adapter whose values are `source.py`'s.

Custom: `.../namespaces/<ns>/<resource.group>/<name>/<metric>` (one object), `.../<name>=*` with
`labelSelector` (every matching object that has the metric), `.../namespaces/<ns>/metrics/<metric>`
(the Namespace itself) and the cluster-scoped forms; `metricLabelSelector` must match the series'
labels (annotation values have none). External: `.../namespaces/<ns>/<metric>` with `labelSelector`
over the series' labels. Unknown metrics are the adapters' 404s ("the server could not find the
metric ..."); a known external metric whose series do not match is an empty list, as the test adapter.
`/apis/<group>` and `/apis/<group>/<version>` are the adapter's discovery: the metrics with values now.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from admission import quantities
from apiserver import errors, labels, responses
from apiserver.context import Server
from apiserver.custom_metrics_api import source
from apiserver.requestinfo import RequestInfo

CUSTOM_GROUP, CUSTOM_VERSION = "custom.metrics.k8s.io", "v1beta2"
EXTERNAL_GROUP, EXTERNAL_VERSION = "external.metrics.k8s.io", "v1beta1"
GROUPS = {CUSTOM_GROUP: CUSTOM_VERSION, EXTERNAL_GROUP: EXTERNAL_VERSION}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _not_found(message: str) -> errors.APIError:
    return errors.APIError(404, "NotFound", message)


def _selector(text: str | None) -> labels.Selector:
    try:
        return labels.parse(text or "")
    except labels.SelectorError as exc:
        raise errors.bad_request(str(exc)) from None


def _quantity(q: quantities.Quantity) -> str:
    return quantities.format_quantity(q.value, q.format)


async def handle(server: Server, request: web.Request, info: RequestInfo) -> web.StreamResponse:
    if info.verb not in ("get", "list"):
        raise errors.method_not_supported(info.verb, info.resource, info.group)
    if GROUPS.get(info.group) != info.version:
        raise errors.route_not_found()
    if info.group == EXTERNAL_GROUP:
        return _external(server, request, info)
    return _custom(server, request, info)


# -- custom metrics ------------------------------------------------------------------------

def _target(server: Server, info: RequestInfo) -> tuple[Any, str | None, str, str]:
    """(registry row, namespace of the objects, object name or "*", metric) of a custom-metrics path."""
    if info.resource == "metrics" and info.namespace and info.name and not info.subresource:
        row = server.registry.get("", "v1", "namespaces")
        return row, None, info.namespace, info.name
    if not info.name or not info.subresource or info.rest:
        raise errors.route_not_found()
    resource, _, group = info.resource.partition(".")
    versions = server.registry.served_versions(group)
    row = next((r for v in versions if (r := server.registry.get(group, v, resource)) is not None and r.stored), None)
    if row is None or row.namespaced != bool(info.namespace):
        raise _not_found(f"the server could not find the metric {info.subresource} for {info.resource}")
    return row, info.namespace or None, info.name, info.subresource


def _custom(server: Server, request: web.Request, info: RequestInfo) -> web.StreamResponse:
    row, namespace, name, metric = _target(server, info)
    group_resource = f"{row.resource}.{row.group}" if row.group else row.resource
    metric_selector = _selector(request.query.get("metricLabelSelector"))
    if name == "*":
        selector = _selector(request.query.get("labelSelector"))
        objects = [o for o in (responses.decode(r.value) for r in server.store.list(row.list_prefix(namespace)).records)
                   if selector.matches((o.get("metadata") or {}).get("labels"))]
    else:
        record = server.store.get(row.key(namespace, name))
        objects = [] if record is None else [responses.decode(record.value)]
    items = []
    for obj in sorted(objects, key=lambda o: o["metadata"]["name"]):
        value = source.annotated(obj, metric)
        if value is None or not metric_selector.matches({}):
            continue
        meta = obj["metadata"]
        described = {"kind": row.kind, "namespace": meta.get("namespace", ""), "name": meta["name"],
                     "apiVersion": f"{row.group}/{row.version}" if row.group else row.version}
        selector = {"matchLabels": {}} if metric_selector.empty else _as_label_selector(metric_selector)
        items.append({"describedObject": described, "metric": {"name": metric, "selector": selector},
                      "timestamp": _now(), "value": _quantity(value)})
    if not items:
        if name == "*":
            raise _not_found(f"the server could not find the metric {metric} for {group_resource}")
        if not metric_selector.empty:
            raise _not_found(f"the server could not find the metric {metric} for {group_resource} {name} "
                             f"with selector {metric_selector}")
        raise _not_found(f"the server could not find the metric {metric} for {group_resource} {name}")
    return responses.json_response({"kind": "MetricValueList", "apiVersion": f"{CUSTOM_GROUP}/{CUSTOM_VERSION}",
                                    "metadata": {}, "items": items})


def _as_label_selector(selector: labels.Selector) -> dict[str, Any]:
    # The metric selector the request named, echoed back (only equality terms can match no labels... or any).
    return {"matchLabels": {r.key: r.values[0] for r in selector.requirements
                            if r.operator in (labels.EQUALS, labels.DOUBLE_EQUALS) and len(r.values) == 1}}


# -- external metrics ----------------------------------------------------------------------

def _external(server: Server, request: web.Request, info: RequestInfo) -> web.StreamResponse:
    if not info.namespace or not info.resource or info.name:
        raise errors.route_not_found()
    metric = info.resource
    selector = _selector(request.query.get("labelSelector"))
    row = server.registry.get("", "v1", "configmaps")
    assert row is not None
    record = server.store.get(row.key(info.namespace, source.CONFIGMAP))
    series = source.external(None if record is None else responses.decode(record.value), metric)
    if not series:
        raise _not_found(f"the server could not find the metric {metric} for namespaces")
    now = _now()
    items = [{"metricName": metric, "metricLabels": s.labels, "timestamp": now, "value": _quantity(s.value)}
             for s in series if selector.matches(s.labels)]
    return responses.json_response({"kind": "ExternalMetricValueList",
                                    "apiVersion": f"{EXTERNAL_GROUP}/{EXTERNAL_VERSION}", "metadata": {},
                                    "items": items})


# -- discovery -----------------------------------------------------------------------------

# Where custom metrics are looked for when listing them (a GET reaches any stored kind).
_LISTED = (("", "v1", "pods"), ("", "v1", "services"), ("apps", "v1", "deployments"), ("apps", "v1", "replicasets"),
           ("apps", "v1", "statefulsets"), ("", "v1", "namespaces"))


def api_group(group: str) -> dict[str, Any]:
    gv = {"groupVersion": f"{group}/{GROUPS[group]}", "version": GROUPS[group]}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": [gv], "preferredVersion": gv}


def api_resource_list(server: Server, group: str) -> dict[str, Any]:
    """The metrics that have values now, as an adapter lists them: `pods/qps`, `deployments.apps/hits`
    (custom), or one resource per external metric name."""
    found: dict[str, bool] = {}
    if group == EXTERNAL_GROUP:
        row = server.registry.get("", "v1", "configmaps")
        assert row is not None
        for record in server.store.list(row.key_prefix).records:
            obj = responses.decode(record.value)
            if obj["metadata"]["name"] == source.CONFIGMAP:
                found.update({name: True for name in (obj.get("data") or {})})
        kind = "ExternalMetricValueList"
    else:
        for key in _LISTED:
            row = server.registry.get(*key)
            if row is None:
                continue
            plural = f"{row.resource}.{row.group}" if row.group else row.resource
            for record in server.store.list(row.key_prefix).records:
                for name in source.annotated_names(responses.decode(record.value)):
                    found[f"{plural}/{name}"] = row.namespaced
        kind = "MetricValueList"
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{GROUPS[group]}",
            "resources": [{"name": name, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": ["get"]}
                          for name, namespaced in sorted(found.items())]}
