"""The API server's side of a WebSocket to a kubelet: the handshake and RFC 6455 frames, by hand.

`open_upgrade()` sends the client's request (path, query, the offered subprotocols) to the kubelet
over TLS and reads its answer. A 101 gives an `Upstream` that reads and writes whole messages (client
frames masked, continuations joined, pings answered); any other answer is returned with its body,
because kube's upgrade-aware proxy passes the kubelet's refusal (`container not found ("c")`) back
to the client, and aiohttp's own client drops that body. Used by `kubelet.py`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import ssl
import struct
from dataclasses import dataclass

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_MAX_HEAD = 64 * 1024


class HandshakeError(Exception):
    pass


@dataclass(frozen=True)
class Refusal:
    """A non-101 answer to the upgrade: its status, content type and body."""

    status: int
    content_type: str
    body: bytes


class Upstream:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, protocol: str) -> None:
        self.reader, self.writer, self.protocol = reader, writer, protocol
        self.closed = False

    async def send(self, opcode: int, payload: bytes) -> None:
        """One masked frame (a client must mask, RFC 6455 §5.3)."""
        mask = os.urandom(4)
        head = bytes((0x80 | opcode,))
        size = len(payload)
        if size < 126:
            head += bytes((0x80 | size,))
        elif size < 1 << 16:
            head += bytes((0x80 | 126,)) + struct.pack("!H", size)
        else:
            head += bytes((0x80 | 127,)) + struct.pack("!Q", size)
        self.writer.write(head + mask + _mask(payload, mask))
        await self.writer.drain()

    async def receive(self) -> tuple[int, bytes]:
        """The next data message (TEXT or BINARY) or (CLOSE, payload); pings are answered here."""
        parts: list[bytes] = []
        first = 0
        while True:
            fin, opcode, payload = await self._frame()
            if opcode == PING:
                await self.send(PONG, payload)
                continue
            if opcode == PONG:
                continue
            if opcode == CLOSE:
                return CLOSE, payload
            if opcode != CONTINUATION:
                first = opcode
            parts.append(payload)
            if fin:
                return first, b"".join(parts)

    async def _frame(self) -> tuple[bool, int, bytes]:
        head = await self.reader.readexactly(2)
        fin, opcode = bool(head[0] & 0x80), head[0] & 0x0F
        masked, size = bool(head[1] & 0x80), head[1] & 0x7F
        if size == 126:
            size = struct.unpack("!H", await self.reader.readexactly(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", await self.reader.readexactly(8))[0]
        mask = await self.reader.readexactly(4) if masked else b""
        payload = await self.reader.readexactly(size)
        return fin, opcode, _mask(payload, mask) if masked else payload

    async def close(self, code: int = 1000) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            await self.send(CLOSE, struct.pack("!H", code))
        except (ConnectionError, RuntimeError):
            pass
        self.writer.close()


def _mask(payload: bytes, mask: bytes) -> bytes:
    # XOR with the repeated 4-byte key, as one big integer operation instead of a byte loop.
    key = (mask * (len(payload) // 4 + 1))[: len(payload)]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(len(payload), "big")


async def open_upgrade(host: str, port: int, path_and_query: str, protocols: list[str],
                       headers: dict[str, str], context: ssl.SSLContext | None,
                       timeout: float = 10.0) -> Upstream | Refusal:
    """Connect and upgrade; `timeout` bounds the dial and the handshake (a kubelet that never answers)."""
    return await asyncio.wait_for(_open_upgrade(host, port, path_and_query, protocols, headers, context), timeout)


async def _open_upgrade(host: str, port: int, path_and_query: str, protocols: list[str],
                        headers: dict[str, str], context: ssl.SSLContext | None) -> Upstream | Refusal:
    reader, writer = await asyncio.open_connection(host, port, ssl=context,
                                                   server_hostname=host if context else None)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path_and_query} HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket",
             "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    if protocols:
        lines.append(f"Sec-WebSocket-Protocol: {', '.join(protocols)}")
    lines += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
        writer.close()
        raise HandshakeError(f"the kubelet closed the connection during the upgrade: {exc}") from None
    status, answer = _parse_head(head)
    if status != 101:
        body = await _read_body(reader, answer)
        writer.close()
        return Refusal(status, answer.get("content-type", "text/plain"), body)
    expected = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
    if answer.get("sec-websocket-accept") != expected:
        writer.close()
        raise HandshakeError("the kubelet answered the upgrade with a wrong Sec-WebSocket-Accept")
    return Upstream(reader, writer, answer.get("sec-websocket-protocol", ""))


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise HandshakeError(f"malformed status line from the kubelet: {lines[0]!r}")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while len(body) < _MAX_HEAD:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            body += await reader.readexactly(size)
            await reader.readline()
        return body
    length = int(headers.get("content-length", "0") or 0)
    return await reader.readexactly(min(length, _MAX_HEAD)) if length else b""
