"""The aiohttp application: middleware, the non-resource paths, and routing to the verb handlers.

Request flow: `errors_and_metrics` (APIError → Status, counters) → `authenticate` (a client
certificate or bearer token, `authentication/chain.py`; anonymous only on the public paths; else
401; then Impersonate-* headers) → `priority_and_fairness` (API Priority and Fairness,
`flowcontrol/filter.py`: classify, queue or 429; only when the server has it on) → `authorize` (the `--authorization-mode` chain; 403 with kube's
text) → `dispatch`, which serves discovery, OpenAPI, version, health, metrics and the issuer's OIDC
documents itself and sends resource paths to
`handlers/<verb>.py` or `subresources/`. Nothing here knows a kind's rules: those are the
registry's rows and the strategies. Built by `build()`; run by `cluster/` (`haru up`) and tests.
"""

from __future__ import annotations

import logging
import time
import weakref
from typing import Any, Awaitable, Callable

from aiohttp import web

from apiserver import (auth, bodies, componentstatuses, discovery, errors, features, health, metrics, openapi,
                       openapi_v2, requestinfo, responses, version)
from apiserver.audit import recorder as audit
from apiserver.authorization import attributes as authz_attributes, chain as authz_chain, impersonation
from apiserver.authentication import chain, oidc_discovery, options as authn_options
from apiserver.context import SERVER_KEY, Endpoint, Server, endpoint_for, server_of
from apiserver.custom_metrics_api import serving as custom_metrics
from apiserver.flowcontrol import filter as flowcontrol, metrics as flowcontrol_metrics
from apiserver.handlers import create, delete, get, list as list_, patch, update, watch
from apiserver.metrics_api import collector as metrics_collector, resources as metrics_resources, serving as metrics_serving
from apiserver.subresources import kubelet, pods, proxy, reviews, scale, token

log = logging.getLogger("haru.apiserver")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

METRICS_KEY: web.AppKey[metrics.Metrics] = web.AppKey("haru_metrics", metrics.Metrics)
USER_KEY: web.RequestKey[auth.User] = web.RequestKey("haru_user", auth.User)
REQUEST_INFO_KEY: web.RequestKey[requestinfo.RequestInfo] = web.RequestKey("haru_request_info",
                                                                            requestinfo.RequestInfo)
IMPERSONATOR_KEY: web.RequestKey[auth.User] = web.RequestKey("haru_impersonator", auth.User)
_PUBLIC = ("/healthz", "/livez", "/readyz", "/version")  # system:public-info-viewer paths
# Anonymous may reach these too; upstream's RBAC grants them to system:serviceaccounts only
# (system:service-account-issuer-discovery) unless an admin binds system:unauthenticated.
_ANONYMOUS_EXACT = frozenset(oidc_discovery.PATHS)
ANONYMOUS = auth.User("system:anonymous", ("system:unauthenticated",))
_CONNECT = frozenset({"log", "exec", "attach", "portforward", "proxy"})
FLOW_CONTROL = "flow_control"  # server.extra: the flowcontrol.filter.FlowControl, when APF is on
AUDITOR = "auditor"  # server.extra key of the `audit.Auditor` (`--audit-log-path` + `--audit-policy-file`)


