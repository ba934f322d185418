"""Which objects a node may reach: the Node authorizer's graph, asked of the store when a node asks.

Upstream's node authorizer keeps a graph fed by informers (plugin/pkg/auth/authorizer/node/graph.go):
a pod bound to a node links it to the pod's service account, secrets, configmaps, PVCs and
ResourceClaims; a bound PVC links on to its PV and the PV to its secrets; a VolumeAttachment and a
ResourceSlice link straight to their node. Here the API server owns the store, so `reaches()`
walks the same edges from the stored objects on each question (a node asks seldom: pods and their
references once per pod start); it answers from the current state, never a lagging cache.
Used by `node.NodeAuthorizer`; what a pod references is `admission/pod_references.py`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from admission.pod_references import claim_names, configmap_names, resource_claim_names, secret_names
from storage import Store

_decode = msgspec.json.decode


def prefix(group: str, resource: str) -> str:
    """The storage key prefix of a resource (ARCHITECTURE.md: /registry/<group>/<resource>/)."""
    return f"/registry/{group or 'core'}/{resource}/"


def get(store: Store, group: str, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
    key = prefix(group, resource) + (f"{namespace}/{name}" if namespace else name)
    record = store.get(key)
    return None if record is None else _decode(record.value)


def pods_on(store: Store, node: str, namespace: str = "") -> list[dict[str, Any]]:
    """The pods bound to `node` (in one namespace, or all); a byte test skips the others undecoded."""
    needle = f'"nodeName":"{node}"'.encode()
    where = prefix("", "pods") + (f"{namespace}/" if namespace else "")
    found = store.list_where(where, lambda _key, _rev, value: needle in bytes(value))
    pods = [_decode(r.value) for r in found.records]
    return [p for p in pods if (p.get("spec") or {}).get("nodeName") == node]


def _pv_secrets(pv: dict[str, Any]) -> set[tuple[str, str]]:
    """(namespace, name) of every secret reference in a PersistentVolume's source."""
    found: set[tuple[str, str]] = set()
    for value in (pv.get("spec") or {}).values():
        if not isinstance(value, dict):
            continue
        for field, ref in value.items():
            if field.endswith(("SecretRef", "secretRef")) and isinstance(ref, dict) and ref.get("name"):
                found.add((ref.get("namespace", ""), ref["name"]))
    return found


def _bound_volumes(store: Store, node: str) -> list[dict[str, Any]]:
    volumes = []
    for pod in pods_on(store, node):
        namespace = pod["metadata"].get("namespace", "")
        for claim in claim_names(pod):
            pvc = get(store, "", "persistentvolumeclaims", namespace, claim)
            volume_name = ((pvc or {}).get("spec") or {}).get("volumeName")
            pv = get(store, "", "persistentvolumes", "", volume_name) if volume_name else None
            if pv is not None:
                volumes.append(pv)
    return volumes


def reaches(store: Store, node: str, kind: str, namespace: str, name: str) -> bool:
    """Is there a path from the object (`kind` as the graph's vertex types name it) to `node`?"""
    if kind == "pod":
        pod = get(store, "", "pods", namespace, name)
        return ((pod or {}).get("spec") or {}).get("nodeName") == node
    if kind in ("volumeattachment", "resourceslice"):
        group = "storage.k8s.io" if kind == "volumeattachment" else "resource.k8s.io"
        obj = get(store, group, kind + "s", "", name)
        return ((obj or {}).get("spec") or {}).get("nodeName") == node
    if kind == "pv":
        return any(pv["metadata"].get("name") == name for pv in _bound_volumes(store, node))
    pods = pods_on(store, node, namespace)
    if kind == "serviceaccount":
        return any((p.get("spec") or {}).get("serviceAccountName", "default") == name for p in pods)
    if kind == "configmap":
        return any(name in configmap_names(p) for p in pods)
    if kind == "pvc":
        return any(name in claim_names(p) for p in pods)
    if kind == "resourceclaim":
        return any(name in resource_claim_names(p) for p in pods)
    if kind == "secret":
        if any(name in secret_names(p) for p in pods):
            return True
        return any((namespace, name) in _pv_secrets(pv) for pv in _bound_volumes(store, node))
    raise ValueError(f"no vertex type {kind!r}")
