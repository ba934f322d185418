"""The `proxy` subresource of pods, services and nodes: where kube would send the request, or
the answer kube gives for why it cannot.

The name is `name`, `name:port` or `scheme:name:port` (scheme http, https or none), as kube's
SplitSchemeNamePort reads it; each kind then finds its target as its ResourceLocation does: a pod
needs a global unicast pod IP, a service a declared port and an Endpoints subset with addresses,
a node a kubelet address. haru has no pod network and no kubelets to forward to yet, so a target
that exists answers 503. Called by `app.py` for `<resource>/<name>/proxy[/<path>]`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from aiohttp import web

from apiserver import errors, responses
from apiserver.context import Endpoint

_SCHEMES = frozenset({"", "http", "https"})
_SINGULAR = {"pods": "pod", "services": "service", "nodes": "node"}
# The node address types kube's kubelet connection tries, in its order.
_NODE_ADDRESS_TYPES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")


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
    raise _node(ep, name)


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


def _node(ep: Endpoint, name: str) -> errors.APIError:
    node = responses.decode(ep.stored(name).value)
    addresses = (node.get("status") or {}).get("addresses") or []
    if not any(a.get("type") in _NODE_ADDRESS_TYPES for a in addresses):
        # Not a Status error in kube (NoMatchError): a 500 with an empty reason and the bare text.
        known = " ".join(f"{{{a.get('type', '')} {a.get('address', '')}}}" for a in addresses)
        return errors.APIError(500, "", f"no preferred addresses found; known addresses: [{known}]")
    return errors.unavailable(f"no kubelet is serving node {name!r}: haru's hollow nodes do not serve proxy yet")
