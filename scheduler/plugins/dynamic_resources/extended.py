"""Extended resources backed by DRA (KEP-5004): `nvidia.com/gpu: 1` served from a DeviceClass.

A DeviceClass with `spec.extendedResourceName` (and every class under its implicit name
`deviceclass.resource.kubernetes.io/<class>`) serves that resource on nodes that do not list it in
their allocatable. The plugin then allocates one special claim per pod: an in-memory template in
PreFilter, its requests per node in Filter (`container-<i>-request-<j>`), the real object created in
PreBind with the annotation below, and the pod's `status.extendedResourceClaimStatus` mapping each
container's resource to its request. Upstream: `extendeddynamicresources.go`, `extended/util.go`.
"""

from __future__ import annotations

import re
import uuid
from typing import Any, Iterable

from scheduler.framework.node_info import NodeInfo
from scheduler.framework.resources import amount, pod_requests

Obj = dict[str, Any]
ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
IN_MEMORY_NAME = "<extended-resources>"  # not a valid object name, so it never clashes with a real claim
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


class CannotFit(Exception):
    """The pod asks for an extended resource that neither the node nor any DeviceClass offers."""


def is_extended_resource_name(name: str) -> bool:
    if name.startswith(IMPLICIT_PREFIX):
        return True
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return True


def class_mapping(classes: Iterable[Obj]) -> dict[str, str]:
    """Extended resource name -> DeviceClass name. Of two classes naming the same resource the one
    created later wins, on equal timestamps the lexicographically first name (upstream's rule)."""
    explicit: dict[str, Obj] = {}
    mapping: dict[str, str] = {}
    for cls in classes:
        meta = cls.get("metadata") or {}
        name = meta.get("name", "")
        if len(name) <= 63 and _NAME_PART.match(name):
            mapping[IMPLICIT_PREFIX + name] = name
        resource = (cls.get("spec") or {}).get("extendedResourceName")
        if not resource:
            continue
        held = explicit.get(resource)
        if held is None or _newer(cls, held):
            explicit[resource] = cls
    mapping.update({resource: cls["metadata"]["name"] for resource, cls in explicit.items()})
    return mapping


def _newer(a: Obj, b: Obj) -> bool:
    ta, tb = a["metadata"].get("creationTimestamp") or "", b["metadata"].get("creationTimestamp") or ""
    if ta != tb:
        return ta > tb  # RFC 3339 in UTC sorts as text
    return a["metadata"]["name"] < b["metadata"]["name"]


def asks_for_any(pod: Obj) -> bool:
    """A cheap first look: does any container request a prefixed (possibly extended) resource?"""
    spec = pod.get("spec") or {}
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if any("/" in name for name in ((container.get("resources") or {}).get("requests") or {})):
            return True
    return False


def dra_requests(pod: Obj, mapping: dict[str, str]) -> dict[str, int]:
    """The pod's non-zero extended-resource requests, when a DeviceClass could serve one of them
    (empty otherwise: then the plugin has nothing to do with them and NodeResourcesFit decides)."""
    scalar = pod_requests(pod).scalar
    wanted = {name: value for name, value in scalar.items() if value and is_extended_resource_name(name)}
    return wanted if any(name in mapping for name in wanted) else {}


def find_claim(pod: Obj, claims: Iterable[Obj]) -> Obj | None:
    """The special claim an earlier attempt created for this pod, if it is still there."""
    meta = pod.get("metadata") or {}
    for claim in claims:
        claim_meta = claim.get("metadata") or {}
        if (claim_meta.get("annotations") or {}).get(ANNOTATION) != "true":
            continue
        for ref in claim_meta.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("uid") == meta.get("uid") and ref.get("name") == meta.get("name"):
                return claim
    return None


def template(pod: Obj) -> Obj:
    """The in-memory claim PreFilter starts from; its uid only keys the in-flight map."""
    meta = pod.get("metadata") or {}
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {
            "namespace": meta.get("namespace", ""), "name": IN_MEMORY_NAME, "uid": str(uuid.uuid4()),
            "generateName": f"{meta.get('name', '')}-extended-resources-",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta.get("name", ""),
                                 "uid": meta.get("uid", ""), "controller": True, "blockOwnerDeletion": True}],
            "annotations": {ANNOTATION: "true"},
        },
        "spec": {"devices": {}},
    }


def is_in_memory(claim: Obj) -> bool:
    return (claim.get("metadata") or {}).get("name") == IN_MEMORY_NAME


def has_requests(claim: Obj) -> bool:
    return bool(((claim.get("spec") or {}).get("devices") or {}).get("requests"))


def node_demand(requests: dict[str, int], mapping: dict[str, str], node: NodeInfo) -> dict[str, int]:
    """What of `requests` this node must serve through DRA: the names it does not advertise."""
    demand = {}
    for name, value in requests.items():
        if name in node.allocatable.scalar:
            continue  # a device plugin serves it; NodeResourcesFit counts it
        if name not in mapping:
            raise CannotFit(name)
        demand[name] = value
    return demand


def _containers(pod: Obj) -> list[Obj]:
    spec = pod.get("spec") or {}
    return [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]


def device_requests(pod: Obj, demand: dict[str, int], mapping: dict[str, str]) -> list[Obj]:
    """One request per (container, resource): `container-<i>-request-<j>`, i over init containers
    then containers, j the resource's index among the container's sorted request names."""
    out = []
    for resource in sorted(demand):
        for i, container in enumerate(_containers(pod)):
            requests = (container.get("resources") or {}).get("requests") or {}
            if resource not in requests:
                continue
            count = amount(resource, requests[resource])
            if count <= 0:
                continue
            j = sorted(requests).index(resource)
            out.append({"name": f"container-{i}-request-{j}",
                        "exactly": {"deviceClassName": mapping[resource], "allocationMode": "ExactCount",
                                    "count": count}})
    return out


def request_mappings(claim: Obj, pod: Obj) -> list[Obj]:
    names = {r.get("name") for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []}
    out = []
    for i, container in enumerate(_containers(pod)):
        requests = (container.get("resources") or {}).get("requests") or {}
        ordered = sorted(requests)
        for resource in ordered:
            request = f"container-{i}-request-{ordered.index(resource)}"
            if request in names:
                out.append({"containerName": container.get("name", ""), "resourceName": resource,
                            "requestName": request})
    return out
