"""The anchor for GET throughput: a trivial aiohttp handler that returns fixed bytes.

`python -m bench._trivial_server BODY_FILE` serves BODY_FILE's bytes (the same pod JSON haru
returns) as application/json for any GET, on 127.0.0.1 and a free port, and prints
`trivial aiohttp is serving http://127.0.0.1:PORT; ` once it listens. Started and stopped by
`bench._server_process` for `bench.apiserver`: aiohttp's own ceiling on this machine, this run.
"""

from __future__ import annotations

import asyncio
import signal
import sys

from aiohttp import web

from client import event_loop


async def serve(body: bytes) -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    runner = web.AppRunner(app, handle_signals=False)  # access log as haru's: default
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"trivial aiohttp is serving http://127.0.0.1:{port}; ", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def main() -> int:
    with open(sys.argv[1], "rb") as f:
        body = f.read()
    event_loop.run(serve(body))
    return 0


if __name__ == "__main__":
    sys.exit(main())
