"""SPDY/3.1 framing, the server half, as kubectl's port-forward tunnel speaks it (moby/spdystream).

`Framer.feed(bytes)` yields parsed frames (SYN_STREAM, RST_STREAM, PING, GOAWAY, DATA, and the
ones we only skip: SETTINGS, HEADERS, WINDOW_UPDATE); `syn_reply`, `data`, `rst_stream`, `ping` and
`goaway` build frames to send. Header blocks are zlib streams, one per direction for the whole
connection, primed with the SPDY/3 dictionary below (draft 3, §2.6.10.1). spdystream does no flow
control, so no WINDOW_UPDATE is ever needed. Used by `portforward_spdy.py`.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
# RST_STREAM status codes.
PROTOCOL_ERROR, INVALID_STREAM, REFUSED_STREAM, CANCEL, INTERNAL_ERROR = 1, 2, 3, 5, 6

# The SPDY/3 header dictionary: header names and values, each with a 4-byte length, then literal text.
_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding accept-language accept-ranges "
    "age allow authorization cache-control connection content-base content-encoding content-language "
    "content-length content-location content-md5 content-range content-type date etag expect expires from "
    "host if-match if-modified-since if-none-match if-range if-unmodified-since last-modified location "
    "max-forwards pragma proxy-authenticate proxy-authorization range referer retry-after server te trailer "
    "transfer-encoding upgrade user-agent vary via warning www-authenticate method get status"
).split() + ["200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie", "keep-alive", "origin"]
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
DICTIONARY = b"".join(struct.pack("!I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()


class ProtocolError(Exception):
    pass


@dataclass(frozen=True)
class Frame:
    kind: int  # a control frame type, or 0 for DATA
    stream_id: int = 0
    flags: int = 0
    headers: dict[str, list[str]] = field(default_factory=dict)
    data: bytes = b""
    status: int = 0  # RST_STREAM and GOAWAY
    ping_id: int = 0

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


DATA = 0


class Framer:
    """One connection's framing state: the buffered input and both header compression contexts."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS, 9, zlib.Z_DEFAULT_STRATEGY, DICTIONARY)

    def feed(self, data: bytes) -> list[Frame]:
        """Every whole frame the bytes so far complete; a partial one waits for more."""
        self._buffer += data
        frames = []
        while len(self._buffer) >= 8:
            length = int.from_bytes(self._buffer[5:8], "big")
            if len(self._buffer) < 8 + length:
                break
            head, body = bytes(self._buffer[:8]), bytes(self._buffer[8:8 + length])
            del self._buffer[:8 + length]
            frames.append(self._parse(head, body))
        return frames

    def _parse(self, head: bytes, body: bytes) -> Frame:
        flags = head[4]
        if not head[0] & 0x80:
            return Frame(DATA, int.from_bytes(head[:4], "big") & 0x7FFFFFFF, flags, data=body)
        version, kind = struct.unpack("!HH", head[:4])
        if version & 0x7FFF != VERSION:
            raise ProtocolError(f"unsupported SPDY version {version & 0x7FFF}")
        if kind == SYN_STREAM:
            stream_id = int.from_bytes(body[:4], "big") & 0x7FFFFFFF
            return Frame(kind, stream_id, flags, headers=self._headers(body[10:]))
        if kind in (SYN_REPLY, HEADERS):
            return Frame(kind, int.from_bytes(body[:4], "big") & 0x7FFFFFFF, flags, headers=self._headers(body[4:]))
        if kind == RST_STREAM:
            stream_id, status = struct.unpack("!II", body[:8])
            return Frame(kind, stream_id & 0x7FFFFFFF, flags, status=status)
        if kind == PING:
            return Frame(kind, flags=flags, ping_id=struct.unpack("!I", body[:4])[0])
        if kind == GOAWAY:
            last, status = struct.unpack("!II", body[:8])
            return Frame(kind, last & 0x7FFFFFFF, flags, status=status)
        return Frame(kind, flags=flags, data=body)  # SETTINGS, WINDOW_UPDATE, unknown: nothing to do

    def _headers(self, block: bytes) -> dict[str, list[str]]:
        try:
            raw = self._inflate.decompress(block)
        except zlib.error as exc:
            raise ProtocolError(f"bad header block: {exc}") from None
        count = struct.unpack("!I", raw[:4])[0]
        offset, headers = 4, {}
        for _ in range(count):
            size = struct.unpack("!I", raw[offset:offset + 4])[0]
            name = raw[offset + 4:offset + 4 + size].decode("latin-1")
            offset += 4 + size
            size = struct.unpack("!I", raw[offset:offset + 4])[0]
            value = raw[offset + 4:offset + 4 + size].decode("latin-1")
            offset += 4 + size
            headers[name.lower()] = value.split("\x00")
        return headers

    def _header_block(self, headers: dict[str, list[str]]) -> bytes:
        raw = struct.pack("!I", len(headers))
        for name, values in headers.items():
            joined = "\x00".join(values).encode("latin-1")
            encoded = name.lower().encode("latin-1")
            raw += struct.pack("!I", len(encoded)) + encoded + struct.pack("!I", len(joined)) + joined
        return self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)

    def syn_reply(self, stream_id: int, headers: dict[str, list[str]] | None = None, fin: bool = False) -> bytes:
        return _control(SYN_REPLY, FLAG_FIN if fin else 0,
                        struct.pack("!I", stream_id) + self._header_block(headers or {}))


def _control(kind: int, flags: int, body: bytes) -> bytes:
    return struct.pack("!HHB", 0x8000 | VERSION, kind, flags) + len(body).to_bytes(3, "big") + body


def data(stream_id: int, payload: bytes, fin: bool = False) -> bytes:
    head = struct.pack("!IB", stream_id & 0x7FFFFFFF, FLAG_FIN if fin else 0)
    return head + len(payload).to_bytes(3, "big") + payload


def rst_stream(stream_id: int, status: int) -> bytes:
    return _control(RST_STREAM, 0, struct.pack("!II", stream_id, status))


def ping(ping_id: int) -> bytes:
    return _control(PING, 0, struct.pack("!I", ping_id))


def goaway(last_stream_id: int, status: int = 0) -> bytes:
    return _control(GOAWAY, 0, struct.pack("!II", last_stream_id, status))
