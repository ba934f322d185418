"""What every handler can reach: the store, the resource registry, feature gates, credentials.

One `Server` per running API server, built by `app.build()` and stored on the aiohttp app.
`Endpoint` is the per-request view a resource handler works with: which resource (from the
registry), which strategy (from `kinds`), and the storage keys for names in its namespace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from apiserver import errors, kinds, registry
from apiserver.features import FeatureGates
from apiserver.namespace_cache import NamespaceCache
from apiserver.requestinfo import RequestInfo
from apiserver.strategy import Strategy
from storage import Record, Store


@dataclass
class Server:
    store: Store
    registry: registry.Registry
    gates: FeatureGates
    # None: plain HTTP, where client-go sends no credentials and everyone is the admin.
    admin_token: str | None = None
    started_at: float = field(default_factory=time.time)
    # Service cluster IPs and node ports in use; the service strategy allocates from these.
    extra: dict[str, Any] = field(default_factory=dict)
    # Labels of every stored object (label_index.LabelIndex), for selective LISTs; None: scan.
    label_index: Any = None
    # The admission chain (admission.assembly.Assembly), set by admitting.install; None: no admission.
    admission: Any = None
    # Decoded namespaces for NamespaceLifecycle and admission (namespace_cache.NamespaceCache).
    namespaces: NamespaceCache = field(init=False)

    def __post_init__(self) -> None:
        namespaces = self.registry.get("", "v1", "namespaces")
        assert namespaces is not None
        self.namespaces = NamespaceCache(self.store, namespaces.key_prefix)


SERVER_KEY: web.AppKey[Server] = web.AppKey("haru_server", Server)


def server_of(request: web.Request) -> Server:
    return request.app[SERVER_KEY]


@dataclass
class Endpoint:
    server: Server
    request_info: RequestInfo
    resource: registry.ResourceInfo
    strategy: Strategy
    # Who is asking (an auth.User), for admission's request.userInfo; None: haru's admin.
    user: Any = None

    @property
    def namespace(self) -> str:
        return self.request_info.namespace if self.resource.namespaced else ""

    def key(self, name: str) -> str:
        return self.resource.key(self.namespace or None, name)

    def prefix(self) -> str:
        """Storage prefix for a collection request: one namespace, or all of them."""
        if self.resource.namespaced and self.request_info.namespace:
            return f"{self.resource.key_prefix}{self.request_info.namespace}/"
        return self.resource.key_prefix

    def stored(self, name: str) -> Record:
        """The stored record of `name` in this endpoint's namespace, or the 404 kube answers."""
        record = self.server.store.get(self.key(name))
        if record is None:
            raise self.not_found(name)
        return record

    def not_found(self, name: str) -> errors.APIError:
        return errors.not_found(self.resource.resource, self.resource.group, name)


def endpoint_for(server: Server, info: RequestInfo) -> Endpoint:
    resource = server.registry.get(info.group, info.version, info.resource)
    if resource is None:
        raise errors.route_not_found()
    if resource.namespaced is False and info.namespace and info.resource != "namespaces":
        # /api/v1/namespaces/x/nodes is not a route (kube answers 404 for it).
        raise errors.route_not_found()
    strategy = kinds.strategy_for(
        resource.group, resource.resource, namespaced=resource.namespaced, has_status="status" in resource.subresources,
        namespaces=server.namespaces.get, gates=server.gates,
    )
    return Endpoint(server, info, resource, strategy)
