"""Watch latency over HTTP: many watch streams open while a writer creates objects at a fixed rate.

`bench.apiserver` calls `measure_watch(base, namespaces, per_namespace, rate, seconds)`. Each
namespace gets `per_namespace` plain watches of its configmaps (no selector: the server's fast
path, stored bytes framed as they are); the writer POSTs configmaps round-robin over the
namespaces, open loop at `rate`, each stamped with its send time (perf_counter) in an annotation.
A write's latency is the time its *last* watcher received the event minus that send time, so it
includes the request, the durable commit and the fan-out: an upper bound on commit → last
watcher. The same minus the time the writer got its 201 (which comes after the commit) is a lower
bound. Receive times are taken in this process, so they include this client's own delays.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp
import msgspec

from bench import _timing

SENT_AT = "bench.haru.dev/sent-at"
_JSON = {"Accept": "application/json", "Content-Type": "application/json"}


@dataclass
class WatchResult:
    watchers: int
    namespaces: int
    writes: int
    offered_rate: float
    achieved_rate: float
    last_from_send_ms: list[float] = field(default_factory=list)  # per write: last watcher − send
    last_from_ack_ms: list[float] = field(default_factory=list)  # per write: last watcher − 201
    deliveries: int = 0
    missing: int = 0  # (watcher, write) pairs never delivered
    write_errors: int = 0
    connect_seconds: float = math.nan
    server_busy: float = math.nan  # server CPU seconds per wall second, from the first write to the drain
    client_busy: float = math.nan  # the same for this process (writer and watchers), whose delays count too

    def p99(self) -> float:
        """Upper bound on commit -> last watcher: from the client's send."""
        return _timing.percentile(self.last_from_send_ms, 99)

    def p99_from_ack(self) -> float:
        """Lower bound on commit -> last watcher: from the 201, which follows the commit."""
        return _timing.percentile(self.last_from_ack_ms, 99)

    def describe(self) -> str:
        send = self.last_from_send_ms
        ack = self.last_from_ack_ms
        return (f"{self.watchers:,} watchers ({self.watchers // max(self.namespaces, 1)} on each of "
                f"{self.namespaces} namespaces, opened in {self.connect_seconds:.1f} s); {self.writes:,} creates "
                f"at {self.achieved_rate:,.0f}/s (offered {self.offered_rate:,.0f}/s, {self.write_errors} failed); "
                f"{self.deliveries:,} deliveries, {self.missing:,} missing; send -> last watcher p50 "
                f"{_timing.percentile(send, 50):.1f} ms, p99 {_timing.percentile(send, 99):.1f} ms, max "
                f"{_timing.percentile(send, 100):.1f} ms; 201 -> last watcher (lower bound) p50 "
                f"{_timing.percentile(ack, 50):.1f} ms, p99 {_timing.percentile(ack, 99):.1f} ms; server CPU "
                f"{100 * self.server_busy:.0f}% of one core while writing and draining, this client "
                f"{100 * self.client_busy:.0f}%")


def configmap_body(namespace: str, name: str, sent_at: float) -> bytes:
    return msgspec.json.encode({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "watch-bench"},
                     "annotations": {SENT_AT: f"{sent_at:.6f}"}},
        "data": {"settings.yaml": "server:\n  port: 8080\nlogging:\n  level: info\n", "LOG_LEVEL": "info",
                 "UPSTREAM": f"http://web.{namespace}.svc.cluster.local:8080"},
    })


async def _current_revision(session: aiohttp.ClientSession, base: str, namespace: str) -> str:
    async with session.get(f"{base}/api/v1/namespaces/{namespace}/configmaps?limit=1", headers=_JSON) as resp:
        body = await resp.json()
    return str(body["metadata"]["resourceVersion"])