def build(server: Server) -> web.Application:
    auditor: audit.Auditor | None = server.extra.get(AUDITOR)
    # Upstream's order: authentication, audit, (impersonation, inside `authenticate` here),
    # priority and fairness, authorization.
    chain: list[Any] = [errors_and_metrics, authenticate]
    if auditor is not None:  # the audit filter only with an audit log (`apiserver/audit/`): else it costs nothing
        chain.append(audit_filter)
    if FLOW_CONTROL in server.extra:  # --enable-priority-and-fairness (on unless turned off)
        chain.append(priority_and_fairness)
    chain.append(authorize)
    app = web.Application(middlewares=chain, client_max_size=4 * 1024 * 1024)
    if FLOW_CONTROL in server.extra:
        app.on_response_prepare.append(flowcontrol.on_response_prepare)
    if auditor is not None:
        app[audit.AUDITOR] = auditor
    app.on_response_prepare.append(audit.on_prepare)  # Audit-Id on every answer, as upstream
    app[SERVER_KEY] = server
    app[METRICS_KEY] = metrics.Metrics()
    if "authenticator" not in server.extra:
        server.extra["authenticator"] = authn_options.Options(admin_token=server.admin_token).build(server)
    server.extra.setdefault(authz_chain.AUTHORIZER, authz_chain.Authorizer(("AlwaysAllow",), server.store))
    app.router.add_route("*", "/{tail:.*}", dispatch)

    async def close_kubelet_connections(_: web.Application) -> None:
        await kubelet.close(server)
        await metrics_collector.close(server)

    app.on_cleanup.append(close_kubelet_connections)
    return app


@web.middleware
async def errors_and_metrics(request: web.Request, handler: Handler) -> web.StreamResponse:
    started = time.perf_counter()
    try:
        response = await handler(request)
    except errors.APIError as err:
        response = responses.error_response(err)
    except web.HTTPException:
        raise
    except ConnectionResetError:
        # The client hung up mid-answer (a stream it closed): normal, and nobody left to answer.
        log.debug("client went away during %s %s", request.method, request.path)
        response = web.Response(status=499, reason="Client Closed Request")
    except Exception as exc:  # a bug: answer like kube does and keep serving
        log.exception("internal error serving %s %s", request.method, request.path)
        response = responses.error_response(errors.internal(str(exc) or type(exc).__name__))
    info = request.get(REQUEST_INFO_KEY)
    if info is not None and info.is_resource:
        request.app[METRICS_KEY].observe_request({
            "code": str(response.status), "component": "apiserver",
            "dry_run": "All" if "dryRun" in request.query else "", "group": info.group,
            "resource": info.resource, "scope": _scope(info), "subresource": info.subresource,
            "verb": _metric_verb(request.method, info), "version": info.version,
        }, time.perf_counter() - started)
    return response


def _scope(info: requestinfo.RequestInfo) -> str:
    if info.name:
        return "resource"
    return "namespace" if info.namespace else "cluster"


def _metric_verb(method: str, info: requestinfo.RequestInfo) -> str:
    return {"watch": "WATCH", "list": "LIST", "get": "GET", "create": "POST", "update": "PUT", "patch": "PATCH",
            "delete": "DELETE", "deletecollection": "DELETE"}.get(info.verb, method.upper())


@web.middleware
async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
    authenticator: chain.Authenticator = server_of(request).extra["authenticator"]
    info = requestinfo.parse(request.method, request.path, dict(request.query))
    request[REQUEST_INFO_KEY] = info
    peercert, der = _peer_certificate(request)
    protocols = (request.headers.getall("Sec-WebSocket-Protocol", [])
                 if request.headers.get("Upgrade", "").lower() == "websocket" else None)
    outcome = authenticator.authenticate(request.headers.get("Authorization"), peercert, der, protocols)
    user = outcome.user
    if user is None:
        # A credential that failed is 401 everywhere, as upstream's union fails before anonymous.
        if not outcome.error and _anonymous_allowed(request.path):
            request[USER_KEY] = ANONYMOUS
            return await handler(request)
        if outcome.error:
            log.debug("unable to authenticate %s %s: %s", request.method, request.path, outcome.error)
        raise errors.APIError(401, "Unauthorized", "Unauthorized")
    if impersonation.requested(request.headers):
        server = server_of(request)
        authorizer: authz_chain.Authorizer = server.extra[authz_chain.AUTHORIZER]
        own = authz_attributes.from_request(user, info, request.query.get("fieldSelector", ""))
        request[IMPERSONATOR_KEY] = user
        user = impersonation.impersonate(user, request.headers, authorizer.authorize, own,
                                         constrained=server.gates.enabled("ConstrainedImpersonation"))
    request[USER_KEY] = user
    return await handler(request)


