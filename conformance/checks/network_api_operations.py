"""Upstream's "API operations" tests for networking kinds: Ingress (test/e2e/network/ingress.go),
IngressClass (ingressclass.go) and EndpointSlice (endpointslice.go), through `api_operations`."""

from __future__ import annotations

from conformance.checks._confupstream_support import api_operations
from conformance.context import Context
from conformance.registry import conformance


@conformance("[sig-network] Ingress API should support creating Ingress API operations [Conformance]", area="network")
async def ingress_api(ctx: Context) -> None:
    await api_operations(ctx, lambda name: {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": name},
        "spec": {"defaultBackend": {"service": {"name": "default-backend", "port": {"number": 8080}}}}},
        status=lambda obj: {"status": {"loadBalancer": {"ingress": [{"ip": "169.1.1.1"}]}}},
        status_test=lambda obj: obj["status"]["loadBalancer"]["ingress"] == [{"ip": "169.1.1.1"}])


@conformance("[sig-network] IngressClass API should support creating IngressClass API operations [Conformance]",
             area="network")
async def ingressclass_api(ctx: Context) -> None:
    await api_operations(ctx, lambda name: {
        "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": name},
        "spec": {"controller": "example.com/controller"}})


@conformance("[sig-network] EndpointSlice should support creating EndpointSlice API operations [Conformance]",
             area="network")
async def endpointslice_api(ctx: Context) -> None:
    await api_operations(ctx, lambda name: {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": name},
        "addressType": "IPv4", "endpoints": [{"addresses": ["1.2.3.4", "5.6.7.8"]}],
        "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]})
