"""Objects every cluster has: the four system namespaces and `default/kubernetes` with its endpoints.

`wanted(server, port, host)` lists them (storage key and a factory for a fresh copy);
`ensure(server, items)` creates the missing ones as stored objects (uid, timestamps), leaving present
ones alone. `seed` runs both once; `bootstrap.py` keeps them present afterwards, as
kube-apiserver's bootstrap controllers do. Called by `runner.start` before the server is announced.
"""

from __future__ import annotations

import functools
import logging
import uuid
from typing import Any, Callable

import msgspec

from apiserver import writing
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


def wanted(server: Server, port: int, host: str = "127.0.0.1") -> list[tuple[str, Factory]]:
    """(storage key, fresh object) of everything the bootstrap keeps present."""
    address = host if host not in ("", "0.0.0.0", "::", "localhost") else "127.0.0.1"

    def key(resource: str, name: str, group: str = "", version: str = "v1", namespace: str | None = None) -> str:
        info = server.registry.get(group, version, resource)
        assert info is not None, resource
        return info.key(namespace, name)

    items: list[tuple[str, Factory]] = [(key("namespaces", n), functools.partial(_namespace, n)) for n in NAMESPACES]
    items.append((key("services", "kubernetes", namespace="default"), functools.partial(_kubernetes_service, port)))
    items.append((key("endpoints", "kubernetes", namespace="default"),
                  functools.partial(_kubernetes_endpoints, address, port)))
    if server.registry.get("discovery.k8s.io", "v1", "endpointslices") is not None:
        items.append((key("endpointslices", "kubernetes", "discovery.k8s.io", namespace="default"),
                      functools.partial(_kubernetes_endpoint_slice, address, port)))
    return items


async def ensure(server: Server, items: list[tuple[str, Factory]]) -> list[str]:
    """Create whichever of `items` is missing; returns the keys it created."""
    created = []
    for key, fresh in items:
        if server.store.get(key) is not None:
            continue
        obj = fresh()
        if obj["kind"] == "Service" and _cluster_ip_taken(server, key, obj["spec"]["clusterIP"]):
            # upstream's reconciler cannot recreate it either: "provided IP is already allocated"
            log.warning("not recreating %s: cluster IP %s is held by another Service", key, obj["spec"]["clusterIP"])
            continue
        try:
            await server.store.create(key, obj)
            created.append(key)
        except storage_errors.KeyExists:
            pass
    return created


def _cluster_ip_taken(server: Server, key: str, ip: str) -> bool:
    prefix = key[: key.index("/services/") + len("/services/")]
    for record in server.store.list(prefix).records:
        spec = msgspec.json.decode(record.value).get("spec") or {}
        if record.key != key and ip in (spec.get("clusterIPs") or [spec.get("clusterIP")]):
            return True
    return False


async def seed(server: Server, port: int, host: str = "127.0.0.1") -> None:
    await ensure(server, wanted(server, port, host))