def _anonymous_allowed(path: str) -> bool:
    return path.rstrip("/") in _PUBLIC or path.startswith(_PUBLIC) or path in _ANONYMOUS_EXACT


def _peer_certificate(request: web.Request) -> tuple[dict[str, Any] | None, bytes | None]:
    """The client certificate the TLS handshake verified against the cluster CA, if one was sent."""
    transport = request.transport
    if transport is None:
        return None, None
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is None:
        return None, None
    # Read once per connection: a connection's certificate never changes (TLS 1.3 has no
    # renegotiation), and getpeercert() builds its dict anew each call (3 % of a busy server's CPU).
    known = _PEER_CERTIFICATES.get(ssl_object)
    if known is None:
        peercert = ssl_object.getpeercert()
        known = (peercert, ssl_object.getpeercert(binary_form=True)) if peercert else (None, None)
        _PEER_CERTIFICATES[ssl_object] = known
    return known


_PEER_CERTIFICATES: "weakref.WeakKeyDictionary[Any, tuple[dict[str, Any] | None, bytes | None]]" = \
    weakref.WeakKeyDictionary()


@web.middleware
async def priority_and_fairness(request: web.Request, handler: Handler) -> web.StreamResponse:
    """After impersonation, before authorization, as upstream's WithPriorityAndFairness."""
    info = request[REQUEST_INFO_KEY]
    server = server_of(request)
    prefix = None
    if info.verb in ("list", "watch") and info.is_resource:  # the work estimate counts the collection
        resource = server.registry.get(info.group, info.version, info.resource)
        prefix = resource.key_prefix if resource is not None and resource.stored else None
    return await flowcontrol.admit(server.extra[FLOW_CONTROL], request, request[USER_KEY], info, prefix, handler)


@web.middleware
async def audit_filter(request: web.Request, handler: Handler) -> web.StreamResponse:
    return await audit.filter(request, handler, request[REQUEST_INFO_KEY], request[USER_KEY],
                              request.get(IMPERSONATOR_KEY))


@web.middleware
async def authorize(request: web.Request, handler: Handler) -> web.StreamResponse:
    info = request[REQUEST_INFO_KEY]  # parsed by `authenticate`
    authorizer: authz_chain.Authorizer = server_of(request).extra[authz_chain.AUTHORIZER]
    attrs = authz_attributes.from_request(request[USER_KEY], info, request.query.get("fieldSelector", ""))
    decision = authorizer.authorize(attrs)
    audit.note_decision(request, decision.allowed, decision.reason)
    if not decision.allowed:
        raise authz_attributes.forbidden(attrs, decision.reason)
    return await handler(request)


async def dispatch(request: web.Request) -> web.StreamResponse:
    path = request.path
    info = request[REQUEST_INFO_KEY]  # parsed by `authenticate`
    if info.is_resource:
        return await _resource(request, info)
    return await _non_resource(request, path.rstrip("/") or "/")


