"""Objects every cluster has: the four system namespaces and `default/kubernetes` with its endpoints.

`wanted(server, port, host)` lists them (`Kept`: storage key, a factory for a fresh copy, the
fields the server owns); `ensure(server, items)` creates the missing ones as stored objects (uid,
timestamps) and puts owned fields back where they drifted (the Service's ports and the endpoints'
address after a restart on another port). `bootstrap.py` runs `ensure` before `runner.start`
announces the server and whenever a kept object changes, as kube-apiserver's bootstrap
controllers do.
"""

from __future__ import annotations

import functools
import logging
import uuid
from typing import Any, Callable, NamedTuple

import msgspec

from apiserver import go_shape, writing
from apiserver.context import Server
from storage import errors as storage_errors

log = logging.getLogger("haru.apiserver.seed")
NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
KUBERNETES_IP = "10.96.0.1"


def _meta(name: str, namespace: str | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": writing.now()}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return meta


def _namespace(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": _meta(name, labels={"kubernetes.io/metadata.name": name}),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def _kubernetes_service(port: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": _meta("kubernetes", "default", {"component": "apiserver", "provider": "kubernetes"}),
        "spec": {
            "type": "ClusterIP", "clusterIP": KUBERNETES_IP, "clusterIPs": [KUBERNETES_IP],
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
        },
        "status": {"loadBalancer": {}},
    }


def _kubernetes_endpoints(host: str, port: int) -> dict[str, Any]:
    # The reconciler writes Endpoints itself and marks them so EndpointSlice mirroring skips them.
    return {
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": _meta("kubernetes", "default", {"endpointslice.kubernetes.io/skip-mirror": "true"}),
        "subsets": [{"addresses": [{"ip": host}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}],
    }


def _kubernetes_endpoint_slice(host: str, port: int) -> dict[str, Any]:
    obj = {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": _meta("kubernetes", "default", {"kubernetes.io/service-name": "kubernetes"}),
        "addressType": "IPv4",
        "endpoints": [{"addresses": [host], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }
    obj["metadata"]["generation"] = 1
    return obj


Factory = Callable[[], dict[str, Any]]


class Kept(NamedTuple):
    """One object the server keeps: its key, a fresh copy, and the fields it keeps current
    (paths into the object; upstream's reconcilers rewrite the kubernetes Service's ports and its
    endpoints' addresses, and leave everything else, labels included, to whoever changed it)."""

    key: str
    fresh: Factory
    owned: tuple[tuple[str, ...], ...] = ()


def wanted(server: Server, port: int, host: str = "127.0.0.1") -> list[Kept]:
    """Everything the bootstrap keeps present."""
    address = host if host not in ("", "0.0.0.0", "::", "localhost") else "127.0.0.1"

    def key(resource: str, name: str, group: str = "", version: str = "v1", namespace: str | None = None) -> str:
        info = server.registry.get(group, version, resource)
        assert info is not None, resource
        return info.key(namespace, name)

    items = [Kept(key("namespaces", n), functools.partial(_namespace, n)) for n in NAMESPACES]
    items.append(Kept(key("services", "kubernetes", namespace="default"),
                      functools.partial(_kubernetes_service, port), (("spec", "ports"),)))
    items.append(Kept(key("endpoints", "kubernetes", namespace="default"),
                      functools.partial(_kubernetes_endpoints, address, port), (("subsets",),)))
    if server.registry.get("discovery.k8s.io", "v1", "endpointslices") is not None:
        items.append(Kept(key("endpointslices", "kubernetes", "discovery.k8s.io", namespace="default"),
                          functools.partial(_kubernetes_endpoint_slice, address, port),
                          (("addressType",), ("endpoints",), ("ports",))))
    return items


async def ensure(server: Server, items: list[Kept]) -> list[str]:
    """Create whichever of `items` is missing and put owned fields back; returns the keys it wrote."""
    written = []
    for item in items:
        record = server.store.get(item.key)
        if record is not None:
            if item.owned and await _reconcile(server, item, msgspec.json.decode(record.value)):
                written.append(item.key)
            continue
        obj = item.fresh()
        if obj["kind"] == "Service" and _cluster_ip_taken(server, item.key, obj["spec"]["clusterIP"]):
            # upstream's reconciler cannot recreate it either: "provided IP is already allocated"
            log.warning("not recreating %s: cluster IP %s is held by another Service", item.key, obj["spec"]["clusterIP"])
            continue
        plan = go_shape.plan_for(obj["apiVersion"], obj["kind"])
        if plan is not None:  # stored as kube's encoder writes them, like every other write
            go_shape.shape(obj, plan, fill=True)
        try:
            await server.store.create(item.key, obj)
            written.append(item.key)
        except storage_errors.KeyExists:
            pass
    return written


async def _reconcile(server: Server, item: Kept, current: dict[str, Any]) -> bool:
    """Rewrite the owned fields that drifted (a restart on another port, a hand edit); False: none did."""
    fresh = item.fresh()
    if all(_get(current, path) == _get(fresh, path) for path in item.owned):
        return False

    def try_update(obj: dict[str, Any] | None) -> dict[str, Any]:
        assert obj is not None
        for path in item.owned:
            parent = obj
            for part in path[:-1]:
                parent = parent.setdefault(part, {})
            parent[path[-1]] = _get(fresh, path)
        if "generation" in obj.get("metadata", {}):
            obj["metadata"]["generation"] += 1
        return obj

    try:
        await server.store.guaranteed_update(item.key, try_update)
    except storage_errors.KeyNotFound:
        return False  # gone meanwhile: the next look creates it
    return True


def _get(obj: dict[str, Any], path: tuple[str, ...]) -> Any:
    for part in path:
        obj = obj.get(part) if isinstance(obj, dict) else None  # type: ignore[assignment]
    return obj


def _cluster_ip_taken(server: Server, key: str, ip: str) -> bool:
    prefix = key[: key.index("/services/") + len("/services/")]
    for record in server.store.list(prefix).records:
        spec = msgspec.json.decode(record.value).get("spec") or {}
        if record.key != key and ip in (spec.get("clusterIPs") or [spec.get("clusterIP")]):
            return True
    return False