class _Watch:
    """One watch stream; keeps (receive time, raw chunk) and parses only after the run."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.chunks: list[tuple[float, bytes]] = []
        self.connected = asyncio.Event()

    async def run(self, session: aiohttp.ClientSession, url: str) -> None:
        async with session.get(url, headers=_JSON, timeout=aiohttp.ClientTimeout(total=None)) as resp:
            if resp.status != 200:
                raise RuntimeError(f"watch {url} answered {resp.status}: {await resp.text()}")
            self.connected.set()
            perf = time.perf_counter
            async for chunk in resp.content.iter_any():
                self.chunks.append((perf(), chunk))

    def received(self) -> dict[str, float]:
        """Name → receive time of its ADDED event (a line's time is that of its last chunk)."""
        out: dict[str, float] = {}
        pending = b""
        for at, chunk in self.chunks:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line:
                    event = msgspec.json.decode(line)
                    if event["type"] == "ADDED":
                        out[event["object"]["metadata"]["name"]] = at
        return out

    def sent_times(self) -> dict[str, float]:
        out: dict[str, float] = {}
        pending = b""
        for _, chunk in self.chunks:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line:
                    meta = msgspec.json.decode(line)["object"]["metadata"]
                    if SENT_AT in meta.get("annotations", {}):
                        out[meta["name"]] = float(meta["annotations"][SENT_AT])
        return out


async def measure_watch(base: str, namespaces: list[str], per_namespace: int, *, rate: float, seconds: float,
                        name_prefix: str, server_cpu: Callable[[], float],
                        drain_timeout: float = 15.0) -> WatchResult:
    count = max(1, int(rate * seconds))
    watches = [_Watch(ns) for ns in namespaces for _ in range(per_namespace)]
    result = WatchResult(len(watches), len(namespaces), count, rate, math.nan)
    watch_connector = aiohttp.TCPConnector(limit=0)
    write_connector = aiohttp.TCPConnector(limit=256)
    async with aiohttp.ClientSession(connector=watch_connector) as watch_session, \
            aiohttp.ClientSession(connector=write_connector) as write_session:
        revision = await _current_revision(write_session, base, namespaces[0])
        opened = time.perf_counter()
        tasks = [asyncio.ensure_future(w.run(
            watch_session, f"{base}/api/v1/namespaces/{w.namespace}/configmaps?watch=true"
                           f"&resourceVersion={revision}&timeoutSeconds=900")) for w in watches]
        try:
            give_up = opened + 60
            while not all(w.connected.is_set() for w in watches):
                for task in tasks:
                    if task.done():
                        task.result()  # a watch that failed to open (or ended) is a benchmark error
                        raise RuntimeError("a watch ended before the first write")
                if time.perf_counter() > give_up:
                    opened_count = sum(w.connected.is_set() for w in watches)
                    raise RuntimeError(f"only {opened_count} of {len(watches)} watches opened in 60 s")
                await asyncio.sleep(0.02)
            result.connect_seconds = time.perf_counter() - opened
            await asyncio.sleep(0.2)

            acked: dict[str, float] = {}

            async def one_write(i: int) -> None:
                namespace = namespaces[i % len(namespaces)]
                name = f"{name_prefix}{i:06d}"
                body = configmap_body(namespace, name, time.perf_counter())
                try:
                    async with write_session.post(f"{base}/api/v1/namespaces/{namespace}/configmaps",
                                                  data=body, headers=_JSON) as resp:
                        await resp.read()
                        if resp.status == 201:
                            acked[name] = time.perf_counter()
                        else:
                            result.write_errors += 1
                except aiohttp.ClientError:
                    result.write_errors += 1

            cpu_before, client_before, wall_before = server_cpu(), time.process_time(), time.perf_counter()
            _, result.achieved_rate = await _timing.paced_open_loop(rate, count, one_write)
            expected: dict[str, set[str]] = {ns: set() for ns in namespaces}
            for i in range(count):
                name = f"{name_prefix}{i:06d}"
                if name in acked:
                    expected[namespaces[i % len(namespaces)]].add(name)
            deadline = time.perf_counter() + drain_timeout
            while time.perf_counter() < deadline:
                if all(_has_all(w, expected[w.namespace]) for w in watches):
                    break
                await asyncio.sleep(0.05)
            wall = time.perf_counter() - wall_before
            result.server_busy = (server_cpu() - cpu_before) / wall
            result.client_busy = (time.process_time() - client_before) / wall
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    _summarize(result, watches, expected, acked)
    return result


def _has_all(watch: _Watch, names: set[str]) -> bool:
    # Cheap progress check during the drain: count newlines, parse nothing.
    return sum(chunk.count(b"\n") for _, chunk in watch.chunks) >= len(names)


def _summarize(result: WatchResult, watches: list[_Watch], expected: dict[str, set[str]],
               acked: dict[str, float]) -> None:
    """Per acknowledged write: when its last watcher got it. A write some watcher never got counts
    as infinitely late, so more than 1 % of those makes the p99 infinite rather than flattering."""
    watchers_of = Counter(w.namespace for w in watches)
    last: dict[str, float] = {}
    got: Counter[str] = Counter()
    sent: dict[str, float] = {}
    for watch in watches:
        received = watch.received()
        sent.update(watch.sent_times())
        for name in expected[watch.namespace]:
            at = received.get(name)
            if at is None:
                result.missing += 1
                continue
            result.deliveries += 1
            got[name] += 1
            last[name] = max(last.get(name, 0.0), at)
    for namespace, names in expected.items():
        for name in names:
            if got[name] < watchers_of[namespace] or name not in sent:
                result.last_from_send_ms.append(math.inf)
                result.last_from_ack_ms.append(math.inf)
                continue
            result.last_from_send_ms.append((last[name] - sent[name]) * 1e3)
            result.last_from_ack_ms.append(max(0.0, last[name] - acked[name]) * 1e3)