# -- non-resource paths -------------------------------------------------------------------
async def _non_resource(request: web.Request, path: str) -> web.StreamResponse:
    server = server_of(request)
    if request.method not in ("GET", "HEAD"):
        raise errors.method_not_allowed() if _known_non_resource(path) else errors.route_not_found()
    if path == "/version":
        return responses.json_response(version.info())
    if path in oidc_discovery.PATHS:
        authenticator: chain.Authenticator = server.extra["authenticator"]
        jwks_uri = server.extra.get("jwks_uri") or f"{request.scheme}://{request.host}{oidc_discovery.JWKS_PATH}"
        return oidc_discovery.respond(path, authenticator.tokens, jwks_uri)
    if path in ("/healthz", "/livez", "/readyz") or path.startswith(("/healthz/", "/livez/", "/readyz/")):
        return health.respond(server, path, request.query)
    if path == "/metrics":
        counts = [(info.resource if not info.group else f"{info.resource}.{info.group}",
                   server.store.count(info.key_prefix))
                  for info in server.registry.all() if info.stored]
        gates = [(name, features.metric_stage(name), on) for name, on in server.gates.as_dict().items()]
        text = request.app[METRICS_KEY].render(counts, gates)
        if FLOW_CONTROL in server.extra:
            text += flowcontrol_metrics.render(server.extra[FLOW_CONTROL])
        return web.Response(body=text.encode(),
                            headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})
    if path in ("/api", "/apis"):
        return _discovery_root(request, server, legacy=path == "/api")
    parts = path.strip("/").split("/")
    if parts[0] == "apis" and len(parts) in (2, 3) and parts[1] in custom_metrics.GROUPS:
        if len(parts) == 2:
            return responses.json_response(custom_metrics.api_group(parts[1]))
        if parts[2] == custom_metrics.GROUPS[parts[1]]:
            return responses.json_response(custom_metrics.api_resource_list(server, parts[1]))
        raise errors.route_not_found()
    if parts[0] == "api" and len(parts) == 2:
        body = discovery.api_resource_list(server.registry, "", parts[1])
        if body is None:
            raise errors.route_not_found()
        return responses.json_response(body)
    if parts[0] == "apis" and len(parts) == 2:
        group = discovery.api_group(server.registry, parts[1])
        if group is None:
            raise errors.route_not_found()
        return responses.json_response(group)
    if parts[0] == "apis" and len(parts) == 3:
        body = discovery.api_resource_list(server.registry, parts[1], parts[2])
        if body is None:
            raise errors.route_not_found()
        return responses.json_response(body)
    if path == "/openapi/v2":
        return openapi_v2.respond(request, server.registry)
    if path == "/openapi/v3":
        return responses.json_response(openapi.root(server.registry))
    if path.startswith("/openapi/v3/"):
        return _openapi_document(request, server, path[len("/openapi/v3/"):])
    raise errors.route_not_found()


def _known_non_resource(path: str) -> bool:
    return path in ("/version", "/metrics", "/api", "/apis", "/openapi/v3") or path.startswith(
        ("/healthz", "/livez", "/readyz", "/openapi/"))


def _discovery_root(request: web.Request, server: Server, *, legacy: bool) -> web.StreamResponse:
    if discovery.negotiate(request.headers.get("Accept")) == "aggregated":
        etag = discovery.aggregated_etag(server.registry, legacy=legacy)
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(body=discovery.aggregated(server.registry, legacy=legacy), headers={
            "Content-Type": discovery.AGGREGATED_CONTENT_TYPE, "ETag": etag, "Vary": "Accept"})
    address = request.headers.get("Host", "")
    body = discovery.api_versions(address) if legacy else discovery.api_group_list(server.registry)
    return responses.json_response(body)


def _openapi_document(request: web.Request, server: Server, rest: str) -> web.StreamResponse:
    found = openapi.document(server.registry, rest)
    if found is None:
        raise errors.route_not_found()
    body, digest = found
    etag = f'"{digest}"'
    # With ?hash= the URL names one immutable document (kube's own caching contract).
    cache = "public, immutable" if request.query.get("hash") == digest else "no-cache, private"
    headers = {"ETag": etag, "Cache-Control": cache, "Vary": "Accept"}
    if request.headers.get("If-None-Match") == etag:
        return web.Response(status=304, headers=headers)
    return web.Response(body=body, content_type="application/json", headers=headers)


