"""Proxying to a node's kubelet: `pods/log|exec|attach|portforward` and `nodes/proxy`.

`locate(node)` finds the kubelet as kube's node connection info does: the node's first address
of the preferred types (kubeadm's InternalIP, ExternalIP, Hostname) and
`status.daemonEndpoints.kubeletEndpoint.Port` (10250 when unset), over HTTPS without verifying the
kubelet's certificate (kube-apiserver without `--kubelet-certificate-authority`), with the
admin token as the API server's credential. A WebSocket upgrade is relayed message by message
(`upstream_websocket.py`), a kubelet refusal is passed back as kube's upgrade-aware proxy does, and
plain requests (logs, node endpoints) are streamed through. Called by `pods.py` and `proxy.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import ssl
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import WSMsgType, web

from apiserver import errors, responses
from apiserver.context import Endpoint, Server
from apiserver.subresources import upstream_websocket

log = logging.getLogger("haru.apiserver.kubelet")
PREFERRED_ADDRESS_TYPES = ("InternalIP", "ExternalIP", "Hostname")
DEFAULT_PORT = 10250
_SESSION_KEY = "kubelet_session"
_MAX_REFUSAL = 4096  # kube reads at most this much of a refusing kubelet's body
# Hop-by-hop headers (RFC 7230 §6.1) and what aiohttp sets itself: never copied through.
_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                  "transfer-encoding", "upgrade", "content-length", "host", "authorization"})


@dataclass(frozen=True)
class Kubelet:
    host: str
    port: int

    def url(self, path: str) -> str:
        return f"https://{self.host}:{self.port}{path}"


def locate(ep: Endpoint, node_name: str) -> Kubelet:
    nodes = ep.server.registry.get("", "v1", "nodes")
    assert nodes is not None
    record = ep.server.store.get(nodes.key("", node_name))
    if record is None:
        raise errors.not_found("nodes", "", node_name)
    return kubelet_of(responses.decode(record.value))


def kubelet_of(node: dict[str, Any]) -> Kubelet:
    status = node.get("status") or {}
    addresses = status.get("addresses") or []
    for kind in PREFERRED_ADDRESS_TYPES:
        for address in addresses:
            if address.get("type") == kind and address.get("address"):
                port = int((((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")) or 0)
                return Kubelet(address["address"], port if port > 0 else DEFAULT_PORT)
    # Not a Status error in kube (NoMatchError): a 500 with an empty reason and the bare text.
    known = " ".join(f"{{{a.get('type', '')} {a.get('address', '')}}}" for a in addresses)
    raise errors.APIError(500, "", f"no preferred addresses found; known addresses: [{known}]")


def _tls() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _credentials(server: Server) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.admin_token}"} if server.admin_token else {}


def _session(server: Server) -> aiohttp.ClientSession:
    session: aiohttp.ClientSession | None = server.extra.get(_SESSION_KEY)
    if session is None or session.closed:
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=_tls(), limit=0), auto_decompress=False)
        server.extra[_SESSION_KEY] = session
    return session


async def close(server: Server) -> None:
    """Close the pooled kubelet connections (the application's cleanup)."""
    session = server.extra.pop(_SESSION_KEY, None)
    if session is not None:
        await session.close()


def _dial_error(kubelet: Kubelet, exc: BaseException, method: str = "", url: str = "") -> errors.APIError:
    """Go's dial error text: "error dialing backend: …" for an upgrade, `Get "url": …` for a request."""
    cause = getattr(exc, "os_error", exc)
    if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
        reason = "connect: connection refused"
    elif isinstance(exc, asyncio.TimeoutError):
        reason = "i/o timeout"
    else:
        reason = getattr(cause, "strerror", None) or str(cause) or type(cause).__name__
    dial = f"dial tcp {kubelet.host}:{kubelet.port}: {reason}"
    if url:
        return errors.APIError(500, "", f'{method.capitalize()} "{url}": {dial}')
    return errors.APIError(500, "", f"error dialing backend: {dial}")


def refusal_error(status: int, body: bytes) -> errors.APIError:
    """A kubelet's non-2xx answer as kube's GenericHttpResponseChecker turns it into a Status."""
    text = body.decode(errors="replace")
    if status == 500:
        return errors.internal(text)
    if status == 400:
        return errors.bad_request(text)
    reason = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 422: "Invalid"}.get(status, "")
    return errors.APIError(status, reason, text, {"causes": [{"reason": "UnexpectedServerResponse", "message": text}]})


