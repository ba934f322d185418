"""The channel framing of Kubernetes' WebSocket subprotocols, as the kubelet's streaming server
speaks it (k8s.io/apimachinery `wsstream`).

Each message carries one channel: binary protocols prefix the payload with the channel byte;
base64 protocols send a text message whose first character is the channel digit and the rest is
the payload in base64. `v5.*` adds the close signal (channel 255 with the closed channel as payload);
`v4.*` and `v5.*` put a JSON Status on the error channel, the older ones plain text. Used by
`remotecommand.py` (exec/attach) and `portforward.py`; the API server only relays the messages.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from aiohttp import WSMsgType, web

STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
CLOSE = 255


@dataclass(frozen=True)
class Protocol:
    name: str
    binary: bool
    version: int  # 1 for the unversioned ones ("channel.k8s.io"), else 4 or 5

    @property
    def status_errors(self) -> bool:
        """v4+: the error channel carries a metav1.Status, not text."""
        return self.version >= 4

    @property
    def close_signal(self) -> bool:
        return self.version >= 5


# The ones the kubelet offers for exec and attach, in its order of preference.
REMOTE_COMMAND = (
    Protocol("v5.channel.k8s.io", True, 5), Protocol("v5.base64.channel.k8s.io", False, 5),
    Protocol("v4.channel.k8s.io", True, 4), Protocol("v4.base64.channel.k8s.io", False, 4),
    Protocol("channel.k8s.io", True, 1), Protocol("base64.channel.k8s.io", False, 1),
)
# Port forwarding has only the v4 pair (and the unnamed binary one), as the kubelet's websocket.go.
PORT_FORWARD = (Protocol("v4.channel.k8s.io", True, 4), Protocol("v4.base64.channel.k8s.io", False, 4))
# A client that names no protocol gets the plain binary framing (wsstream's "" entry).
DEFAULT = Protocol("", True, 1)


class FramingError(Exception):
    pass


def select(offered: str, supported: tuple[Protocol, ...]) -> Protocol | None:
    """The first protocol of the client's Sec-WebSocket-Protocol list that we speak."""
    names = [p.strip() for p in offered.split(",") if p.strip()]
    if not names:
        return DEFAULT
    by_name = {p.name: p for p in supported}
    for name in names:
        if name in by_name:
            return by_name[name]
    return None


def encode(protocol: Protocol, channel: int, payload: bytes) -> bytes | str:
    if protocol.binary:
        return bytes((channel,)) + payload
    return str(channel) + base64.b64encode(payload).decode()


def decode(protocol: Protocol, msg: web.WSMessage) -> tuple[int, bytes]:
    """(channel, payload) of one received message."""
    if protocol.binary:
        # x/net/websocket reads text frames into []byte too: the Python client sends str stdin as text.
        data: bytes = msg.data.encode() if msg.type == WSMsgType.TEXT else msg.data
        if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT) or not data:
            raise FramingError("expected a binary message with a channel byte")
        return data[0], data[1:]
    if msg.type != WSMsgType.TEXT or not msg.data:
        raise FramingError("expected a text message with a channel digit")
    text: str = msg.data
    if not text[0].isdigit():
        raise FramingError(f"invalid channel {text[0]!r}")
    try:
        return int(text[0]), base64.b64decode(text[1:], validate=True)
    except binascii.Error as exc:
        raise FramingError(f"invalid base64 payload: {exc}") from None


async def send(ws: web.WebSocketResponse, protocol: Protocol, channel: int, payload: bytes) -> None:
    frame = encode(protocol, channel, payload)
    if isinstance(frame, bytes):
        await ws.send_bytes(frame)
    else:
        await ws.send_str(frame)
