"""Printers for the core/v1 kinds other than pods and events (upstream printers.go).

Owns Node, Namespace, Service, Endpoints, ConfigMap, Secret, ServiceAccount, PersistentVolume,
PersistentVolumeClaim, ResourceQuota and ComponentStatus rows. Unset fields read as their
defaulted value (storage decoding applies defaults upstream: namespace phase Active, PV reclaim
policy Retain, volume mode Filesystem). Called through `apiserver/printers/__init__.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers import cells
from apiserver.printers.printer import AGE, NAME, Doc, Printer, col

_ROLE_PREFIX = "node-role.kubernetes.io/"


def node_status(node: dict[str, Any]) -> str:
    ready = cells.condition(cells.dig(node, "status", "conditions"), "Ready")
    status = ["Unknown" if ready is None else ("Ready" if ready.get("status") == "True" else "NotReady")]
    if cells.dig(node, "spec", "unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def node_roles(node: dict[str, Any]) -> str:
    roles = set()
    for key, value in (cells.meta(node).get("labels") or {}).items():
        if key.startswith(_ROLE_PREFIX) and key[len(_ROLE_PREFIX):]:
            roles.add(key[len(_ROLE_PREFIX):])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _node_address(node: dict[str, Any], kind: str) -> str:
    for address in cells.dig(node, "status", "addresses") or []:
        if address.get("type") == kind:
            return str(address.get("address", ""))
    return "<none>"


def _node(node: dict[str, Any], now: datetime) -> list[Any]:
    info = cells.dig(node, "status", "nodeInfo") or {}
    kernel = info.get("kernelVersion") or "<unknown>"
    if info.get("architecture"):
        # resources.md (1.36 reference): the kernel cell carries the architecture.
        kernel = f"{kernel} ({info['architecture']})"
    return [
        cells.name(node), node_status(node), node_roles(node), cells.age(node, now), info.get("kubeletVersion", ""),
        _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"), info.get("osImage") or "<unknown>",
        kernel, info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _namespace(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [cells.name(obj), cells.dig(obj, "status", "phase") or "Active", cells.age(obj, now)]


def _join_host_port(host: str, port: Any) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def format_endpoints(obj: dict[str, Any]) -> str:
    """Upstream `formatEndpoints` (all ports): up to three `ip:port`, then `+ N more...`."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    limit, count, more = 3, 0, False
    for subset in subsets:
        addresses = subset.get("addresses") or []
        ports = subset.get("ports") or []
        if not ports:
            count += len(addresses)
            for address in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(str(address.get("ip", "")))
            continue
        for port in ports:
            count += len(addresses)
            for address in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(_join_host_port(str(address.get("ip", "")), cells.integer(port.get("port"))))
    text = ",".join(shown)
    return f"{text} + {count - limit} more..." if more else text


def _load_balancer_ips(status: dict[str, Any] | None) -> list[str]:
    found = set()
    for ingress in (status or {}).get("ingress") or []:
        if ingress.get("ip"):
            found.add(ingress["ip"])
        elif ingress.get("hostname"):
            found.add(ingress["hostname"])
    return sorted(found)


def service_external_ip(svc: dict[str, Any]) -> str:
    spec = svc.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    external = spec.get("externalIPs") or []
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        found = _load_balancer_ips(cells.dig(svc, "status", "loadBalancer")) + list(external)
        return ",".join(found) or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def service_ports(spec: dict[str, Any]) -> str:
    pieces = []
    for port in spec.get("ports") or []:
        protocol = port.get("protocol") or "TCP"
        if cells.integer(port.get("nodePort")) > 0:
            pieces.append(f"{cells.integer(port.get('port'))}:{cells.integer(port['nodePort'])}/{protocol}")
        else:
            pieces.append(f"{cells.integer(port.get('port'))}/{protocol}")
    return ",".join(pieces) or "<none>"


def _service(svc: dict[str, Any], now: datetime) -> list[Any]:
    spec = svc.get("spec") or {}
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    return [
        cells.name(svc), spec.get("type") or "ClusterIP", cluster_ips[0] if cluster_ips else "<none>",
        service_external_ip(svc), service_ports(spec), cells.age(svc, now), cells.format_labels(spec.get("selector")),
    ]


def access_modes(modes: list[str] | None) -> str:
    """Upstream `GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order."""
    present = set(modes or [])
    order = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"))
    return ",".join(short for mode, short in order if mode in present)


_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def _storage_class(obj: dict[str, Any]) -> str:
    annotations = cells.meta(obj).get("annotations") or {}
    if _STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[_STORAGE_CLASS_ANNOTATION])
    return str(cells.dig(obj, "spec", "storageClassName") or "")


