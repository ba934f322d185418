"""The scale subresource of a custom resource: an autoscaling/v1 Scale read from the CRD's paths.

`specReplicasPath` (absent → 0), `statusReplicasPath` (absent → 0) and `labelSelectorPath` (a
string, optional) come from the version's `subresources.scale`; writing a Scale sets the value at
`specReplicasPath`. `apiserver/subresources/scale.py` asks `to_scale`/`set_replicas` here for
non-built-in kinds and keeps the request flow (GET, PUT, PATCH) the same for every kind.
"""

from __future__ import annotations

from typing import Any

from apiserver.crds import served
from apiserver.crds.strategy import read_path


def _paths(group: str, resource: str, version: str) -> dict[str, Any]:
    definition = served.lookup(group, resource)
    found = definition.version(version) if definition is not None else None
    return dict(found.scale or {}) if found is not None else {}


def to_scale(group: str, resource: str, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    paths = _paths(group, resource, version)
    meta = obj.get("metadata") or {}
    scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}
    spec_replicas = _integer(obj, paths.get("specReplicasPath"))
    status: dict[str, Any] = {"replicas": _integer(obj, paths.get("statusReplicasPath"))}
    if paths.get("labelSelectorPath"):
        selector, found = read_path(obj, paths["labelSelectorPath"])
        if found and isinstance(selector, str) and selector:
            status["selector"] = selector
    spec = {"replicas": spec_replicas} if spec_replicas else {}  # ScaleSpec.replicas is omitempty
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta, "spec": spec, "status": status}


def _integer(obj: dict[str, Any], path: str | None) -> int:
    if not path:
        return 0
    value, found = read_path(obj, path)
    return int(value) if found and isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def set_replicas(group: str, resource: str, version: str, obj: dict[str, Any], replicas: int) -> None:
    path = _paths(group, resource, version).get("specReplicasPath") or ".spec.replicas"
    parts = path.lstrip(".").split(".")
    node = obj
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = replicas
