"""exec, attach, containerLogs and portForward on the hollow kubelet's endpoint, spoken to with
aiohttp's WebSocket client at the frame level: the subprotocols (v5, v4, base64, the unversioned
one), the announcing empty frame, the exit code in the error channel's Status, stdin and the v5
close signal, resize, logs with tail/timestamps/since/limit/follow, and the port-forward channel pairs.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import aiohttp
import pytest

from nodes.runtime_view import LogLine

from tests.nodes.endpoint_fixture import Kubelet

EXEC = "/exec/default/web/c"


async def _session_frames(ws: aiohttp.ClientWebSocketResponse) -> list[tuple[int, bytes]]:
    frames = []
    async for msg in ws:
        if msg.type == aiohttp.WSMsgType.BINARY:
            frames.append((msg.data[0], msg.data[1:]))
        elif msg.type == aiohttp.WSMsgType.TEXT:
            frames.append((int(msg.data[0]), base64.b64decode(msg.data[1:])))
    return frames


def _channel(frames: list[tuple[int, bytes]], channel: int) -> bytes:
    return b"".join(payload for ch, payload in frames if ch == channel)


async def _exec(kubelet: Kubelet, query: str, protocol: str, send: list[bytes] = ()) -> tuple[str, list[Any]]:
    async with kubelet.session.ws_connect(kubelet.url(f"{EXEC}?{query}"), protocols=(protocol,)) as ws:
        for frame in send:
            await ws.send_bytes(frame)
        return ws.protocol or "", await _session_frames(ws)


async def test_exec_over_v5_announces_the_stream_then_writes_stdout_and_success(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])

    protocol, frames = await _exec(kubelet, "command=echo&command=hi&output=1&error=1", "v5.channel.k8s.io")

    assert protocol == "v5.channel.k8s.io"
    assert frames[0] == (1, b"")  # the empty frame on the lowest writable channel comes first
    assert _channel(frames, 1) == b"hi\n"
    assert json.loads(_channel(frames, 3)) == {"metadata": {}, "status": "Success"}


async def test_a_non_zero_exit_comes_as_a_status_with_the_code_as_a_cause_on_v4(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])

    _, frames = await _exec(kubelet, "command=exit&command=3&output=1&error=1", "v4.channel.k8s.io")

    status = json.loads(_channel(frames, 3))
    assert status["status"] == "Failure" and status["reason"] == "NonZeroExitCode"
    assert status["details"] == {"causes": [{"reason": "ExitCode", "message": "3"}]}
    assert status["message"] == ("command terminated with non-zero exit code: error executing command "
                                 "[exit 3], exit code 3")


async def test_the_unversioned_protocol_writes_the_bare_message_on_the_error_channel(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])

    _, frames = await _exec(kubelet, "command=exit&command=2&output=1", "channel.k8s.io")

    assert _channel(frames, 3) == (b"command terminated with non-zero exit code: error executing command [exit 2], "
                                   b"exit code 2")


async def test_stderr_is_its_own_channel_and_an_unknown_command_exits_127(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])

    _, frames = await _exec(kubelet, "command=nope&output=1&error=1", "v5.channel.k8s.io")

    assert _channel(frames, 2) == b"sh: nope: not found\n"
    assert json.loads(_channel(frames, 3))["details"]["causes"][0]["message"] == "127"


async def test_stdin_is_fed_to_the_command_until_the_v5_close_signal(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])

    _, frames = await _exec(kubelet, "command=cat&input=1&output=1", "v5.channel.k8s.io",
                            send=[b"\x00hello ", b"\x00world", b"\xff\x00"])

    assert _channel(frames, 1) == b"hello world"
    assert json.loads(_channel(frames, 3))["status"] == "Success"


async def test_base64_protocol_frames_are_text_with_a_channel_digit(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])
    url = kubelet.url(f"{EXEC}?command=cat&input=1&output=1")
    async with kubelet.session.ws_connect(url, protocols=("v5.base64.channel.k8s.io",)) as ws:
        await ws.send_str("0" + base64.b64encode(b"abc").decode())
        await ws.send_str("\xff")  # not a channel digit: dropped, the session goes on
        await ws.send_bytes(b"\xff\x00")  # a binary frame on a text protocol: dropped too
        await ws.send_str("0")  # an empty stdin frame is not the end of stdin
        await ws.send_str("0" + base64.b64encode(b"def").decode())
        first = await ws.receive()
        assert first.type == aiohttp.WSMsgType.TEXT and first.data == "1"  # the announcing empty frame
        echoed = b""
        while echoed != b"abcdef":
            msg = await ws.receive()
            assert msg.data[0] == "1"
            echoed += base64.b64decode(msg.data[1:])


async def test_a_tty_folds_stderr_away_and_resize_reaches_the_command(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])

    _, frames = await _exec(kubelet, "command=size&output=1&error=1&tty=1", "v5.channel.k8s.io",
                            send=[b"\x04" + json.dumps({"Width": 132, "Height": 43}).encode()])

    assert _channel(frames, 1) == b"43 132\n"
    assert all(channel != 2 for channel, _ in frames)


async def test_exec_refusals_are_the_kubelets_plain_text(kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["c"])
    pod.by_name["c"].stop()

    assert await kubelet.get(f"{EXEC}?command=true&output=1") == (500, 'container not found ("c")')
    assert await kubelet.get("/exec/default/web/other?command=true&output=1") == (500, 'container not found ("other")')
    assert await kubelet.get("/exec/default/gone/c?command=true&output=1") == (404, "pod does not exist")
    assert await kubelet.get(f"{EXEC}?command=true") == (400, "you must specify at least 1 of stdin, stdout, stderr")
    pod.by_name["c"].is_running = True
    assert await kubelet.get(f"{EXEC}?command=true&output=1") == (
        400, "unable to upgrade: missing upgrade headers in request")


async def test_attach_joins_the_main_process_and_ends_with_it(kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["c"])
    url = kubelet.url("/attach/default/web/c?input=1&output=1")
    async with kubelet.session.ws_connect(url, protocols=("v5.channel.k8s.io",)) as ws:
        await ws.send_bytes(b"\x00ping")
        seen = b""
        while b"ping" not in seen:
            msg = await ws.receive()
            seen += msg.data[1:]
        assert seen == b"attached\nping"
        pod.by_name["c"].stop()
        frames = await _session_frames(ws)
    assert json.loads(_channel(frames, 3)) == {"metadata": {}, "status": "Success"}


# -- logs --------------------------------------------------------------------------------------
LOGS = "/containerLogs/default/web/c"


def _printed(kubelet: Kubelet, *texts: str) -> Any:
    pod = kubelet.node.add("web", ["c"])
    for text in texts:
        pod.by_name["c"].print(text)
    return pod.by_name["c"]


@pytest.mark.parametrize(("query", "body"), [
    ("", "one\ntwo\nthree\n"),
    ("?tailLines=2", "two\nthree\n"),
    ("?tailLines=0", ""),
    ("?tail=1", "three\n"),  # the kubelet's old spelling
    ("?limitBytes=6", "one\ntw"),
    ("?sinceTime=2026-12-01T12:00:01Z", "two\nthree\n"),
    ("?timestamps=true&tailLines=1", "2026-12-01T12:00:02.000000000Z three\n"),
])
async def test_logs_apply_tail_since_limit_and_timestamps(kubelet: Kubelet, query: str, body: str) -> None:
    _printed(kubelet, "one", "two", "three")

    assert await kubelet.get(LOGS + query) == (200, body)


async def test_logs_follow_streams_new_lines_until_the_container_ends(kubelet: Kubelet) -> None:
    container = _printed(kubelet, "first")
    async with kubelet.session.get(kubelet.url(LOGS + "?follow=true")) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain")
        assert await resp.content.readline() == b"first\n"
        container.print("second")
        assert await resp.content.readline() == b"second\n"
        container.print("last")
        container.stop()
        assert await resp.content.read() == b"last\n"


async def test_previous_logs_come_from_the_terminated_run(kubelet: Kubelet) -> None:
    container = _printed(kubelet, "now")
    pod = kubelet.node.pod("default", "web")
    assert pod is not None
    assert await kubelet.get(LOGS + "?previous=true") == (
        400, 'previous terminated container "c" in pod "web" not found')
    container.previous_lines = [LogLine(container.lines[0].time, "stdout", "before")]
    pod.status["containerStatuses"][0]["lastState"] = {"terminated": {"exitCode": 1, "containerID": "containerd://0"}}

    assert await kubelet.get(LOGS + "?previous=true") == (200, "before\n")


@pytest.mark.parametrize(("state", "message"), [
    ({"waiting": {"reason": "ContainerCreating"}}, 'container "c" in pod "web" is waiting to start: ContainerCreating'),
    ({"waiting": {"reason": "ImagePullBackOff"}},
     'container "c" in pod "web" is waiting to start: trying and failing to pull image'),
])
async def test_logs_of_a_container_that_never_ran_say_why(kubelet: Kubelet, state: dict[str, Any], message: str) -> None:
    pod = kubelet.node.add("web", ["c"])
    pod.status["containerStatuses"][0]["state"] = state

    assert await kubelet.get(LOGS) == (400, message)


async def test_logs_refuse_bad_queries_and_unknown_containers(kubelet: Kubelet) -> None:
    _printed(kubelet, "x")

    assert await kubelet.get(LOGS + "?tailLines=x") == (400, '{"message": "Unable to decode query."}')
    assert await kubelet.get(LOGS + "?tailLines=-1") == (422, '{"message": "Invalid request."}')
    assert await kubelet.get(LOGS + "?sinceSeconds=5&sinceTime=2026-12-01T12:00:00Z") == (
        422, '{"message": "Invalid request."}')
    assert await kubelet.get("/containerLogs/default/web/d") == (404, 'container "d" not found in pod "web"')
    assert await kubelet.get("/containerLogs/default/nope/c") == (404, 'pod "nope" does not exist')


# -- port-forward ------------------------------------------------------------------------------
async def test_port_forward_opens_channel_pairs_with_the_port_prefix_and_relays(kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["c"])
    pod.listening.add(8080)
    url = kubelet.url("/portForward/default/web?port=8080&port=9090")
    async with kubelet.session.ws_connect(url, protocols=("v4.channel.k8s.io",)) as ws:
        opening = [(await ws.receive()).data for _ in range(4)]
        assert opening == [b"\x00\x90\x1f", b"\x01\x90\x1f", b"\x02\x82\x23", b"\x03\x82\x23"]
        refused = await ws.receive()
        assert refused.data[0] == 3 and refused.data[1:].decode() == (
            "error forwarding port 9090 to pod web, uid uid-web: failed to connect to localhost:9090 inside "
            "namespace of pod web: connection refused")
        await ws.send_bytes(b"\x00hello")
        assert (await ws.receive()).data == b"\x00HELLO"
        await ws.send_bytes(b"\x00bye")
        assert (await ws.receive()).data == b"\x00BYE"
        # Every port's connection ended: the kubelet closes the session.
        assert (await ws.receive()).type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)


async def test_port_forward_needs_ports(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])

    assert await kubelet.get("/portForward/default/web") == (400, 'query parameter "port" is required')
    assert await kubelet.get("/portForward/default/web?port=0") == (400, "port 0 must be > 0")
    assert await kubelet.get("/portForward/default/other?port=80") == (404, "pod does not exist")



async def test_port_forward_refuses_the_unversioned_channel_protocol(kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])
    url = kubelet.url("/portForward/default/web?port=80")

    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await kubelet.session.ws_connect(url, protocols=("channel.k8s.io",))
    assert refused.value.status == 400


async def test_attach_takes_the_tty_from_the_container_spec(kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["c"])
    pod.spec["containers"][0]["tty"] = True
    seen: list[tuple[bool, bool]] = []

    async def attach(streams: Any) -> int:
        seen.append((streams.tty, streams.stderr is not None))
        return 0

    pod.by_name["c"].attach = attach  # type: ignore[method-assign]
    url = kubelet.url("/attach/default/web/c?output=1&error=1")
    async with kubelet.session.ws_connect(url, protocols=("v5.channel.k8s.io",)) as ws:
        await _session_frames(ws)

    assert seen == [(True, False)]


class _Stubborn:
    """A pod-side connection that ignores the client's half-close and never hangs up itself."""

    def __init__(self) -> None:
        self.got = b""
        self.closed = asyncio.Event()

    async def read(self) -> bytes:
        await self.closed.wait()
        return b""

    async def write(self, data: bytes) -> None:
        self.got += data

    async def close_write(self) -> None:
        pass

    async def close(self) -> None:
        self.closed.set()


async def test_a_client_leaving_cuts_the_pod_connections_it_opened(kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["c"])
    stubborn = _Stubborn()

    async def connect(port: int) -> _Stubborn:
        return stubborn

    pod.connect = connect  # type: ignore[method-assign]
    url = kubelet.url("/portForward/default/web?port=8080")
    async with kubelet.session.ws_connect(url, protocols=("v4.channel.k8s.io",)) as ws:
        await ws.receive()
        await ws.receive()
        await ws.send_bytes(b"\x00ping")
    await asyncio.wait_for(stubborn.closed.wait(), 10)
    assert stubborn.got == b"ping"
