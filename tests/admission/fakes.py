"""A `ClusterView` held in memory, for unit tests of the admission plugins and policies.

It serves a few built-in resources (with their real 1.36 schemas) and whatever the test puts in;
`apply` and `json_patch` are the API server's own patch functions, as `apiserver/admitting.py`
lends them. `attrs()` builds request attributes with the defaults a pod create has.
"""

from __future__ import annotations

from typing import Any

import msgspec

from admission.attributes import Attributes
from admission.view import ResourceRef, StoredObject
from apiserver import schemas
from apiserver.admitting import Patching  # the real patch adapters: only the store is faked

RESOURCES = [
    ResourceRef("", "v1", "pods", "Pod", True),
    ResourceRef("", "v1", "namespaces", "Namespace", False),
    ResourceRef("", "v1", "configmaps", "ConfigMap", True),
    ResourceRef("", "v1", "services", "Service", True),
    ResourceRef("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True),
    ResourceRef("", "v1", "limitranges", "LimitRange", True),
    ResourceRef("", "v1", "resourcequotas", "ResourceQuota", True),
    ResourceRef("apps", "v1", "deployments", "Deployment", True),
    ResourceRef("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
    ResourceRef("example.com", "v1", "widgets", "Widget", True),
    ResourceRef("example.com", "v2", "widgets", "Widget", True),
]
for _resource in ("validatingadmissionpolicies", "validatingadmissionpolicybindings", "mutatingadmissionpolicies",
                  "mutatingadmissionpolicybindings"):
    RESOURCES.append(ResourceRef("admissionregistration.k8s.io", "v1", _resource, "", False))


class FakeView(Patching):
    def __init__(self) -> None:
        self.stored: dict[tuple[str, str], dict[tuple[str, str], tuple[int, bytes]]] = {}
        self._revision = 0

    # -- test setup ---------------------------------------------------------------------------
    def put(self, group: str, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.setdefault("metadata", {})
        self._revision += 1
        key = (meta.get("namespace", ""), meta["name"])
        self.stored.setdefault((group, resource), {})[key] = (self._revision, msgspec.json.encode(obj))
        return obj

    def delete(self, group: str, resource: str, namespace: str, name: str) -> None:
        self._revision += 1
        del self.stored[(group, resource)][(namespace, name)]

    def namespace(self, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
        return self.put("", "namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": name, "labels": labels or {}}})

    # -- ClusterView ----------------------------------------------------------------------------
    def revision(self) -> int:
        return self._revision

    def group_revision(self, group: str) -> int:
        return self._revision  # moves on every write: "may move more" is allowed

    def get(self, group: str, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        found = self.stored.get((group, resource), {}).get((namespace, name))
        return None if found is None else msgspec.json.decode(found[1])

    def objects(self, group: str, resource: str, namespace: str | None = None) -> list[StoredObject]:
        return [StoredObject(ns, name, revision, value)
                for (ns, name), (revision, value) in sorted(self.stored.get((group, resource), {}).items())
                if namespace is None or ns == namespace]

    def list_group(self, group: str) -> dict[str, list[StoredObject]]:
        return {resource: self.objects(g, resource) for (g, resource) in self.stored if g == group}

    def resource_for_kind(self, api_version: str, kind: str) -> ResourceRef | None:
        group, _, version = api_version.rpartition("/")
        return next((r for r in RESOURCES if (r.group, r.version, r.kind) == (group, version, kind)), None)

    def resource(self, group: str, version: str, resource: str) -> ResourceRef | None:
        return next((r for r in RESOURCES if (r.group, r.version, r.resource) == (group, version, resource)), None)

    def versions(self, group: str, resource: str) -> list[str]:
        return [r.version for r in RESOURCES if (r.group, r.resource) == (group, resource)]

    def schema(self, group: str, version: str, kind: str) -> dict[str, Any] | None:
        return schemas.for_kind(group, version, kind)



def pod(name: str = "p", namespace: str = "default", *, labels: dict[str, str] | None = None,
        containers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": {"containers": containers or [{"name": "c", "image": "nginx"}]}}


def attrs(obj: dict[str, Any] | None, *, operation: str = "CREATE", old: dict[str, Any] | None = None,
          group: str = "", version: str = "v1", resource: str = "pods", kind: str = "Pod",
          subresource: str = "", namespace: str | None = None, name: str | None = None) -> Attributes:
    source = obj if obj is not None else old or {}
    meta = source.get("metadata") or {}
    return Attributes(operation=operation, group=group, version=version, resource=resource, kind=kind,
                      namespace=meta.get("namespace", "") if namespace is None else namespace,
                      name=meta.get("name", "") if name is None else name, object=obj, old_object=old,
                      subresource=subresource)
