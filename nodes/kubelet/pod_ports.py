"""What a simulated pod answers on a TCP port, for port-forward (`served_view.ServedPod.connect`).

A running container listens on the ports its spec names (`ports[].containerPort`, and the numeric
ports of its tcpSocket/httpGet probes), on port numbers given as arguments of a long-running
command (`python -u port-server.py 1234 1235`: a server started with its ports), and, for a web
server image (nginx, httpd), on port 80. A web server or an httpGet-probed port answers HTTP/1.x
with its welcome page; every other port echoes the bytes it gets back, as a test server does.
Nothing listens on any other port: `connect` gets None and the endpoint reports a refused connection.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from nodes.runtime import behaviour

_WEB_IMAGES = {"nginx": "nginx", "httpd": "Apache", "caddy": "Caddy"}
_HTTP_END = b"\r\n\r\n"
_MAX_REQUEST = 64 * 1024


def _image_name(image: str) -> str:
    last = image.rsplit("/", 1)[-1]
    return last.split("@", 1)[0].split(":", 1)[0]


def _probe_ports(container: dict[str, Any]) -> tuple[set[int], set[int]]:
    tcp: set[int] = set()
    http: set[int] = set()
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = container.get(kind) or {}
        for handler, into in (("tcpSocket", tcp), ("httpGet", http)):
            port = (probe.get(handler) or {}).get("port")
            if isinstance(port, int):
                into.add(port)
    return tcp, http


def _argument_ports(container: dict[str, Any], annotations: dict[str, Any] | None) -> set[int]:
    """Port numbers among a server's arguments; a command that ends (sleep 80) listens on nothing."""
    steps = behaviour.plan(container, annotations)
    if not steps or steps[-1].kind != "forever" or steps[-1].rule != "anything-else":
        return set()
    words = [*(container.get("command") or []), *(container.get("args") or [])]
    return {int(w) for w in words if isinstance(w, str) and w.isdigit() and 0 < int(w) < 65536}


def listeners(pod: dict[str, Any], running: Callable[[str], bool]) -> dict[int, str]:
    """Port → "http" or "echo", for the containers that run now."""
    found: dict[int, str] = {}
    annotations = (pod.get("metadata") or {}).get("annotations")
    spec = pod.get("spec") or {}
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if not running(container.get("name", "")):
            continue
        web = _image_name(container.get("image") or "") in _WEB_IMAGES
        tcp, http = _probe_ports(container)
        declared = {p.get("containerPort") for p in container.get("ports") or []
                    if (p.get("protocol") or "TCP") == "TCP" and isinstance(p.get("containerPort"), int)}
        for port in _argument_ports(container, annotations) | tcp | declared:
            found.setdefault(port, "http" if web else "echo")
        for port in http | ({80} if web else set()):
            found[port] = "http"
    return found


def server_name(pod: dict[str, Any]) -> str:
    for container in (pod.get("spec") or {}).get("containers") or []:
        name = _image_name(container.get("image") or "")
        if name in _WEB_IMAGES:
            return _WEB_IMAGES[name]
    return "haru"


class EchoConnection:
    """The pod side sends back every byte it gets; after the client's half-close it hangs up."""

    def __init__(self) -> None:
        self._out: asyncio.Queue[bytes] = asyncio.Queue()

    async def read(self) -> bytes:
        return await self._out.get()

    async def write(self, data: bytes) -> None:
        if data:
            self._out.put_nowait(data)

    async def close_write(self) -> None:
        self._out.put_nowait(b"")

    async def close(self) -> None:
        self._out.put_nowait(b"")


class HttpConnection:
    """One HTTP/1.x exchange: read the request head, answer it, close (Connection: close)."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._request = b""
        self._answered = False
        self._out: asyncio.Queue[bytes] = asyncio.Queue()

    async def read(self) -> bytes:
        return await self._out.get()

    async def write(self, data: bytes) -> None:
        if self._answered:
            return
        self._request += data
        if _HTTP_END in self._request or len(self._request) > _MAX_REQUEST:
            self._answer()

    async def close_write(self) -> None:
        if not self._answered:
            self._answer()

    async def close(self) -> None:
        self._out.put_nowait(b"")

    def _answer(self) -> None:
        self._answered = True
        line = self._request.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(line) != 3 or not line[2].startswith("HTTP/"):
            status, body = "400 Bad Request", _page("400 Bad Request", "400 Bad Request")
        elif line[0] not in ("GET", "HEAD"):
            status, body = "405 Not Allowed", _page("405 Not Allowed", "405 Not Allowed")
        elif line[1] not in ("/", "/index.html"):
            status, body = "404 Not Found", _page("404 Not Found", "404 Not Found")
        else:
            status, body = "200 OK", _welcome(self.server)
        head = (f"HTTP/1.1 {status}\r\nServer: {self.server}\r\nContent-Type: text/html\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        self._out.put_nowait(head if line[:1] == ["HEAD"] else head + body)
        self._out.put_nowait(b"")


def _page(title: str, heading: str, text: str = "") -> bytes:
    return (f"<!DOCTYPE html>\n<html>\n<head>\n<title>{title}</title>\n</head>\n<body>\n<h1>{heading}</h1>\n"
            f"{text}</body>\n</html>\n").encode()


def _welcome(server: str) -> bytes:
    return _page(f"Welcome to {server}!", f"Welcome to {server}!",
                 f"<p>The {server} web server in this simulated pod is answering.</p>\n")


def connection(kind: str, pod: dict[str, Any]) -> EchoConnection | HttpConnection:
    return HttpConnection(server_name(pod)) if kind == "http" else EchoConnection()
