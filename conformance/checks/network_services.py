"""Service, Endpoints and EndpointSlice behaviours of upstream's test/e2e/network/service.go,
endpointslice.go and endpointslicemirroring.go that need no traffic through the service: the
kubernetes service, status and collection operations, and the endpoints the controllers write for
pods that really run on the cluster's nodes."""

from __future__ import annotations

from client import errors
from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import gone, in_discovery, pod, run_pod, saw, watch_events
from conformance.context import Context, Obj
from conformance.registry import conformance

SLICES = ("discovery.k8s.io/v1", "EndpointSlice")


def _service(name: str, *, selector: dict[str, str] | None = None, ports: list[Obj] | None = None,
             labels: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"ports": ports or [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


@conformance("[sig-network] Services should provide secure master service [Conformance]", area="network")
async def kubernetes_service(ctx: Context) -> None:
    svc = await ctx.get("v1", "Service", "kubernetes", "default")
    assert svc["spec"].get("clusterIP"), f"the kubernetes service has no clusterIP: {svc['spec']}"
    assert any(p.get("port") == 443 for p in svc["spec"]["ports"]), f"the kubernetes service does not serve 443: {svc}"


@conformance("[sig-network] Services should find a service from listing all namespaces [Conformance]", area="network")
async def find_service_everywhere(ctx: Context) -> None:
    everywhere = await ctx.api.list(ctx.api.resource("v1", "Service"), None)
    assert any(s["metadata"]["name"] == "kubernetes" and s["metadata"]["namespace"] == "default"
               for s in everywhere["items"]), "listing services in all namespaces does not find default/kubernetes"


@conformance("[sig-network] EndpointSlice should have Endpoints and EndpointSlices pointing to API Server "
             "[Conformance]", area="network")
async def apiserver_endpoints(ctx: Context) -> None:
    await in_discovery(ctx, "discovery.k8s.io", "v1", "endpointslices")
    await ctx.get("v1", "Service", "kubernetes", "default")
    endpoints = await ctx.get("v1", "Endpoints", "kubernetes", "default")
    addresses = [a["ip"] for s in endpoints.get("subsets") or [] for a in s.get("addresses") or []]
    assert addresses, f"the kubernetes Endpoints list no API server: {endpoints}"
    slices = await ctx.list(*SLICES, namespace="default", label_selector="kubernetes.io/service-name=kubernetes")
    sliced = [a for s in slices["items"] for e in s.get("endpoints") or [] for a in e.get("addresses") or []]
    assert sorted(sliced) == sorted(addresses), f"EndpointSlices list {sliced}, Endpoints list {addresses}"


@conformance("[sig-network] Services should complete a service status lifecycle [Conformance]", area="network")
async def service_status_lifecycle(ctx: Context) -> None:
    name = ctx.name("test-service")
    services = ctx.api.resource("v1", "Service")
    # A LoadBalancer of a class no controller serves, as upstream's test: status.loadBalancer is
    # only valid on type LoadBalancer, and nothing else writes it meanwhile.
    manifest = _service(name, labels={"test-service-static": "true"})
    manifest["spec"].update({"type": "LoadBalancer", "loadBalancerClass": "example.com/internal-vip"})
    created = await ctx.create(manifest)
    listed = await ctx.list("v1", "Service", label_selector="test-service-static=true")
    assert [s["metadata"]["name"] for s in listed["items"]] == [name]
    since = listed["metadata"]["resourceVersion"]
    status = await ctx.get("v1", "Service", name, subresource="status")
    assert status["metadata"]["uid"] == created["metadata"]["uid"], "GET /status returned another object"
    ingress = [{"ip": "203.0.113.1", "ipMode": "VIP"}]
    patched = await ctx.patch("v1", "Service", name, {"metadata": {"annotations": {"patchedstatus": "true"}},
                                                      "status": {"loadBalancer": {"ingress": ingress}}},
                              subresource="status")
    assert patched["status"]["loadBalancer"]["ingress"] == ingress, f"the status patch did not show: {patched['status']}"
    await watch_events(ctx, services, ctx.namespace, since, lambda evs: saw(
        evs, "MODIFIED", name, lambda o: (o.get("status") or {}).get("loadBalancer", {}).get("ingress") == ingress))

    condition = {"type": "StatusUpdate", "status": "True", "reason": "E2E", "message": "Set from e2e test",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}

    async def update_status() -> Obj:
        current = await ctx.get("v1", "Service", name, subresource="status")
        current["status"]["conditions"] = [condition]
        return await ctx.update(current, subresource="status")
    updated = await retry_on_conflict(update_status)
    assert [c["type"] for c in updated["status"].get("conditions") or []] == ["StatusUpdate"], \
        f"the status update did not show: {updated['status']}"
    relabelled = await ctx.patch("v1", "Service", name, {"metadata": {"labels": {"test-service": "patched"}}})
    assert relabelled["metadata"]["labels"]["test-service"] == "patched"
    await ctx.delete("v1", "Service", name)
    await gone(ctx, "v1", "Service", name)


@conformance("[sig-network] Services should delete a collection of services [Conformance]", area="network")
async def service_delete_collection(ctx: Context) -> None:
    for i in range(3):
        await ctx.create(_service(f"e2e-svc-{chr(ord('a') + i)}",
                                  labels={"e2e-test-service": "delete"} if i < 2 else {"e2e-test-service": "keep"}))
    listed = await ctx.list("v1", "Service")
    assert len(listed["items"]) == 3, f"expected 3 services, found {len(listed['items'])}"
    await ctx.api.delete_collection(ctx.api.resource("v1", "Service"), ctx.namespace,
                                    label_selector="e2e-test-service=delete")

    async def one_left() -> bool:
        left = await ctx.list("v1", "Service")
        return [s["metadata"]["name"] for s in left["items"]] == ["e2e-svc-c"]
    await ctx.eventually(one_left, what="only the unlabelled service to remain")


@conformance("[sig-network] Services should test the lifecycle of an Endpoint [Conformance]", area="network")
async def endpoint_lifecycle(ctx: Context) -> None:
    name = ctx.name("testservice")
    endpoints = ctx.api.resource("v1", "Endpoints")
    await ctx.create({"apiVersion": "v1", "kind": "Endpoints",
                      "metadata": {"name": name, "labels": {"test-endpoint-static": "true"}},
                      "subsets": [{"addresses": [{"ip": "10.0.0.24"}], "ports": [{"name": "http", "port": 80}]}]})
    listed = await ctx.api.list(endpoints, None, label_selector="test-endpoint-static=true")
    mine = [e for e in listed["items"] if e["metadata"]["namespace"] == ctx.namespace]
    assert [e["metadata"]["name"] for e in mine] == [name], f"listing across namespaces found {mine}"

    async def relabel() -> Obj:
        current = await ctx.get("v1", "Endpoints", name)
        current["metadata"]["labels"]["test-service"] = "updated"
        return await ctx.update(current)
    await retry_on_conflict(relabel)
    read = await ctx.get("v1", "Endpoints", name)
    assert read["metadata"]["labels"].get("test-service") == "updated", "the update did not show"
    patched = await ctx.patch("v1", "Endpoints", name, {
        "metadata": {"labels": {"test-service": "patched"}},
        "subsets": [{"addresses": [{"ip": "10.0.0.25"}], "ports": [{"name": "http-test", "port": 8080}]}]})
    subset = patched["subsets"][0]
    assert subset["addresses"][0]["ip"] == "10.0.0.25" and subset["ports"][0]["port"] == 8080, \
        f"the patch did not show: {patched['subsets']}"
    since = (await ctx.list("v1", "Endpoints"))["metadata"]["resourceVersion"]
    await ctx.api.delete_collection(endpoints, ctx.namespace, label_selector="test-endpoint-static=true")
    await watch_events(ctx, endpoints, ctx.namespace, since, lambda evs: saw(evs, "DELETED", name),
                       label_selector="test-endpoint-static=true")


def _slice_addresses(slices: list[Obj]) -> list[str]:
    return sorted(a for s in slices for e in s.get("endpoints") or [] for a in e.get("addresses") or [])


async def _slices_for(ctx: Context, service: str) -> list[Obj]:
    found = await ctx.list(*SLICES, label_selector=f"kubernetes.io/service-name={service}")
    return found["items"]


async def _endpoint_ports(ctx: Context, service: str) -> dict[str, set[int]]:
    """What the Endpoints object says: pod IP → ports; {} when it does not exist or is empty."""
    try:
        endpoints = await ctx.get("v1", "Endpoints", service)
    except errors.APIError as err:
        if errors.is_not_found(err):
            return {}
        raise
    found: dict[str, set[int]] = {}
    for subset in endpoints.get("subsets") or []:
        for address in subset.get("addresses") or []:
            found.setdefault(address["ip"], set()).update(p["port"] for p in subset.get("ports") or [])
    return found


def _serving_pod(name: str, labels: dict[str, str], ports: list[Obj]) -> Obj:
    manifest = pod(name, labels=labels, image="registry.k8s.io/e2e-test-images/agnhost:2.53")
    manifest["spec"]["containers"][0]["args"] = ["pause"]
    manifest["spec"]["containers"][0]["ports"] = ports
    return manifest


@conformance("[sig-network] Services should serve a basic endpoint from pods [Conformance]", area="network")
async def basic_endpoint(ctx: Context) -> None:
    name = ctx.name("endpoint-test")
    labels = {"name": name}
    await ctx.create(_service(name, selector=labels))

    async def matches(expected: dict[str, set[int]]) -> bool:
        got = await _endpoint_ports(ctx, name)
        assert got == expected, f"the Endpoints list {got}, expected {expected}"
        return True
    await ctx.eventually(lambda: matches({}), what="an empty endpoint set")
    first = await run_pod(ctx, _serving_pod("pod1", labels, [{"containerPort": 8080}]))
    await ctx.eventually(lambda: matches({first["status"]["podIP"]: {8080}}), what="the first pod's endpoint")
    second = await run_pod(ctx, _serving_pod("pod2", labels, [{"containerPort": 8080}]))
    await ctx.eventually(lambda: matches({first["status"]["podIP"]: {8080}, second["status"]["podIP"]: {8080}}),
                         what="both pods' endpoints")
    await ctx.delete("v1", "Pod", "pod1", grace_period_seconds=0)
    await ctx.eventually(lambda: matches({second["status"]["podIP"]: {8080}}), what="only the second pod's endpoint")
    await ctx.delete("v1", "Pod", "pod2", grace_period_seconds=0)
    await ctx.eventually(lambda: matches({}), what="an empty endpoint set again")


@conformance("[sig-network] Services should serve multiport endpoints from pods [Conformance]", area="network")
async def multiport_endpoints(ctx: Context) -> None:
    name = ctx.name("multi-endpoint-test")
    labels = {"name": name}
    await ctx.create(_service(name, selector=labels, ports=[
        {"name": "portname1", "port": 80, "targetPort": "svc1"},
        {"name": "portname2", "port": 81, "targetPort": "svc2"}]))

    async def matches(expected: dict[str, set[int]]) -> bool:
        got = await _endpoint_ports(ctx, name)
        assert got == expected, f"the Endpoints list {got}, expected {expected}"
        return True
    await ctx.eventually(lambda: matches({}), what="an empty endpoint set")
    first = await run_pod(ctx, _serving_pod("pod1", labels, [{"name": "svc1", "containerPort": 100}]))
    await ctx.eventually(lambda: matches({first["status"]["podIP"]: {100}}), what="the first pod on port 100")
    second = await run_pod(ctx, _serving_pod("pod2", labels, [{"name": "svc2", "containerPort": 101}]))
    await ctx.eventually(lambda: matches({first["status"]["podIP"]: {100}, second["status"]["podIP"]: {101}}),
                         what="both pods on their own ports")
    await ctx.delete("v1", "Pod", "pod1", grace_period_seconds=0)
    await ctx.eventually(lambda: matches({second["status"]["podIP"]: {101}}), what="only the second pod")
    await ctx.delete("v1", "Pod", "pod2", grace_period_seconds=0)
    await ctx.eventually(lambda: matches({}), what="an empty endpoint set again")


@conformance("[sig-network] EndpointSlice should create Endpoints and EndpointSlices for Pods matching a Service "
             "[Conformance]", area="network")
async def slices_for_matching_pods(ctx: Context) -> None:
    await in_discovery(ctx, "discovery.k8s.io", "v1", "endpointslices")
    labels = {"app": ctx.name("e2e-example")}
    one = await run_pod(ctx, _serving_pod("pod1", labels, [{"name": "example", "containerPort": 3000}]))
    two = await run_pod(ctx, _serving_pod("pod2", labels, [{"name": "example", "containerPort": 3000}]))
    ips = sorted([one["status"]["podIP"], two["status"]["podIP"]])
    name = ctx.name("example-svc")
    await ctx.create(_service(name, selector=labels, ports=[{"name": "example", "port": 80, "targetPort": "example"}]))

    async def sliced() -> bool:
        slices = await _slices_for(ctx, name)
        assert _slice_addresses(slices) == ips, f"EndpointSlices list {_slice_addresses(slices)}, pods are {ips}"
        ports = {p.get("port") for s in slices for p in s.get("ports") or []}
        assert ports == {3000}, f"EndpointSlices name ports {ports}, expected the resolved target port 3000"
        for s in slices:
            for endpoint in s.get("endpoints") or []:
                target = endpoint.get("targetRef") or {}
                assert target.get("kind") == "Pod" and target.get("name") in ("pod1", "pod2"), \
                    f"an endpoint does not point at its pod: {endpoint}"
        return True
    await ctx.eventually(sliced, what="EndpointSlices for both pods")

    async def endpoints_too() -> bool:
        got = await _endpoint_ports(ctx, name)
        assert sorted(got) == ips, f"the Endpoints list {got}, pods are {ips}"
        return True
    await ctx.eventually(endpoints_too, what="Endpoints for both pods")


@conformance("[sig-network] EndpointSlice should create and delete Endpoints and EndpointSlices for a Service with "
             "a selector specified [Conformance]", area="network")
async def slices_follow_service(ctx: Context) -> None:
    await in_discovery(ctx, "discovery.k8s.io", "v1", "endpointslices")
    name = ctx.name("example-empty-selector")
    await ctx.create(_service(name, selector={"does-not-match-anything": "endpoints-and-endpoint-slices"}))

    async def exist() -> bool:
        slices = await _slices_for(ctx, name)
        assert slices, "no EndpointSlice for the service yet"
        await ctx.get("v1", "Endpoints", name)
        return True
    await ctx.eventually(exist, what="an EndpointSlice and Endpoints for a service with a selector")
    await ctx.delete("v1", "Service", name)

    async def removed() -> bool:
        assert not await _slices_for(ctx, name), "the service's EndpointSlices are still there"
        assert not await _endpoint_ports(ctx, name), "the service's Endpoints still list addresses"
        try:
            await ctx.get("v1", "Endpoints", name)
        except errors.APIError as err:
            return errors.is_not_found(err)
        return False
    await ctx.eventually(removed, what="the EndpointSlices and Endpoints to go with the service")
