"""The API server's hand-made WebSocket client towards kubelets, against aiohttp's server: the
subprotocol it picked, 16- and 64-bit lengths both ways (client frames masked), pings answered
without surfacing, the close code, and a refusal read whole with its body.
"""

from __future__ import annotations

from typing import AsyncIterator

import pytest_asyncio
from aiohttp import WSMsgType, web

from apiserver.subresources import upstream_websocket as uws


async def _echo(request: web.Request) -> web.StreamResponse:
    if request.query.get("refuse"):
        return web.Response(status=500, text='container not found ("c")')
    ws = web.WebSocketResponse(protocols=("v4.channel.k8s.io",), max_msg_size=0)
    await ws.prepare(request)
    await ws.ping(b"are you there")
    await ws.send_bytes(b"\x01" + b"x" * 70_000)
    await ws.send_str("text")
    async for msg in ws:
        if msg.type == WSMsgType.BINARY:
            await ws.send_bytes(msg.data[::-1])
            if msg.data == b"done":
                await ws.close(code=4000)
    return ws


@pytest_asyncio.fixture
async def server() -> AsyncIterator[int]:
    app = web.Application()
    app.router.add_get("/ws", _echo)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


async def test_messages_both_ways_with_long_lengths_pings_and_the_close_code(server: int) -> None:
    upstream = await uws.open_upgrade("127.0.0.1", server, "/ws", ["v5.channel.k8s.io", "v4.channel.k8s.io"], {}, None)
    assert isinstance(upstream, uws.Upstream)
    assert upstream.protocol == "v4.channel.k8s.io"

    assert await upstream.receive() == (uws.BINARY, b"\x01" + b"x" * 70_000)  # the ping was answered on the way
    assert await upstream.receive() == (uws.TEXT, b"text")
    big = bytes(range(256)) * 300
    await upstream.send(uws.BINARY, big)
    assert await upstream.receive() == (uws.BINARY, big[::-1])
    await upstream.send(uws.BINARY, b"done")
    assert await upstream.receive() == (uws.BINARY, b"enod")
    opcode, payload = await upstream.receive()
    assert (opcode, int.from_bytes(payload[:2], "big")) == (uws.CLOSE, 4000)
    await upstream.close()


async def test_a_refused_upgrade_comes_back_with_its_body(server: int) -> None:
    answer = await uws.open_upgrade("127.0.0.1", server, "/ws?refuse=1", [], {}, None)

    assert answer == uws.Refusal(500, "text/plain; charset=utf-8", b'container not found ("c")')
