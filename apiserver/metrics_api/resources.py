"""The registry rows of metrics.k8s.io/v1beta1, as the aggregator shows metrics-server's group.

`nodes` (NodeMetrics, cluster-scoped) and `pods` (PodMetrics, namespaced): get and list only, an
empty singular name, nothing stored (so no storage version hash). They carry the types' schemas,
as a CRD row does, for `/openapi/v2|v3`. `runner.start` adds them to the served registry
(`register`), as the aggregator adds an APIService's group to discovery.
"""

from __future__ import annotations

from typing import Any

from apiserver import registry
from apiserver.crds.definition import OBJECT_META_REF

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"

_QUANTITY = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
_USAGE = {"type": "object", "description": "The memory and cpu usage.", "additionalProperties": _QUANTITY}


def _schema(description: str, fields: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "description": description, "required": required, "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": OBJECT_META_REF,
        "timestamp": {"type": "string", "format": "date-time",
                      "description": "The following fields define time interval from which metrics were collected "
                                     "from the interval [Timestamp-Window, Timestamp]."},
        "window": {"type": "string"}, **fields}}


NODE_SCHEMA = _schema("NodeMetrics sets resource usage metrics of a node.", {"usage": _USAGE},
                      ["timestamp", "window", "usage"])
POD_SCHEMA = _schema("PodMetrics sets resource usage metrics of a pod.", {"containers": {
    "type": "array", "description": "Metrics for all containers are collected within the same time window.",
    "items": {"type": "object", "required": ["name", "usage"],
              "properties": {"name": {"type": "string", "description": "Container name corresponding to the one "
                                                                       "from pod.spec.containers."},
                             "usage": _USAGE}},
    "x-kubernetes-list-type": "atomic"}}, ["timestamp", "window", "containers"])


def rows() -> list[registry.ResourceInfo]:
    def row(resource: str, kind: str, namespaced: bool, schema: dict[str, Any]) -> registry.ResourceInfo:
        return registry.ResourceInfo(group=GROUP, version=VERSION, resource=resource, kind=kind, singular="",
                                     namespaced=namespaced, verbs=("get", "list"), schema=schema, stored=False,
                                     builtin=False)
    return [row("nodes", "NodeMetrics", False, NODE_SCHEMA), row("pods", "PodMetrics", True, POD_SCHEMA)]


def register(reg: registry.Registry) -> None:
    # metrics-server's APIService has groupPriorityMinimum 100: after every CRD group (1000).
    reg.low_priority_groups.add(GROUP)
    for info in rows():
        reg.add(info)
