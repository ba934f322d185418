"""The hollow kubelet's HTTPS endpoint: the API the real kubelet serves on its port 10250.

One aiohttp application serves every hollow kubelet of the process, one socket each, and finds the
node by the (address, port) a request came in on. Upstream's paths: `/exec|attach/…`,
`/containerLogs/…`, `/portForward/…`, `/pods`, `/healthz`, `/metrics[/resource]`, `/configz`, `/spec`,
`/stats/summary`, `/logs/`; each request authenticated and authorized first (`endpoint/auth.py`),
errors in the kubelet's plain text. Reads `runtime_view.NodeView`; started by `python -m nodes`.
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from aiohttp import web

from client.rest import RestClient
from nodes.endpoint import auth, cert, info
from nodes.runtime_view import ContainerView, NodeView, PodView
from nodes.streaming import logs, portforward, portforward_spdy, remotecommand

log = logging.getLogger("haru.nodes.server")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_LONG_RUNNING = ("exec", "attach", "portForward", "containerLogs")
_HEALTH_CHECKS = ("ping", "log", "syncloop")


@dataclass
class _Kubelet:
    view: NodeView
    gate: auth.Gate


_KUBELET_KEY: web.RequestKey[_Kubelet] = web.RequestKey("haru_kubelet", _Kubelet)


def _text(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text, content_type="text/plain")


def _anonymous_allowed(config: dict[str, Any]) -> bool:
    return bool(((config.get("authentication") or {}).get("anonymous") or {}).get("enabled"))


class KubeletEndpoint:
    """The kubelet API of many hollow kubelets: one application, one socket per node.

    The nodes process makes one over its RestClient (the reviews go there), `await start()`, then
    for each kubelet `port = await serve(view)` before it writes its Node, whose InternalIP is the
    socket's address and `daemonEndpoints.kubeletEndpoint.Port` the port returned; `remove(name)`
    when a node goes, `stop()` at the end.
    """

    def __init__(self, rest: RestClient, *, host: str = "127.0.0.1", ssl_context: ssl.SSLContext | None = None):
        self.rest = rest
        self.host = host
        self.ssl_context = ssl_context or cert.server_context(*cert.self_signed(host))
        self.requests = info.RequestCounter()
        self._by_socket: dict[tuple[str, int], _Kubelet] = {}
        self._sites: dict[str, tuple[web.SockSite, tuple[str, int]]] = {}
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._count, self._authorize])
        for verb in ("exec", "attach"):
            handler = self._exec if verb == "exec" else self._attach
            app.router.add_route("*", f"/{verb}/{{namespace}}/{{pod}}/{{container}}", handler)
            app.router.add_route("*", f"/{verb}/{{namespace}}/{{pod}}/{{uid}}/{{container}}", handler)
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._logs)
        app.router.add_route("*", "/portForward/{namespace}/{pod}", self._port_forward)
        app.router.add_route("*", "/portForward/{namespace}/{pod}/{uid}", self._port_forward)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/healthz/{check}", self._healthz)
        app.router.add_get("/pods", self._json(info.pod_list))
        app.router.add_get("/pods/", self._json(info.pod_list))
        app.router.add_get("/configz", self._json(info.configz))
        app.router.add_get("/spec", self._json(info.machine_info))
        app.router.add_get("/spec/", self._json(info.machine_info))
        app.router.add_get("/stats/summary", self._json(info.summary))
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/metrics/resource", self._resource_metrics)
        app.router.add_get("/logs", self._logs_redirect)
        app.router.add_get("/logs/{path:.*}", self._node_logs)
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await self._runner.setup()

    async def serve(self, view: NodeView, port: int = 0, *, address: str | None = None) -> int:
        """Serve `view` on its own socket; returns the port to advertise in daemonEndpoints.

        Each node needs its own (address, port): its own port (0: any free one) on the endpoint's
        host, or its own loopback address (127.0.0.0/8) with a shared port, as the Node's
        InternalIP says. Node-wide paths (/pods, /stats/summary…) carry no node name.
        """
        assert self._runner is not None, "start() first"
        sock = socket.socket(socket.AF_INET6 if ":" in (address or self.host) else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address or self.host, port))
        site = web.SockSite(self._runner, sock, ssl_context=self.ssl_context)
        await site.start()
        bound = sock.getsockname()[:2]
        gate = auth.Gate(self.rest, anonymous=_anonymous_allowed(view.kubelet_config()))
        self._by_socket[bound] = _Kubelet(view, gate)
        self._sites[view.name] = (site, bound)
        return int(bound[1])

    async def remove(self, node: str) -> None:
        found = self._sites.pop(node, None)
        if found is not None:
            site, bound = found
            self._by_socket.pop(bound, None)
            await site.stop()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self._sites.clear()
        self._by_socket.clear()

    # -- filters ---------------------------------------------------------------------------
    @web.middleware
    async def _count(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        labels = info.RequestCounter.labels(request.method, request.path,
                                            request.path.strip("/").split("/")[0] in _LONG_RUNNING)
        self.requests.total[labels] += 1
        self.requests.inflight[labels] += 1
        try:
            return await handler(request)
        finally:
            self.requests.inflight[labels] -= 1

    @web.middleware
    async def _authorize(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        kubelet = self._by_socket.get(tuple(sockname[:2])) if sockname else None
        if kubelet is None:
            return _text(404, "404 page not found")
        try:
            user = await kubelet.gate.authenticate(request.headers.get("Authorization"))
            await kubelet.gate.authorize(user, auth.attributes(request.method, request.path, kubelet.view.name))
        except auth.Unauthorized:
            return _text(401, "Unauthorized")
        except auth.Forbidden as exc:
            return _text(403, str(exc))
        except auth.ReviewFailed as exc:
            log.warning("kubelet %s: %s", kubelet.view.name, exc)
            return _text(500, str(exc))
        request[_KUBELET_KEY] = kubelet
        return await handler(request)

    # -- documents ---------------------------------------------------------------------------
    async def _healthz(self, request: web.Request) -> web.StreamResponse:
        # The kubelet's checks: ping, log and syncloop; a hollow kubelet that answers passes them all.
        check = request.match_info.get("check")
        if check is not None:
            return _text(200, "ok") if check in _HEALTH_CHECKS else _text(404, "404 page not found")
        if "verbose" in request.query:
            return _text(200, "".join(f"[+]{name} ok\n" for name in _HEALTH_CHECKS) + "healthz check passed\n")
        return _text(200, "ok")

    def _json(self, build: Callable[[NodeView], dict[str, Any]]) -> Handler:
        async def handle(request: web.Request) -> web.StreamResponse:
            return web.json_response(build(request[_KUBELET_KEY].view), dumps=_dumps)
        return handle

    async def _metrics(self, request: web.Request) -> web.StreamResponse:
        body = info.metrics(request[_KUBELET_KEY].view, self.requests)
        return web.Response(text=body, content_type="text/plain", charset="utf-8",
                            headers={"X-Prometheus-Format": "0.0.4"})

    async def _resource_metrics(self, request: web.Request) -> web.StreamResponse:
        body = info.resource_metrics(request[_KUBELET_KEY].view)
        return web.Response(text=body, content_type="text/plain", charset="utf-8",
                            headers={"X-Prometheus-Format": "0.0.4"})

    async def _logs_redirect(self, request: web.Request) -> web.StreamResponse:
        return web.Response(status=301, headers={"Location": "/logs/"})

    async def _node_logs(self, request: web.Request) -> web.StreamResponse:
        view = request[_KUBELET_KEY].view
        path = request.match_info["path"]
        files = view.log_files()
        if path in files:
            return web.Response(text=files[path], content_type="text/plain", charset="utf-8")
        listing = info.log_listing(view, path) if path == "" or path.endswith("/") else None
        if listing is None:
            return _text(404, "404 page not found")
        return web.Response(text=listing, content_type="text/html", charset="utf-8")

    # -- streams -----------------------------------------------------------------------------
    def _pod(self, request: web.Request) -> PodView | None:
        view = request[_KUBELET_KEY].view
        pod = view.pod(request.match_info["namespace"], request.match_info["pod"])
        uid = request.match_info.get("uid")
        if pod is not None and uid and pod.uid != uid:
            return None
        return pod

    def _running(self, request: web.Request) -> tuple[PodView, ContainerView] | web.Response:
        pod = self._pod(request)
        if pod is None:
            return _text(404, "pod does not exist")
        name = request.match_info["container"]
        container = pod.containers().get(name)
        if container is None or not container.running():
            return _text(500, f'container not found ("{name}")')
        return pod, container

    async def _exec(self, request: web.Request) -> web.StreamResponse:
        return await self._remote_command(request, attach=False)

    async def _attach(self, request: web.Request) -> web.StreamResponse:
        return await self._remote_command(request, attach=True)

    async def _remote_command(self, request: web.Request, *, attach: bool) -> web.StreamResponse:
        try:
            opts = remotecommand.options(request.query)
        except remotecommand.OptionsError as exc:
            return _text(400, str(exc))
        found = self._running(request)
        if isinstance(found, web.Response):
            return found
        if not _is_websocket(request):
            return _text(400, "unable to upgrade: missing upgrade headers in request")
        pod, container = found
        if attach:
            # The process's terminal was decided when it started: the container spec's tty wins.
            opts = remotecommand.with_tty(opts, _spec_tty(pod.object(), container.name))
            return await remotecommand.serve(request, opts, container.attach, [])
        command = opts.command
        return await remotecommand.serve(request, opts, lambda streams: container.exec(command, streams), command)

    async def _logs(self, request: web.Request) -> web.StreamResponse:
        query = request.query.copy()
        tail = query.pop("tail", None)  # the kubelet's old spelling of tailLines
        if tail and tail != "all":
            query["tailLines"] = tail
        try:
            opts = logs.LogOptions.parse(query)
        except logs.LogError:
            return _text(400, '{"message": "Unable to decode query."}')
        if _invalid_log_options(opts):
            return _text(422, '{"message": "Invalid request."}')
        pod = self._pod(request)
        name = request.match_info["container"]
        if pod is None:
            return _text(404, f'pod "{request.match_info["pod"]}" does not exist')
        obj = pod.object()
        if name not in _spec_containers(obj):
            return _text(404, f'container "{name}" not found in pod "{pod.name}"')
        container = pod.containers().get(name)
        try:
            if container is None:
                logs.which_run(obj, name, opts.previous)  # says why there are no logs yet
                return _text(400, f'container "{name}" in pod "{pod.name}" is not available')
            return await logs.stream(request, obj, container, opts)
        except logs.LogError as exc:
            return _text(400, str(exc))

    async def _port_forward(self, request: web.Request) -> web.StreamResponse:
        pod = self._pod(request)
        if pod is None:
            return _text(404, "pod does not exist")
        if _is_websocket(request) and portforward_spdy.offered(request):
            return await portforward_spdy.serve(request, pod)  # kubectl: the ports come per stream
        try:
            wanted = portforward.ports(request.query)
        except portforward.PortsError as exc:
            return _text(400, str(exc))
        if not _is_websocket(request):
            return _text(400, "unable to upgrade: missing upgrade headers in request")
        return await portforward.serve(request, pod, wanted)


def _is_websocket(request: web.Request) -> bool:
    # SPDY upgrades (kubectl's fallback) are not served: the WebSocket protocols are enough for it.
    return request.headers.get("Upgrade", "").lower() == "websocket"


def _invalid_log_options(opts: logs.LogOptions) -> bool:
    """ValidatePodLogOptions: the numbers must be positive, and at most one of the two sinces."""
    return ((opts.tail_lines is not None and opts.tail_lines < 0)
            or (opts.limit_bytes is not None and opts.limit_bytes < 1)
            or (opts.since_seconds is not None and opts.since_seconds < 1)
            or (opts.since_seconds is not None and opts.since_time is not None))


def _spec_containers(pod: dict[str, Any]) -> set[str]:
    spec = pod.get("spec") or {}
    return {c.get("name", "") for key in ("containers", "initContainers", "ephemeralContainers")
            for c in spec.get(key) or []}


def _spec_tty(pod: dict[str, Any], name: str) -> bool:
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            if container.get("name") == name:
                return bool(container.get("tty"))
    return False


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))
