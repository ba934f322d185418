"""Request cases of `bench.apiserver` against a running server: GET, create, LIST, settling.

Each function measures one thing from this process (aiohttp) or through `bench._load` (wrk when
present) and returns plain figures; `bench.apiserver` turns them into rows. Nothing here starts
or seeds a server: that is `bench._server_process` and `bench._api_seed`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import msgspec

from bench import _load, _timing
from bench._api_seed import running_pod
from bench._server_process import Memory

_JSON = {"Accept": "application/json"}
_JSON_BODY = {"Accept": "application/json", "Content-Type": "application/json"}
_NAME_MARK = "@@NAME@@"


# -- GET one object, many connections ----------------------------------------------------
async def measure_get(url: str, *, connections: int, seconds: float, warmup: float, use_wrk: bool,
                      server_cpu: Callable[[], float]) -> _load.LoadResult:
    """GET `url` from `connections` clients; `server_cpu()` reads the server's CPU seconds so far."""
    if warmup > 0:
        await _load.get_load(url, connections=connections, seconds=warmup, use_wrk=use_wrk)
    cpu_before = server_cpu()
    result = await _load.get_load(url, connections=connections, seconds=seconds, use_wrk=use_wrk)
    result.server_cpu_us = (server_cpu() - cpu_before) / max(result.requests, 1) * 1e6
    return result


# -- create, many clients ---------------------------------------------------------------
def pod_to_create(namespace: str) -> tuple[bytes, bytes]:
    """A Pod as a ReplicaSet would POST it, split around its name: (before, after)."""
    pod = running_pod(0, 0)
    pod.pop("status")
    meta = pod["metadata"]
    for server_owned in ("uid", "creationTimestamp"):
        meta.pop(server_owned)
    meta["name"] = _NAME_MARK
    meta["namespace"] = namespace
    pod["spec"].pop("nodeName")  # unscheduled, as created
    before, after = msgspec.json.encode(pod).split(_NAME_MARK.encode())
    return before, after


@dataclass
class CreateResult:
    load: _load.LoadResult
    stored: int  # pods the namespace holds afterwards, by a LIST

    @property
    def per_second(self) -> float:
        return self.load.ok_per_second


async def measure_creates(base: str, namespace: str, *, connections: int, seconds: float,
                          use_wrk: bool, server_cpu: Callable[[], float]) -> CreateResult:
    before, after = pod_to_create(namespace)
    url = f"{base}/api/v1/namespaces/{namespace}/pods"
    # One create first, so a body the server rejects is an error with its Status, not a 0/s row.
    async with aiohttp.ClientSession() as session:
        async with session.post(url, data=before + b"preflight" + after, headers=_JSON_BODY) as resp:
            if resp.status != 201:
                raise RuntimeError(f"creating a pod answered {resp.status}: {(await resp.read())[:1000]!r}")
    cpu_before = server_cpu()
    load = await _load.post_load(url, before, after, connections=connections, seconds=seconds,
                                 name_prefix="created-", use_wrk=use_wrk)
    load.server_cpu_us = (server_cpu() - cpu_before) / max(load.requests, 1) * 1e6
    return CreateResult(load, await count(base, f"/api/v1/namespaces/{namespace}/pods"))


async def count(base: str, path: str) -> int:
    """Objects in a collection: a LIST with limit=1 and its remainingItemCount, or, where the
    server leaves the count out (haru does past 10,000 keys), pages of names to the end."""
    counted = 0
    query = "limit=1"
    accept = {"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"}
    async with aiohttp.ClientSession() as session:
        while True:
            async with session.get(f"{base}{path}?{query}", headers=accept) as resp:
                body = await resp.json()
            counted += len(body["items"])
            meta = body["metadata"]
            if "remainingItemCount" in meta:
                return counted + int(meta["remainingItemCount"])
            if not meta.get("continue"):
                return counted
            query = f"limit=5000&continue={meta['continue']}"