def _persistent_volume(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    claim = spec.get("claimRef")
    phase = cells.dig(obj, "status", "phase") or "Pending"
    if cells.meta(obj).get("deletionTimestamp") is not None:
        phase = "Terminating"
    return [
        cells.name(obj), str((spec.get("capacity") or {}).get("storage", "0")), access_modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy") or "Retain", phase,
        f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else "", _storage_class(obj),
        spec.get("volumeAttributesClassName") or "<unset>", cells.dig(obj, "status", "reason") or "",
        cells.age(obj, now), spec.get("volumeMode") or "Filesystem",
    ]


def _persistent_volume_claim(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    phase = status.get("phase") or "Pending"
    if cells.meta(obj).get("deletionTimestamp") is not None:
        phase = "Terminating"
    capacity, modes = "", ""
    if spec.get("volumeName"):
        modes = access_modes(status.get("accessModes"))
        capacity = str((status.get("capacity") or {}).get("storage", "0"))
    return [
        cells.name(obj), phase, spec.get("volumeName") or "", capacity, modes, _storage_class(obj),
        spec.get("volumeAttributesClassName") or "<unset>", cells.age(obj, now), spec.get("volumeMode") or "Filesystem",
    ]


def _resource_quota(obj: dict[str, Any], now: datetime) -> list[Any]:
    hard = cells.dig(obj, "status", "hard") or {}
    used = cells.dig(obj, "status", "used") or {}
    requests, limits = [], []
    for resource in sorted(hard):
        text = f"{resource}: {used.get(resource, '0')}/{hard[resource]}"
        pieces = resource.split(".")
        (limits if len(pieces) > 1 and pieces[0] == "limits" else requests).append(text)
    return [cells.name(obj), ", ".join(requests), ", ".join(limits), cells.age(obj, now)]


def _component_status(obj: dict[str, Any], now: datetime) -> list[Any]:
    status, message, error = "Unknown", "", ""
    c = cells.condition(obj.get("conditions"), "Healthy")
    if c is not None:
        status = "Healthy" if c.get("status") == "True" else "Unhealthy"
        message, error = c.get("message", ""), c.get("error", "")
    return [cells.name(obj), status, message, error]


PRINTERS = {
    ("", "nodes"): Printer(
        (NAME, col("Status", "The status of the node"), col("Roles", "The roles of the node"), AGE,
         col("Version", Doc("core.v1.NodeSystemInfo", "kubeletVersion")),
         col("Internal-IP", Doc("core.v1.NodeStatus", "addresses"), priority=1),
         col("External-IP", Doc("core.v1.NodeStatus", "addresses"), priority=1),
         col("OS-Image", Doc("core.v1.NodeSystemInfo", "osImage"), priority=1),
         col("Kernel-Version", Doc("core.v1.NodeSystemInfo", "kernelVersion"), priority=1),
         col("Container-Runtime", Doc("core.v1.NodeSystemInfo", "containerRuntimeVersion"), priority=1)),
        _node,
    ),
    ("", "namespaces"): Printer((NAME, col("Status", "The status of the namespace"), AGE), _namespace),
    ("", "services"): Printer(
        (NAME, col("Type", Doc("core.v1.ServiceSpec", "type")), col("Cluster-IP", Doc("core.v1.ServiceSpec", "clusterIP")),
         col("External-IP", Doc("core.v1.ServiceSpec", "externalIPs")), col("Port(s)", Doc("core.v1.ServiceSpec", "ports")),
         AGE, col("Selector", Doc("core.v1.ServiceSpec", "selector"), priority=1)),
        _service,
    ),
    ("", "endpoints"): Printer(
        (NAME, col("Endpoints", Doc("core.v1.Endpoints", "subsets")), AGE),
        lambda o, now: [cells.name(o), format_endpoints(o), cells.age(o, now)],
    ),
    ("", "configmaps"): Printer(
        (NAME, col("Data", Doc("core.v1.ConfigMap", "data")), AGE),
        lambda o, now: [cells.name(o), len(o.get("data") or {}) + len(o.get("binaryData") or {}), cells.age(o, now)],
    ),
    ("", "secrets"): Printer(
        (NAME, col("Type", Doc("core.v1.Secret", "type")), col("Data", Doc("core.v1.Secret", "data")), AGE),
        lambda o, now: [cells.name(o), o.get("type") or "Opaque", len(o.get("data") or {}), cells.age(o, now)],
    ),
    # 1.36 dropped the SECRETS column (resources-1.36.json lists Name and Age only).
    ("", "serviceaccounts"): Printer((NAME, AGE), lambda o, now: [cells.name(o), cells.age(o, now)]),
    ("", "persistentvolumes"): Printer(
        (NAME, col("Capacity", Doc("core.v1.PersistentVolumeSpec", "capacity")),
         col("Access Modes", Doc("core.v1.PersistentVolumeSpec", "accessModes")),
         col("Reclaim Policy", Doc("core.v1.PersistentVolumeSpec", "persistentVolumeReclaimPolicy")),
         col("Status", Doc("core.v1.PersistentVolumeStatus", "phase")), col("Claim", Doc("core.v1.PersistentVolumeSpec", "claimRef")),
         col("StorageClass", "StorageClass of the pv"), col("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
         col("Reason", Doc("core.v1.PersistentVolumeStatus", "reason")), AGE,
         col("VolumeMode", Doc("core.v1.PersistentVolumeSpec", "volumeMode"), priority=1)),
        _persistent_volume,
    ),
    ("", "persistentvolumeclaims"): Printer(
        (NAME, col("Status", Doc("core.v1.PersistentVolumeClaimStatus", "phase")),
         col("Volume", Doc("core.v1.PersistentVolumeClaimSpec", "volumeName")),
         col("Capacity", Doc("core.v1.PersistentVolumeClaimStatus", "capacity")),
         col("Access Modes", Doc("core.v1.PersistentVolumeClaimStatus", "accessModes")),
         col("StorageClass", "StorageClass of the pvc"), col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
         AGE, col("VolumeMode", Doc("core.v1.PersistentVolumeClaimSpec", "volumeMode"), priority=1)),
        _persistent_volume_claim,
    ),
    ("", "resourcequotas"): Printer(
        (NAME, col("Request", "Request represents a minimum amount of cpu/memory that a container may consume."),
         col("Limit", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
         AGE),
        _resource_quota,
    ),
    ("", "componentstatuses"): Printer(
        (NAME, col("Status", "Status of the component conditions"), col("Message", "Message of the component conditions"),
         col("Error", "Error of the component conditions")),
        _component_status,
    ),
}
