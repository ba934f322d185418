"""GET and LIST of NodeMetrics and PodMetrics from the stored points, as metrics-server answers them.

The Nodes and Pods in the store that match the selectors (and namespace) each get an item when
their points give a usage, sorted by (namespace,) name; metadata is their name, namespace and
labels with `creationTimestamp` now. A missing object is the lister's 404 (`node "x" not found`),
one without metrics metrics-server's (`podmetrics.metrics.k8s.io "ns/x" not found`). Tables have
metrics-server's columns (Name, cpu, memory, Window). Called by `app.py`.
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

from aiohttp import web

from admission import quantities
from apiserver import errors, listing, responses, tables
from apiserver.context import Endpoint
from apiserver.metrics_api import collector, points
from apiserver.metrics_api.resources import GROUP, VERSION

API_VERSION = f"{GROUP}/{VERSION}"
_COLUMNS = [{"name": "Name", "type": "string", "format": "name", "description": "Name of the resource",
             "priority": 0},
            {"name": "cpu", "type": "string", "format": "quantity", "description": "", "priority": 0},
            {"name": "memory", "type": "string", "format": "quantity", "description": "", "priority": 0},
            {"name": "Window", "type": "string", "format": "duration", "description": "", "priority": 0}]


def go_duration(seconds: float) -> str:
    """Go's time.Duration.String() of a window: "15.002s", "1m0.5s", "500ms"."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                whole, frac = divmod(ns, size)
                digits = str(frac).rjust(len(str(size)) - 1, "0").rstrip("0") if size > 1 else ""
                return f"{whole}{'.' + digits if digits else ''}{unit}"
    secs, frac = divmod(ns, 1_000_000_000)
    hours, rest = divmod(secs, 3600)
    minutes, secs = divmod(rest, 60)
    digits = str(frac).rjust(9, "0").rstrip("0")
    out = f"{hours}h" if hours else ""
    out += f"{minutes}m" if hours or minutes else ""
    return out + f"{secs}{'.' + digits if digits else ''}s"


def _rfc3339(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _usage(u: points.Usage) -> dict[str, str]:
    return {"cpu": quantities.format_quantity(Decimal(u.cpu).scaleb(-9), quantities.DECIMAL_SI),
            "memory": quantities.format_quantity(Decimal(u.memory), quantities.BINARY_SI)}


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    source = obj.get("metadata") or {}
    meta: dict[str, Any] = {"name": source.get("name", "")}
    if source.get("namespace"):
        meta["namespace"] = source["namespace"]
    meta["creationTimestamp"] = _rfc3339(time.time())
    if source.get("labels"):
        meta["labels"] = source["labels"]
    return meta


def _node_item(found: points.Points, node: dict[str, Any]) -> dict[str, Any] | None:
    measured = found.node(node["metadata"]["name"])
    if measured is None:
        return None
    return {"metadata": _meta(node), "timestamp": _rfc3339(measured.timestamp),
            "window": go_duration(measured.window), "usage": _usage(measured)}


def _pod_item(found: points.Points, pod: dict[str, Any]) -> dict[str, Any] | None:
    meta = pod["metadata"]
    measured = found.pod((meta.get("namespace", ""), meta["name"]))
    if measured is None:
        return None
    stamp, window, containers = measured
    return {"metadata": _meta(pod), "timestamp": _rfc3339(stamp), "window": go_duration(window),
            "containers": [{"name": name, "usage": _usage(u)} for name, u in containers]}


def _objects(ep: Endpoint, resource: str, prefix_namespace: str | None) -> list[dict[str, Any]]:
    info = ep.server.registry.get("", "v1", resource)
    assert info is not None
    prefix = info.list_prefix(prefix_namespace)
    return [responses.decode(r.value) for r in ep.server.store.list(prefix).records]


def _item(ep: Endpoint, obj: dict[str, Any]) -> dict[str, Any] | None:
    found = collector.of(ep.server).points
    return _node_item(found, obj) if ep.resource.resource == "nodes" else _pod_item(found, obj)


async def get(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    name = ep.request_info.name
    source = "nodes" if ep.resource.resource == "nodes" else "pods"
    info = ep.server.registry.get("", "v1", source)
    assert info is not None
    record = ep.server.store.get(info.key(ep.namespace or None, name))
    if record is None:
        # The listers' NotFound: client-go's node lister names the resource "node".
        raise errors.not_found("node" if source == "nodes" else "pods", "", name)
    await collector.of(ep.server).fresh(ep.server)
    item = _item(ep, responses.decode(record.value))
    if item is None:
        shown = name if source == "nodes" else f"{ep.namespace}/{name}"
        raise errors.not_found("nodemetrics" if source == "nodes" else "podmetrics", GROUP, shown)
    return _respond(ep, request, [item], single=True)


async def list_(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    sel = listing.selection(ep, {k: v for k, v in request.query.items() if k in ("labelSelector", "fieldSelector")})
    nodes = ep.resource.resource == "nodes"
    objects = [o for o in _objects(ep, "nodes" if nodes else "pods", None if nodes else ep.namespace or None)
               if sel.matches(o)]
    await collector.of(ep.server).fresh(ep.server)
    items = [item for item in (_item(ep, o) for o in objects) if item is not None]
    items.sort(key=lambda i: (i["metadata"].get("namespace", ""), i["metadata"]["name"]))
    return _respond(ep, request, items)


def _respond(ep: Endpoint, request: web.Request, items: list[dict[str, Any]], *, single: bool = False
             ) -> web.StreamResponse:
    kind = ep.resource.kind
    wanted = responses.wants(request)
    if wanted.form == "Table":
        return responses.json_response(_table(items, wanted.include_object))
    if wanted.form != "object":
        partial = [responses.partial_metadata(i) for i in items]
        return responses.json_response(partial[0] if single else {
            "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": {}, "items": partial})
    if single:
        return responses.json_response({"kind": kind, "apiVersion": API_VERSION, **items[0]})
    return responses.json_response({"kind": kind + "List", "apiVersion": API_VERSION, "metadata": {}, "items": items})


def _table(items: list[dict[str, Any]], include: str) -> dict[str, Any]:
    rows = []
    for item in items:
        usage: dict[str, Decimal] = {"cpu": Decimal(0), "memory": Decimal(0)}
        for entry in item.get("containers") or [{"usage": item["usage"]}]:
            for name in usage:
                usage[name] += quantities.parse(entry["usage"][name]).value
        cells = [item["metadata"]["name"], quantities.format_quantity(usage["cpu"], quantities.DECIMAL_SI),
                 quantities.format_quantity(usage["memory"], quantities.BINARY_SI), item["window"]]
        row: dict[str, Any] = {"cells": cells}
        if include == tables.INCLUDE_OBJECT:
            row["object"] = item
        elif include == tables.INCLUDE_NONE:
            row["object"] = None
        else:
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": item["metadata"]}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {}, "columnDefinitions": _COLUMNS,
            "rows": rows}