# -- resource paths -----------------------------------------------------------------------
async def _resource(request: web.Request, info: requestinfo.RequestInfo) -> web.StreamResponse:
    server = server_of(request)
    if not info.resource:
        raise errors.route_not_found()
    if info.group in custom_metrics.GROUPS:  # a metrics adapter's API: resources are metric names
        return await custom_metrics.handle(server, request, info)
    ep = endpoint_for(server, info)
    ep.user = ep.strategy.requester = request[USER_KEY]
    if info.subresource:
        return await _subresource(ep, request, info)
    resource = ep.resource
    verb = info.verb
    if verb == "create" and info.name:
        raise errors.method_not_allowed()  # POST to an object: kube's router has no such route
    if verb == "update" and not info.name:
        raise errors.method_not_allowed()
    if verb not in resource.verbs:
        raise errors.method_not_supported(verb, resource.resource, resource.group)
    if not resource.stored:
        return await _virtual(ep, request)
    if verb == "get":
        return await get.handle(ep, request)
    if verb == "list":
        return await list_.handle(ep, request)
    if verb == "watch":
        return await watch.handle(ep, request)
    if verb == "create":
        return await create.handle(ep, request)
    if verb == "update":
        return await update.handle(ep, request)
    if verb == "patch":
        return await patch.handle(ep, request)
    if verb == "delete":
        return await delete.handle(ep, request)
    if verb == "deletecollection":
        return await delete.handle_collection(ep, request)
    raise errors.method_not_allowed()


async def _virtual(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    """Create-only kinds the store never holds."""
    key = (ep.resource.group, ep.resource.resource)
    if key in reviews.REVIEW_RESOURCES:
        return await reviews.create(ep, request, request[USER_KEY])
    if key == ("", "componentstatuses"):  # computed by probing on every read
        return await (componentstatuses.get if ep.request_info.name else componentstatuses.list_)(ep, request)
    if key[0] == metrics_resources.GROUP:  # metrics-server's API, from the kubelets' /metrics/resource
        return await (metrics_serving.get if ep.request_info.name else metrics_serving.list_)(ep, request)
    if key == ("", "bindings"):
        # POST /api/v1/namespaces/ns/bindings: a Binding whose metadata.name names the pod.
        binding = await bodies.read_object(request)
        return await pods.bind(ep, request, binding, (binding.get("metadata") or {}).get("name", ""))
    raise errors.method_not_supported(ep.request_info.verb, ep.resource.resource, ep.resource.group)


async def _subresource(ep: Endpoint, request: web.Request, info: requestinfo.RequestInfo) -> web.StreamResponse:
    sub = ep.resource.subresources.get(info.subresource)
    if sub is None or not info.name:
        raise errors.route_not_found()
    verb = info.verb
    if info.subresource == "proxy":
        return await proxy.connect(ep, request)
    if sub.connect:
        return await pods.connect(ep, request)
    if verb not in sub.verbs:
        raise errors.method_not_supported(verb, f"{ep.resource.resource}/{info.subresource}", ep.resource.group)
    name = info.subresource
    if name == "scale":
        handler = {"get": scale.get, "update": scale.put, "patch": scale.patch}[verb]
        return await handler(ep, request)
    if name == "binding":
        return await pods.bind(ep, request, await bodies.read_object(request, "Binding"), info.name)
    if name == "eviction":
        return await pods.evict(ep, request)
    if name == "token":
        return await token.create(ep, request)
    if name == "log":
        return await pods.connect(ep, request)
    strategy = _subresource_strategy(ep, name)
    if verb == "get":
        return await get.handle(ep, request)
    if verb == "update":
        return await update.handle(ep, request, strategy=strategy, subresource=name)
    if verb == "patch":
        return await patch.handle(ep, request, strategy=strategy, subresource=name)
    raise errors.method_not_allowed()


def _subresource_strategy(ep: Endpoint, name: str) -> Any:
    """status → the status strategy; finalize/ephemeralcontainers/resize → the kind's own, if it has one."""
    if name == "status":
        return ep.strategy.status_strategy()
    factory = getattr(ep.strategy, f"{name}_strategy", None)
    if factory is None:
        raise errors.method_not_supported("update", f"{ep.resource.resource}/{name}", ep.resource.group)
    return factory()
