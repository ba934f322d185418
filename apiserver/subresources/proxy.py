"""The `proxy` subresource of pods, services and nodes: where kube would send the request, or
the answer kube gives for why it cannot.

The name is `name`, `name:port` or `scheme:name:port` (scheme http, https or none), as kube's
SplitSchemeNamePort reads it; each kind then finds its target as its ResourceLocation does: a pod
needs a global unicast pod IP, a service a declared port and an Endpoints subset with addresses,
a node a kubelet address. A node's proxy goes to its kubelet's endpoint through `kubelet.py`
(`/pods`, `/healthz`, `/metrics`, `/configz`, `/spec`, `/stats/summary`, even `/exec` upgrades); haru
has no pod network, so a pod or service target that exists answers 503. Called by `app.py` for
`<resource>/<name>/proxy[/<path>]`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from aiohttp import web

from apiserver import errors, responses
from apiserver.context import Endpoint
from apiserver.subresources import kubelet

_SCHEMES = frozenset({"", "http", "https"})
_SINGULAR = {"pods": "pod", "services": "service", "nodes": "node"}


def split_scheme_name_port(target: str) -> tuple[str, str, str] | None:
    parts = target.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in _SCHEMES:
        return None
    return scheme, name, port


async def connect(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    target = ep.request_info.name
    kind = ep.resource.resource
    parsed = split_scheme_name_port(target)
    if parsed is None or kind not in _SINGULAR:
        raise errors.bad_request(f'invalid {_SINGULAR.get(kind, kind)} request "{target}"')
    _, name, port = parsed
    if kind == "pods":
        raise _pod(ep, name)
    if kind == "services":
        raise _service(ep, target, name, port)
    return await _node(ep, request, name, port)


def _global_unicast(raw: str) -> bool:
    # Go's IP.IsGlobalUnicast: private ranges count, loopback/link-local/multicast/unspecified do not.
    try:
        addr = ipaddress.ip_address(raw)
    except ValueError:
        return False
    if addr.is_loopback or addr.is_link_local or addr.is_multicast or addr.is_unspecified:
        return False
    return str(addr) != "255.255.255.255"


def _pod(ep: Endpoint, name: str) -> errors.APIError:
    pod = responses.decode(ep.stored(name).value)
    status = pod.get("status") or {}
    ips = [entry.get("ip", "") for entry in status.get("podIPs") or []]
    ip = ips[0] if ips else status.get("podIP", "")
    if not _global_unicast(ip or ""):
        return errors.bad_request("address not allowed")
    return errors.unavailable(f"haru has no pod network: pod {name} at {ip} cannot be reached")


def _service(ep: Endpoint, target: str, name: str, port: str) -> errors.APIError:
    if port.lstrip("+-").isdigit():
        # A port number is looked up among the service's ports; the endpoints go by port name.
        service = responses.decode(ep.stored(name).value)
        declared = [p for p in (service.get("spec") or {}).get("ports") or [] if p.get("port") == int(port)]
        if not declared:
            return errors.unavailable(f'no service port {int(port)} found for service "{name}"')
        port = declared[0].get("name") or ""
    endpoints = _endpoints(ep, name)
    subsets = endpoints.get("subsets") or []
    if not subsets:
        return errors.unavailable(f'no endpoints available for service "{name}"')
    for subset in subsets:
        addresses = subset.get("addresses") or []
        for subset_port in subset.get("ports") or []:
            if addresses and (subset_port.get("name") or "") == port:
                address = f"{addresses[0].get('ip')}:{subset_port.get('port')}"
                return errors.unavailable(f'haru has no pod network: endpoint {address} of service "{name}" '
                                          "cannot be reached")
    return errors.unavailable(f'no endpoints available for service "{target}"')


def _endpoints(ep: Endpoint, name: str) -> dict[str, Any]:
    resource = ep.server.registry.get("", "v1", "endpoints")
    record = ep.server.store.get(resource.key(ep.request_info.namespace, name)) if resource is not None else None
    if record is None:
        raise errors.not_found("endpoints", "", name)
    return responses.decode(record.value)


async def _node(ep: Endpoint, request: web.Request, name: str, port: str) -> web.StreamResponse:
    node = responses.decode(ep.stored(name).value)
    serving = kubelet.kubelet_of(node)
    if port and port != str(serving.port):
        raise errors.unavailable(f"haru's hollow nodes serve only their kubelet port {serving.port}, not {port}")
    # Everything after .../nodes/<name>/proxy, trailing slash included (/logs/ is not /logs).
    marker = f"/{ep.request_info.name}/proxy"
    rest = request.path[request.path.index(marker) + len(marker):] or "/"
    path_and_query = rest + (f"?{request.query_string}" if request.query_string else "")
    if request.headers.get("Upgrade", "").lower() == "websocket":
        return await kubelet.relay_upgrade(ep, request, serving, path_and_query)
    return await kubelet.stream(ep, request, serving, path_and_query)
