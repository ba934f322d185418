"""The DRA objects the DynamicResources tests build: node-local slices, classes selecting by driver
(real CEL, run by the real allocator), and claims."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def gpu_slice(node: str, *devices: str, driver: str = "gpu.nvidia.com", rv: str = "1", **device_fields: Any) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-{driver}", "resourceVersion": rv},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": d, **device_fields} for d in devices]}}


def device_class(name: str, driver: str = "gpu.nvidia.com", extended_resource: str = "",
                 created: str = "2026-01-01T00:00:00Z") -> Obj:
    spec: Obj = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if extended_resource:
        spec["extendedResourceName"] = extended_resource
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


def claim(name: str, *, namespace: str = "default", class_name: str = "gpu", count: int = 1,
          owner_uid: str = "", status: Obj | None = None, requests: list[Obj] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"uid-claim-{name}", "resourceVersion": "5"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid,
                                    "controller": True, "blockOwnerDeletion": True}]
    body: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                 "spec": {"devices": {"requests": requests or [
                     {"name": "gpu", "exactly": {"deviceClassName": class_name, "count": count}}]}}}
    if status:
        body["status"] = status
    return body
