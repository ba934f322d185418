"""Printers for networking.k8s.io and discovery.k8s.io kinds (upstream printers.go).

Owns Ingress, IngressClass, NetworkPolicy, EndpointSlice, ServiceCIDR and IPAddress rows.
IPAddress keeps upstream's quirk: two columns, three cells (its age). Called through
`apiserver/printers/__init__.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers import cells
from apiserver.printers.printer import AGE, NAME, Doc, Printer, col


def format_hosts(rules: list[dict[str, Any]] | None) -> str:
    rules = rules or []
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if more else text


def _ingress(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    found = set()
    for ingress in cells.dig(obj, "status", "loadBalancer", "ingress") or []:
        if ingress.get("ip"):
            found.add(ingress["ip"])
        elif ingress.get("hostname"):
            found.add(ingress["hostname"])
    return [
        cells.name(obj), spec.get("ingressClassName") or "<none>", format_hosts(spec.get("rules")),
        ",".join(sorted(found)), "80, 443" if spec.get("tls") else "80", cells.age(obj, now),
    ]


def _ingress_class(obj: dict[str, Any], now: datetime) -> list[Any]:
    params = cells.dig(obj, "spec", "parameters")
    text = "<none>"
    if params:
        text = params.get("kind", "")
        if params.get("apiGroup") is not None:
            text += "." + params["apiGroup"]
        text += "/" + params.get("name", "")
    return [cells.name(obj), cells.dig(obj, "spec", "controller") or "", text, cells.age(obj, now)]


def _endpoint_slice(obj: dict[str, Any], now: datetime) -> list[Any]:
    ports = obj.get("ports") or []
    port_texts = []
    for port in ports[:3]:
        if port.get("port") is not None:
            port_texts.append(str(port["port"]))
        elif port.get("name") is not None:
            port_texts.append(port["name"])
        else:
            port_texts.append("*")
    addresses = [a for e in obj.get("endpoints") or [] for a in e.get("addresses") or []]
    return [
        cells.name(obj), obj.get("addressType", ""), cells.list_with_more(port_texts, len(ports)),
        cells.list_with_more(addresses[:3], len(addresses)), cells.age(obj, now),
    ]


def _ip_address(obj: dict[str, Any], now: datetime) -> list[Any]:
    ref = cells.dig(obj, "spec", "parentRef")
    text = "<none>"
    if ref:
        resource = ref.get("resource", "")
        text = (f"{resource}.{ref['group']}" if ref.get("group") else resource).lower()
        if ref.get("namespace"):
            text += "/" + ref["namespace"]
        text += "/" + ref.get("name", "")
    return [cells.name(obj), text, cells.age(obj, now)]


PRINTERS = {
    ("networking.k8s.io", "ingresses"): Printer(
        (NAME, col("Class", "The name of the IngressClass resource that should be used for additional configuration"),
         col("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
         col("Address", "Address is a list containing ingress points for the load-balancer"),
         col("Ports", "Ports of TLS configurations that open"), AGE),
        _ingress,
    ),
    ("networking.k8s.io", "ingressclasses"): Printer(
        (NAME, col("Controller", "Controller that is responsible for handling this class"),
         col("Parameters", "A reference to a resource with additional parameters"), AGE),
        _ingress_class,
    ),
    ("networking.k8s.io", "networkpolicies"): Printer(
        (NAME, col("Pod-Selector", Doc("networking.v1.NetworkPolicySpec", "podSelector")), AGE),
        lambda o, now: [cells.name(o), cells.format_label_selector(cells.dig(o, "spec", "podSelector") or {}), cells.age(o, now)],
    ),
    ("discovery.k8s.io", "endpointslices"): Printer(
        (NAME, col("AddressType", Doc("discovery.v1.EndpointSlice", "addressType")),
         col("Ports", Doc("discovery.v1.EndpointSlice", "ports")), col("Endpoints", Doc("discovery.v1.EndpointSlice", "endpoints")), AGE),
        _endpoint_slice,
    ),
    ("networking.k8s.io", "servicecidrs"): Printer(
        (NAME, col("CIDRs", Doc("networking.v1.ServiceCIDRSpec", "cidrs")), AGE),
        lambda o, now: [cells.name(o), ",".join(cells.dig(o, "spec", "cidrs") or []), cells.age(o, now)],
    ),
    ("networking.k8s.io", "ipaddresses"): Printer(
        (NAME, col("ParentRef", Doc("networking.v1.IPAddressSpec", "parentRef"))),
        _ip_address,
    ),
}
