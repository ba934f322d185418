"""Planning a Service's EndpointSlices: what they should hold, and the writes that get them there.

`desired(service, pods, nodes)` groups the endpoints (one per selected pod with an IPv4 address:
its IP, the ready/serving/terminating conditions, nodeName, the node's topology zone, targetRef)
by the set of ports they resolve to. `plan(service, desired, existing, max_per_slice)` keeps
every endpoint that is already in a slice of its port set where it is (so a change touches as
few slices as upstream's reconciler does), fills slices with room, makes new slices for the rest,
and removes the slices left empty — keeping one empty placeholder when the Service has no
endpoints at all. Pure; `endpoint_slice.py` runs it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from controllers import controller_refs, service_endpoints

Obj = dict[str, Any]
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
SERVICE_NAME = "kubernetes.io/service-name"
ZONE = "topology.kubernetes.io/zone"
MAX_PER_SLICE = 100
PortKey = tuple[tuple[str, str, int, str], ...]


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def port_key(ports: list[Obj] | None) -> PortKey:
    return tuple(sorted((p.get("name") or "", p.get("protocol") or "TCP", int(p.get("port") or 0),
                         p.get("appProtocol") or "") for p in ports or []))


def ports_for(service: Obj, pod: Obj) -> list[Obj]:
    ports = []
    for service_port in (service.get("spec") or {}).get("ports") or []:
        number = service_endpoints.resolve_port(service_port, pod)
        if number is None:
            continue  # this pod does not offer that named port: its endpoint goes without it, as upstream
        port: Obj = {"name": service_port.get("name") or "", "protocol": service_port.get("protocol") or "TCP",
                     "port": number}
        if service_port.get("appProtocol"):
            port["appProtocol"] = service_port["appProtocol"]
        ports.append(port)
    return ports


def endpoint(service: Obj, pod: Obj, ip: str, nodes: dict[str, Obj]) -> Obj:
    result: Obj = {"addresses": [ip], "conditions": service_endpoints.conditions(service, pod)}
    host = service_endpoints.hostname(service, pod)
    if host:
        result["hostname"] = host
    result["targetRef"] = service_endpoints.target_ref(pod)
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        result["nodeName"] = node_name
        zone = (_meta(nodes.get(node_name) or {}).get("labels") or {}).get(ZONE)
        if zone:
            result["zone"] = zone
    return result


def desired(service: Obj, pods: list[Obj], nodes: dict[str, Obj]) -> dict[PortKey, tuple[list[Obj], dict[str, Obj]]]:
    """Port set → (its ports, endpoints by pod uid)."""
    groups: dict[PortKey, tuple[list[Obj], dict[str, Obj]]] = {}
    for pod in sorted(pods, key=lambda p: _meta(p).get("name") or ""):
        ip = service_endpoints.ipv4(pod)
        if ip is None or not service_endpoints.selects(service, pod) or not service_endpoints.in_endpoints(pod, True):
            continue
        ports = ports_for(service, pod)
        key = port_key(ports)
        groups.setdefault(key, (ports, {}))[1][_meta(pod).get("uid") or ip] = endpoint(service, pod, ip, nodes)
    return groups


def labels_for(service: Obj) -> dict[str, str]:
    labels = {k: v for k, v in (_meta(service).get("labels") or {}).items() if k not in (SERVICE_NAME, MANAGED_BY)}
    labels[SERVICE_NAME] = _meta(service)["name"]
    labels[MANAGED_BY] = CONTROLLER_NAME
    if service_endpoints.is_headless(service):
        labels[service_endpoints.HEADLESS] = ""
    return labels


def new_slice(service: Obj, ports: list[Obj], endpoints: list[Obj]) -> Obj:
    meta = _meta(service)
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"generateName": f"{meta['name']}-", "namespace": meta.get("namespace"),
                         "labels": labels_for(service),
                         "ownerReferences": [controller_refs.owner_reference(service, "v1", "Service")]},
            "addressType": "IPv4", "endpoints": endpoints, "ports": ports}


def _uid_of(ep: Obj) -> str:
    return str((ep.get("targetRef") or {}).get("uid") or (ep.get("addresses") or [""])[0])


@dataclass
class Plan:
    create: list[Obj] = field(default_factory=list)
    update: list[Obj] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)


def plan(service: Obj, wanted: dict[PortKey, tuple[list[Obj], dict[str, Obj]]], existing: list[Obj],
         max_per_slice: int = MAX_PER_SLICE) -> Plan:
    result = Plan()
    by_key: dict[PortKey, list[Obj]] = {}
    for slice_ in sorted(existing, key=lambda s: _meta(s).get("name") or ""):
        if slice_.get("addressType") == "IPv4":
            by_key.setdefault(port_key(slice_.get("ports")), []).append(slice_)
        else:
            result.delete.append(slice_)
    labels = labels_for(service)
    kept: list[Obj] = []
    for key, slices in by_key.items():
        ports, endpoints = wanted.get(key, ([], {}))
        left = dict(endpoints)
        filled: list[tuple[Obj, list[Obj]]] = []
        for slice_ in slices:
            mine = [left.pop(_uid_of(ep)) for ep in slice_.get("endpoints") or [] if _uid_of(ep) in left]
            filled.append((slice_, mine))
        for slice_, mine in filled:  # room in kept slices takes the new endpoints before any new slice
            while left and len(mine) < max_per_slice:
                mine.append(left.pop(next(iter(left))))
        for slice_, mine in filled:
            if not mine:
                result.delete.append(slice_)
                continue
            changed = copy.deepcopy(slice_)
            changed["endpoints"] = mine
            changed.setdefault("metadata", {})["labels"] = {**(_meta(slice_).get("labels") or {}), **labels}
            kept.append(changed)
            if mine != (slice_.get("endpoints") or []) or changed["metadata"]["labels"] != _meta(slice_).get("labels"):
                result.update.append(changed)
        wanted = {**wanted, key: (ports, left)} if key in wanted else wanted
    for key, (ports, left) in wanted.items():
        rest = list(left.values())
        for start in range(0, len(rest), max_per_slice):
            result.create.append(new_slice(service, ports, rest[start:start + max_per_slice]))
    if not kept and not result.create:
        # A Service with no endpoints keeps one empty slice, so clients see "none" rather than nothing.
        placeholder = next((s for s in result.delete if not s.get("endpoints") and not s.get("ports")), None)
        if placeholder is not None:
            result.delete.remove(placeholder)
        else:
            result.create.append(new_slice(service, [], []))
    return result
