"""`/portForward/{ns}/{pod}` over a WebSocket: the kubelet's channel-pair port forwarding.

The ports come as `port=` query values (the API server writes one per port). Port i gets a data
channel 2i and an error channel 2i+1; the kubelet opens each with a frame holding the port as
two little-endian bytes, then relays the data channel to a connection the runtime opens to that
port in the pod, and writes "error forwarding port …" on the error channel when it cannot. The
session ends when every port's connection has ended, or when the client leaves (the Python
client's `portforward` closes it once its local sockets are closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from typing import Awaitable, Callable

from aiohttp import WSMsgType, web
from multidict import MultiMapping

from nodes.runtime_view import Connection, PodView
from nodes.streaming import channels

log = logging.getLogger("haru.nodes.streaming")
Sender = Callable[[bytes], Awaitable[None]]


class PortsError(ValueError):
    pass


def ports(query: MultiMapping[str]) -> list[int]:
    raw = query.getall("port", [])
    if not raw:
        raise PortsError('query parameter "port" is required')
    found = []
    for value in raw:
        for part in value.split(","):
            try:
                port = int(part)
            except ValueError:
                raise PortsError(f'unable to parse "{part}" as a port: strconv.ParseUint: parsing "{part}": '
                                 "invalid syntax") from None
            if not 0 < port < 65536:
                raise PortsError(f"port {port} must be > 0")
            found.append(port)
    return found


def forward_error(port: int, pod: PodView, reason: str) -> str:
    return f"error forwarding port {port} to pod {pod.name}, uid {pod.uid}: {reason}"


async def serve(request: web.Request, pod: PodView, wanted: list[int]) -> web.StreamResponse:
    protocol = channels.select(request.headers.get("Sec-WebSocket-Protocol", ""), channels.PORT_FORWARD)
    if protocol is None:
        return web.Response(status=400, text="requested protocol(s) are not supported")
    ws = web.WebSocketResponse(protocols=(protocol.name,) if protocol.name else (), max_msg_size=0)
    await ws.prepare(request)
    for index, port in enumerate(wanted):
        prefix = struct.pack("<H", port)
        await channels.send(ws, protocol, 2 * index, prefix)
        await channels.send(ws, protocol, 2 * index + 1, prefix)
    inboxes: list[asyncio.Queue[bytes]] = [asyncio.Queue() for _ in wanted]
    pumps = [asyncio.create_task(_forward(ws, protocol, pod, index, port, inboxes[index]))
             for index, port in enumerate(wanted)]
    reader = asyncio.create_task(_read(ws, protocol, inboxes))
    pumping = asyncio.gather(*pumps)
    try:
        # Every port done, or the client gone (its connections are then cut, not waited for).
        await asyncio.wait({pumping, reader}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        reader.cancel()
        pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await pumping
    if not ws.closed:
        await ws.close()
    return ws


async def _read(ws: web.WebSocketResponse, protocol: channels.Protocol, inboxes: list[asyncio.Queue[bytes]]) -> None:
    try:
        async for msg in ws:
            if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT):
                continue
            try:
                channel, payload = channels.decode(protocol, msg)
            except channels.FramingError:
                continue
            # Only data channels carry client bytes; an error channel is the kubelet's to write.
            if channel % 2 == 0 and channel // 2 < len(inboxes) and payload:
                inboxes[channel // 2].put_nowait(payload)
    finally:
        for inbox in inboxes:
            inbox.put_nowait(b"")


async def _forward(ws: web.WebSocketResponse, protocol: channels.Protocol, pod: PodView, index: int, port: int,
                   inbox: asyncio.Queue[bytes]) -> None:
    try:
        conn = await pod.connect(port)
    except OSError as exc:
        conn, reason = None, str(exc)
    else:
        reason = f"failed to connect to localhost:{port} inside namespace of pod {pod.name}: connection refused"
    if conn is None:
        with contextlib.suppress(ConnectionResetError):
            await channels.send(ws, protocol, 2 * index + 1, forward_error(port, pod, reason).encode())
        return
    await relay(conn, inbox, lambda data: channels.send(ws, protocol, 2 * index, data))


async def relay(conn: Connection, inbox: asyncio.Queue[bytes], send: Sender) -> None:
    """Client bytes (from inbox, b"" at its end) to conn, conn's bytes to send, until conn ends."""

    async def upstream() -> None:
        while data := await inbox.get():
            await conn.write(data)
        await conn.close_write()

    pusher = asyncio.create_task(upstream())
    try:
        while data := await conn.read():
            with contextlib.suppress(ConnectionResetError):
                await send(data)
    finally:
        pusher.cancel()
        await conn.close()
