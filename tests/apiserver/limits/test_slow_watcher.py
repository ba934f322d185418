"""A watcher too slow to keep up is cut, as upstream's cacher cuts an unresponsive watcher, while the
writes and every other watcher carry on.

One client opens a watch and stops reading (a small receive buffer, so its connection fills fast);
writes go on; a second watcher reads every event; the stalled stream ends. The `kubernetes` 36.0.3
Python client's watch, stalled the same way, ends early and can re-watch from the last revision it saw.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import threading
from typing import Any
from urllib.parse import urlparse

import msgspec
from kubernetes import client as pyclient, watch as pywatch
from urllib3.exceptions import ProtocolError

from tests.conftest import InProcess

CMS = "/api/v1/namespaces/default/configmaps"
PAYLOAD = "x" * (256 * 1024)
MAX_WRITES = 200  # events of 256 KiB; the kernel's buffers take a few MiB before a write waits
BUDGET = 1.0  # seconds a stalled write may wait (the server default is 5): a reader that keeps up never waits that long
CUT_WAIT = 10 * BUDGET  # seconds to wait for the cut once the writes are done (a loaded machine is slow)


def _cm(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"}, "data": {"k": PAYLOAD}}


async def _stalled_watch(api: InProcess) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    url = urlparse(api.url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)  # before connect: no autotuning
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (url.hostname, url.port))
    reader, writer = await asyncio.open_connection(sock=sock)
    writer.write(f"GET {CMS}?watch=true&resourceVersion={api.store.revision} HTTP/1.1\r\n"
                 f"Host: {url.netloc}\r\n\r\n".encode())
    await writer.drain()
    assert (await reader.readline()).startswith(b"HTTP/1.1 200")
    return reader, writer


async def _read_to_end(reader: asyncio.StreamReader) -> bytes:
    received = b""
    try:
        while chunk := await reader.read(1 << 16):
            received += chunk
    except ConnectionResetError:
        pass
    return received


async def _read_until(response: Any, last: str) -> list[str]:
    names: list[str] = []
    while not names or names[-1] != last:
        names.append(msgspec.json.decode(await response.content.readline())["object"]["metadata"]["name"])
    return names


def _cut(caplog: Any) -> bool:
    return any("watcher close due to unresponsiveness" in r.getMessage() for r in caplog.records)


async def _write_until_cut(api: InProcess, caplog: Any, written: int = 0) -> int:
    """Write big objects (cm-<written>, …) until the server cuts a watcher, then one named "end";
    return how many cm-* exist. A watcher is cut only when an event cannot be delivered, and how
    much the kernel buffers first varies; the cut comes a budget after the buffers fill, which a
    fast writer may outrun, so the last write is followed by a wait for it."""
    while not _cut(caplog) and written < MAX_WRITES:
        status, _, _ = await api.request("POST", CMS, json=_cm(written))
        assert status == 201
        written += 1
    for _ in range(int(CUT_WAIT / 0.1)):
        if _cut(caplog):
            break
        await asyncio.sleep(0.1)
    assert _cut(caplog), f"no watcher was cut after {written} writes"
    status, _, _ = await api.request("POST", CMS, json={"metadata": {"name": "end"}})
    assert status == 201
    return written


async def test_a_watcher_that_stops_reading_is_cut_and_nobody_else_waits(api: InProcess, caplog: Any) -> None:
    caplog.set_level(logging.INFO, logger="haru.apiserver.watch")
    api.running.server.extra["watch_stall_budget"] = BUDGET
    start = api.store.revision
    reader, writer = await _stalled_watch(api)
    healthy = await api.session.get(api.url + f"{CMS}?watch=true&resourceVersion={start}")
    reading = asyncio.create_task(_read_until(healthy, "end"))
    written = await _write_until_cut(api, caplog)
    assert await asyncio.wait_for(reading, timeout=60) == [f"cm-{i}" for i in range(written)] + ["end"]
    healthy.close()
    assert sum("unresponsiveness" in r.getMessage() for r in caplog.records) == 1  # only the stalled one

    # The stalled stream was cut: reading it now reaches its end, short of what was written.
    received = await asyncio.wait_for(_read_to_end(reader), timeout=60)
    writer.close()
    assert 0 < received.count(b'"type":"ADDED"') < written


def _python_client_watch(url: str, start: int, first: threading.Event,
                         stalled: threading.Event) -> tuple[list[str], int]:
    """Watch with the Python client, setting `first` on the first event and stalling there until
    `stalled` is set; its Watch.stream re-watches from the last resourceVersion by itself when a
    stream ends cleanly."""
    config = pyclient.Configuration(host=url)
    config.socket_options = [(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)]
    api_client = pyclient.ApiClient(config)
    core = pyclient.CoreV1Api(api_client)
    calls = 0

    @functools.wraps(core.list_namespaced_config_map)
    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return core.list_namespaced_config_map(*args, **kwargs)

    seen: list[str] = []
    resource_version = str(start)
    try:
        while not seen or seen[-1] != "end":
            watcher = pywatch.Watch()
            try:
                for event in watcher.stream(counted, "default", resource_version=resource_version,
                                            _request_timeout=60):
                    seen.append(event["object"].metadata.name)
                    if len(seen) == 1:
                        first.set()
                        stalled.wait(60)  # the writes go on while we do not read
                    if seen[-1] == "end":
                        watcher.stop()
            except ProtocolError:
                pass  # the connection was dropped: watch again from the last revision seen
            resource_version = watcher.resource_version
    finally:
        api_client.close()
    return seen, calls


async def test_the_python_clients_stalled_watch_is_cut_and_it_rewatches(api: InProcess, caplog: Any) -> None:
    caplog.set_level(logging.INFO, logger="haru.apiserver.watch")
    api.running.server.extra["watch_stall_budget"] = BUDGET
    first, stalled = threading.Event(), threading.Event()
    watching = asyncio.create_task(asyncio.to_thread(_python_client_watch, api.url, api.store.revision,
                                                     first, stalled))
    status, _, _ = await api.request("POST", CMS, json=_cm(0))
    assert status == 201
    # The client is watching, and stalled, before the writes begin: a client slow to start would
    # otherwise find every write in the ring and have nothing to fall behind on.
    assert await asyncio.to_thread(first.wait, 60)
    written = await _write_until_cut(api, caplog, written=1)
    stalled.set()
    seen, calls = await asyncio.wait_for(watching, timeout=90)
    assert seen == ["cm-0"] + [f"cm-{i}" for i in range(1, written)] + ["end"]
    assert calls >= 2  # the first stream was cut; the client watched again from where it was