async def stream(ep: Endpoint, request: web.Request, kubelet: Kubelet, path_and_query: str, *,
                 checked: bool = False) -> web.StreamResponse:
    """A plain request to the kubelet, its answer streamed back (logs with follow keep flowing).

    `checked` (pods/log): a non-2xx answer becomes a Status, as kube's LocationStreamer checks it.
    """
    url = kubelet.url(path_and_query)
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
    headers.update(_credentials(ep.server))
    body = await request.read() if request.can_read_body else None
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
    try:
        upstream = await _session(ep.server).request(request.method, url, headers=headers, data=body,
                                                      timeout=timeout, allow_redirects=False)
    except (aiohttp.ClientConnectorError, OSError, asyncio.TimeoutError) as exc:
        raise _dial_error(kubelet, exc, request.method, url) from None
    async with upstream:
        if checked and not 200 <= upstream.status <= 206:
            raise refusal_error(upstream.status, await upstream.content.read(_MAX_REFUSAL))
        response = web.StreamResponse(status=upstream.status)
        for name, value in upstream.headers.items():
            if name.lower() not in _HOP:
                response.headers.add(name, value)
        response.enable_chunked_encoding()
        await response.prepare(request)
        async for chunk in upstream.content.iter_any():
            await response.write(chunk)
        await response.write_eof()
        return response


async def relay_upgrade(ep: Endpoint, request: web.Request, kubelet: Kubelet,
                        path_and_query: str) -> web.StreamResponse:
    """The client's WebSocket joined to one opened to the kubelet with the same subprotocols."""
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    try:
        answer = await upstream_websocket.open_upgrade(kubelet.host, kubelet.port, path_and_query, offered,
                                                       _credentials(ep.server), _tls())
    except (OSError, asyncio.TimeoutError) as exc:
        raise _dial_error(kubelet, exc) from None
    except upstream_websocket.HandshakeError as exc:
        raise errors.APIError(500, "", f"error proxying to the kubelet: {exc}") from None
    if isinstance(answer, upstream_websocket.Refusal):
        # The kubelet's own answer, as kube's upgrade-aware proxy copies it (status, type, text).
        return web.Response(status=answer.status, body=answer.body, headers={"Content-Type": answer.content_type})
    ws = web.WebSocketResponse(protocols=(answer.protocol,) if answer.protocol else (), max_msg_size=0,
                               autoping=True)
    await ws.prepare(request)
    down = asyncio.create_task(_kubelet_to_client(answer, ws))
    try:
        async for msg in ws:
            if msg.type == WSMsgType.BINARY:
                await answer.send(upstream_websocket.BINARY, msg.data)
            elif msg.type == WSMsgType.TEXT:
                await answer.send(upstream_websocket.TEXT, msg.data.encode())
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        if not down.done():
            # The client went first: the kubelet hears a close, then the relay ends.
            await answer.close()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(down, 5)
        await answer.close()
    return ws


async def _kubelet_to_client(upstream: upstream_websocket.Upstream, ws: web.WebSocketResponse) -> None:
    code = 1000
    try:
        while True:
            opcode, payload = await upstream.receive()
            if opcode == upstream_websocket.CLOSE:
                code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1000
                break
            if opcode == upstream_websocket.TEXT:
                await ws.send_str(payload.decode(errors="replace"))
            else:
                await ws.send_bytes(payload)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        await upstream.close()
        if not ws.closed:
            await ws.close(code=code)
