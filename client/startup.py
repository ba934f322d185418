"""What every co-process does before its work: stop on SIGINT/SIGTERM, and wait for the API server.

`python -m controllers` and `python -m nodes` may start before the server answers (the supervisor
starts them side by side); `stop_event()` gives the event their main loop ends on, and
`wait_for_server(client, stop)` asks `/version` with a doubling delay (0.1 s up to 5 s) until it
answers or `stop` is set. Both are plain asyncio, so the same code runs against a real cluster.
"""

from __future__ import annotations

import asyncio
import logging
import signal

from client.rest import RestClient

log = logging.getLogger("haru.client")


def stop_event() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM, on the running loop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def wait_for_server(client: RestClient, stop: asyncio.Event) -> bool:
    """True once the API server answers `/version`; False when `stop` came first."""
    delay = 0.1
    while not stop.is_set():
        try:
            await client.get_path("/version")
            return True
        except Exception as exc:  # noqa: BLE001 - the server may simply not be up yet
            log.info("waiting for the API server at %s: %s", client.config.server, exc)
            try:
                await asyncio.wait_for(stop.wait(), delay)
            except asyncio.TimeoutError:
                pass
            delay = min(delay * 2, 5.0)
    return False
