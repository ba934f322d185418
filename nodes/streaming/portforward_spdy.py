"""`/portForward/{ns}/{pod}` for kubectl: SPDY/3.1 streams tunnelled in WebSocket binary messages.

kubectl 1.36 offers only `SPDY/3.1+portforward.k8s.io`: the messages' bytes are one SPDY session.
Per forwarded connection kubectl opens an error stream and a data stream (headers `streamtype`,
`port`, `requestid`); each gets a SYN_REPLY, and once both of a request are there the data stream is
relayed to the runtime's connection to that port, as the kubelet's httpstream handler does: an
"error forwarding port …" text on the error stream when it cannot, then both streams half-closed.
Pings are answered; GOAWAY or a closed WebSocket ends the session. Called by `server.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from aiohttp import WSMsgType, web

from nodes.runtime_view import PodView
from nodes.streaming import spdy
from nodes.streaming.portforward import Sender, forward_error, relay

log = logging.getLogger("haru.nodes.streaming")
PROTOCOL = "SPDY/3.1+portforward.k8s.io"
_CHUNK = 64 * 1024


@dataclass
class _Pair:
    error: int = 0
    data: int = 0
    port: str = ""


@dataclass
class _Session:
    ws: web.WebSocketResponse
    pod: PodView
    framer: spdy.Framer = field(default_factory=spdy.Framer)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    inboxes: dict[int, asyncio.Queue[bytes]] = field(default_factory=dict)
    pairs: dict[str, _Pair] = field(default_factory=dict)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    last_stream: int = 0

    async def send(self, frame: bytes) -> None:
        async with self.lock:  # frames must not interleave; the header compressor is shared too
            if not self.ws.closed:
                await self.ws.send_bytes(frame)

    async def run(self) -> None:
        try:
            async for msg in self.ws:
                if msg.type != WSMsgType.BINARY:
                    continue
                for frame in self.framer.feed(msg.data):
                    if not await self.handle(frame):
                        return
        except spdy.ProtocolError as exc:
            log.debug("port-forward session ended: %s", exc)
            await self.send(spdy.goaway(self.last_stream, 1))
        finally:
            for task in self.tasks:
                task.cancel()
            for inbox in self.inboxes.values():
                inbox.put_nowait(b"")

    async def handle(self, frame: spdy.Frame) -> bool:
        if frame.kind == spdy.SYN_STREAM:
            await self.open(frame)
        elif frame.kind == spdy.DATA:
            inbox = self.inboxes.get(frame.stream_id)
            if inbox is not None:
                if frame.data:
                    inbox.put_nowait(frame.data)
                if frame.fin:
                    inbox.put_nowait(b"")
        elif frame.kind == spdy.RST_STREAM:
            inbox = self.inboxes.get(frame.stream_id)
            if inbox is not None:
                inbox.put_nowait(b"")
        elif frame.kind == spdy.PING:
            await self.send(spdy.ping(frame.ping_id))
        elif frame.kind == spdy.GOAWAY:
            return False
        return True

    async def open(self, frame: spdy.Frame) -> None:
        self.last_stream = max(self.last_stream, frame.stream_id)
        async with self.lock:
            if not self.ws.closed:
                await self.ws.send_bytes(self.framer.syn_reply(frame.stream_id))
        kind = (frame.headers.get("streamtype") or [""])[0]
        request = (frame.headers.get("requestid") or [""])[0]
        if kind not in ("error", "data"):
            await self.send(spdy.rst_stream(frame.stream_id, spdy.PROTOCOL_ERROR))
            return
        pair = self.pairs.setdefault(request, _Pair())
        if kind == "error":
            pair.error = frame.stream_id
        else:
            pair.data = frame.stream_id
            pair.port = (frame.headers.get("port") or [""])[0]
            self.inboxes[frame.stream_id] = asyncio.Queue()
        if pair.error and pair.data:
            del self.pairs[request]
            task = asyncio.create_task(self.forward(pair))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def forward(self, pair: _Pair) -> None:
        inbox = self.inboxes[pair.data]
        try:
            port = int(pair.port)
            conn = await self.pod.connect(port)
        except ValueError:
            port, conn = 0, None
            reason = f'invalid port "{pair.port}"'
        except OSError as exc:
            port, conn, reason = int(pair.port), None, str(exc)
        else:
            reason = (f"failed to connect to localhost:{port} inside namespace of pod {self.pod.name}: "
                      "connection refused")
        try:
            if conn is None:
                await self.send(spdy.data(pair.error, forward_error(port, self.pod, reason).encode()))
            else:
                await relay(conn, inbox, self.write_data(pair.data))
        finally:
            # The error stream first, then the data stream, as the kubelet's deferred closes run.
            with contextlib.suppress(ConnectionResetError):
                await self.send(spdy.data(pair.error, b"", fin=True))
                await self.send(spdy.data(pair.data, b"", fin=True))
            self.inboxes.pop(pair.data, None)

    def write_data(self, stream_id: int) -> Sender:
        async def write(payload: bytes) -> None:
            for start in range(0, len(payload), _CHUNK):
                await self.send(spdy.data(stream_id, payload[start:start + _CHUNK]))
        return write


async def serve(request: web.Request, pod: PodView) -> web.StreamResponse:
    ws = web.WebSocketResponse(protocols=(PROTOCOL,), max_msg_size=0)
    await ws.prepare(request)
    await _Session(ws, pod).run()
    if not ws.closed:
        await ws.close()
    return ws


def offered(request: web.Request) -> bool:
    names = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
    return PROTOCOL in names
