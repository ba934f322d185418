"""exec and attach over a WebSocket: the kubelet half of `kubectl exec|attach`.

`options(query)` reads the kubelet's own query (`command`, and `input|output|error|tty=1` as the
API server writes them); `serve()` upgrades, announces the stream (an empty frame on the lowest
writable channel, as upstream does), feeds stdin, resize and the v5 close signal to `Streams`,
runs the command (or joins the main process) through the runtime, and ends with the status on
the error channel. Called by `server.py` after it found the container.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from aiohttp import WSMsgType, web
from multidict import MultiMapping

from nodes.runtime_view import Streams, TerminalSize
from nodes.streaming import channels

log = logging.getLogger("haru.nodes.streaming")


@dataclass(frozen=True)
class Options:
    command: list[str]
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool


class OptionsError(ValueError):
    pass


def options(query: MultiMapping[str]) -> Options:
    """As the kubelet's remotecommand.NewOptions: "1" means true, a tty folds stderr into stdout.

    The names are the kubelet's (`input`, `output`, `error`, `tty`), which the API server writes
    from the client's `stdin|stdout|stderr|tty=true`.
    """
    stdin, stdout, stderr, tty = (query.get(name) == "1" for name in ("input", "output", "error", "tty"))
    if not (stdin or stdout or stderr):
        raise OptionsError("you must specify at least 1 of stdin, stdout, stderr")
    if tty and stderr:
        stderr = False
    return Options(list(query.getall("command", [])), stdin, stdout, stderr, tty)


def with_tty(opts: Options, tty: bool) -> Options:
    """attach: the tty is the container's, and a tty still has no separate stderr."""
    return dataclasses.replace(opts, tty=tty, stderr=opts.stderr and not tty)


class _ChannelOutput:
    def __init__(self, ws: web.WebSocketResponse, protocol: channels.Protocol, channel: int) -> None:
        self.ws, self.protocol, self.channel = ws, protocol, channel

    async def write(self, data: bytes) -> None:
        if not data or self.ws.closed:
            return  # an empty frame would read as "stream open" again; a gone client reads nothing
        with contextlib.suppress(ConnectionResetError):
            await channels.send(self.ws, self.protocol, self.channel, data)


def exit_status(command: list[str], code: int | None, failure: str | None) -> dict[str, Any]:
    """The v4+ error-channel Status: Success, NonZeroExitCode with the code as a cause, or an error."""
    if failure is not None:
        return {"metadata": {}, "status": "Failure", "message": f"Internal error occurred: {failure}",
                "reason": "InternalError", "details": {"causes": [{"message": failure}]}, "code": 500}
    if not code:
        return {"metadata": {}, "status": "Success"}
    # containerd's CodeExitError text, which the kubelet wraps as "command terminated with ...".
    detail = f"error executing command [{' '.join(command)}], exit code {code}"
    return {"metadata": {}, "status": "Failure", "message": f"command terminated with non-zero exit code: {detail}",
            "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def _error_payload(protocol: channels.Protocol, status: dict[str, Any]) -> bytes:
    if protocol.status_errors:
        return json.dumps(status, separators=(",", ":")).encode()
    # Before v4 the error channel is the bare message, and nothing at all on success.
    return b"" if status["status"] == "Success" else str(status.get("message", "")).encode()


Runner = Callable[[Streams], Awaitable[int | None]]


async def serve(request: web.Request, opts: Options, run: Runner, command: list[str]) -> web.StreamResponse:
    protocol = channels.select(request.headers.get("Sec-WebSocket-Protocol", ""), channels.REMOTE_COMMAND)
    if protocol is None:
        offered = request.headers.get("Sec-WebSocket-Protocol", "")
        supported = [p.name for p in channels.REMOTE_COMMAND]
        return web.Response(status=400, text=f"requested protocol(s) are not supported: [{offered}]; "
                                             f"supports {supported}")
    ws = web.WebSocketResponse(protocols=(protocol.name,) if protocol.name else (), max_msg_size=0)
    await ws.prepare(request)
    streams = Streams(
        stdin=asyncio.Queue() if opts.stdin else None,
        stdout=_ChannelOutput(ws, protocol, channels.STDOUT) if opts.stdout else None,
        stderr=_ChannelOutput(ws, protocol, channels.STDERR) if opts.stderr else None,
        tty=opts.tty,
    )
    first = channels.STDOUT if opts.stdout else channels.STDERR if opts.stderr else channels.ERROR
    await channels.send(ws, protocol, first, b"")
    runner = asyncio.create_task(run(streams))
    reader = asyncio.create_task(_read(ws, protocol, streams, runner))
    code: int | None = None
    failure: str | None = None
    try:
        code = await runner
    except asyncio.CancelledError:
        if not runner.cancelled():
            raise
        return ws  # the client left: nobody to tell
    except Exception as exc:  # the runtime failed: the client hears it on the error channel
        log.exception("exec/attach failed in the runtime")
        failure = str(exc) or type(exc).__name__
    finally:
        reader.cancel()
    if not ws.closed:
        with contextlib.suppress(ConnectionResetError):
            await channels.send(ws, protocol, channels.ERROR, _error_payload(protocol, exit_status(command, code,
                                                                                                  failure)))
            await ws.close()
    return ws


async def _read(ws: web.WebSocketResponse, protocol: channels.Protocol, streams: Streams,
                runner: asyncio.Task[Any]) -> None:
    try:
        async for msg in ws:
            if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT):
                continue
            try:
                channel, payload = channels.decode(protocol, msg)
            except channels.FramingError as exc:
                log.debug("dropping a frame: %s", exc)
                continue
            if channel == channels.STDIN and streams.stdin is not None and payload:
                streams.stdin.put_nowait(payload)
            elif channel == channels.RESIZE:
                _resize(streams, payload)
            elif channel == channels.CLOSE and protocol.close_signal and payload[:1] == bytes((channels.STDIN,)):
                if streams.stdin is not None:
                    streams.stdin.put_nowait(b"")
    finally:
        # The client is gone (or closed): stdin ends and the session with it.
        if streams.stdin is not None:
            streams.stdin.put_nowait(b"")
        if ws.closed and not runner.done():
            runner.cancel()


def _resize(streams: Streams, payload: bytes) -> None:
    try:
        size = json.loads(payload)
        streams.terminal = TerminalSize(int(size["Width"]), int(size["Height"]))
    except (ValueError, KeyError, TypeError):
        log.debug("ignoring a malformed resize: %r", payload)
        return
    streams.resized.set()