# -- LIST -------------------------------------------------------------------------------
@dataclass
class ListResult:
    path: str
    latencies: list[float]  # seconds, request sent → whole body read
    items: int
    body_bytes: int

    @property
    def p50_ms(self) -> float:
        return _timing.percentile(self.latencies, 50) * 1e3

    def describe(self) -> str:
        return (f"GET {self.path}: {self.items:,} items, {self.body_bytes / 1e6:,.1f} MB JSON; {len(self.latencies)} "
                f"timed requests, p50 {self.p50_ms:.1f} ms, min {min(self.latencies) * 1e3:.1f} ms, "
                f"max {max(self.latencies) * 1e3:.1f} ms (client time to the last byte, one request at a time)")


async def measure_list(base: str, path: str, *, repeats: int) -> ListResult:
    """Time `repeats` sequential LISTs after one untimed warm-up; check the item count once."""
    url = f"{base}{path}"
    latencies = []
    connector = aiohttp.TCPConnector(limit=1)
    async with aiohttp.ClientSession(connector=connector, read_bufsize=1 << 20) as session:
        async with session.get(url, headers=_JSON) as resp:
            body = await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"LIST {path} answered {resp.status}: {body[:500]!r}")
        decoded: Any = msgspec.json.decode(body)
        items = len(decoded["items"])
        size = len(body)
        del decoded, body
        for _ in range(repeats):
            started = time.perf_counter()
            async with session.get(url, headers=_JSON) as resp:
                await resp.read()
            latencies.append(time.perf_counter() - started)
    return ListResult(path, latencies, items, size)


# -- settling after start -----------------------------------------------------------------
@dataclass
class SettleResult:
    seconds: float  # serving line -> the server went idle (or gave up)
    idle: bool
    peak_rss: float  # MB
    final: Memory
    get_latencies: list[float]  # seconds, one probe GET at a time meanwhile

    def describe(self) -> str:
        probes = self.get_latencies
        state = (f"idle (under {_IDLE_SHARE:.0%} of a core for {_QUIET_WINDOWS * _WINDOW:.1f} s) after "
                 f"{self.seconds:.1f} s" if self.idle else f"still busy after {self.seconds:.1f} s (gave up)")
        probe = (f"{len(probes)} probe GETs meanwhile: p50 {_timing.percentile(probes, 50) * 1e3:.1f} ms, "
                 f"max {max(probes) * 1e3:,.0f} ms" if probes else "no probe GET completed")
        return f"API server {state}; {probe}; peak RSS {self.peak_rss:,.0f} MB, at the end {self.final.describe()}"


_WINDOW = 0.5
_IDLE_SHARE = 0.1
_QUIET_WINDOWS = 2


async def measure_settle(probe_url: str, server_cpu: Callable[[], float], memory: Callable[[], Memory], *,
                         limit: float) -> SettleResult:
    """Sample the server's CPU every half second until it stays under 10 % of a core, GETting meanwhile."""
    perf = time.perf_counter
    started = perf()
    latencies: list[float] = []
    done = False

    async def probe() -> None:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=limit)) as session:
            while not done:
                sent = perf()
                try:
                    async with session.get(probe_url, headers=_JSON) as resp:
                        await resp.read()
                    latencies.append(perf() - sent)
                except (aiohttp.ClientError, asyncio.TimeoutError):
                    pass
                await asyncio.sleep(0.25)

    prober = asyncio.ensure_future(probe())
    peak = memory().rss
    quiet = 0
    idle = False
    cpu = server_cpu()
    try:
        while perf() - started < limit:
            await asyncio.sleep(_WINDOW)
            now_cpu = server_cpu()
            peak = max(peak, memory().rss)
            quiet = quiet + 1 if (now_cpu - cpu) / _WINDOW < _IDLE_SHARE else 0
            cpu = now_cpu
            if quiet >= _QUIET_WINDOWS:
                idle = True
                break
    finally:
        done = True
        prober.cancel()
        await asyncio.gather(prober, return_exceptions=True)
    final = memory()
    seconds = perf() - started - (_QUIET_WINDOWS * _WINDOW if idle else 0.0)
    return SettleResult(seconds, idle, max(peak, final.peak), final, latencies)
