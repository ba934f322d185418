"""Objects every cluster has from its first start: the four system namespaces and `default/kubernetes`.

Created through the same write path as client requests (strategy, metadata), once: a restart
finds them present and leaves them alone. Called by `runner.start` before the server listens.
"""

from __future__ import annotations

import uuid
from typing import Any

from apiserver import writing
from apiserver.context import Server
from storage import errors as storage_errors

NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


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
            "type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
        },
        "status": {"loadBalancer": {}},
    }


async def seed(server: Server, port: int) -> None:
    namespaces = server.registry.get("", "v1", "namespaces")
    services = server.registry.get("", "v1", "services")
    assert namespaces is not None and services is not None
    wanted = [(namespaces.key(None, name), _namespace(name)) for name in NAMESPACES]
    wanted.append((services.key("default", "kubernetes"), _kubernetes_service(port)))
    for key, obj in wanted:
        if server.store.get(key) is None:
            try:
                await server.store.create(key, obj)
            except storage_errors.KeyExists:
                pass
