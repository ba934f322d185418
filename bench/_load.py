"""HTTP load for `bench.apiserver`: N connections, closed loop, for a fixed time; wrk if present.

`get_load(url, ...)` repeats one GET; `post_load(url, before, after, ...)` POSTs bodies made of
`before + unique name + after`, so every request creates a new object. Both run `wrk` (Debian's
package, C, one thread) when it is on PATH, since a Python generator on the same two cores caps
well below the server; otherwise an aiohttp client in this process. `LoadResult.tool` says which.
Latency percentiles are per completed request; non-2xx answers and socket errors are counted.
"""

from __future__ import annotations

import asyncio
import math
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bench import _timing

_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


@dataclass
class LoadResult:
    tool: str
    connections: int
    requests: int  # completed, whatever the status
    seconds: float
    errors: int  # non-2xx answers plus socket errors
    p50_ms: float
    p99_ms: float
    server_cpu_us: float = math.nan  # the server's CPU (user + system) per completed request, if known

    @property
    def ok_per_second(self) -> float:
        return (self.requests - self.errors) / self.seconds if self.seconds > 0 else math.nan

    def describe(self) -> str:
        cpu = "" if math.isnan(self.server_cpu_us) else f"; server CPU {self.server_cpu_us:.0f} us per request"
        return (f"{self.tool}, {self.connections} connections, {self.seconds:.1f} s: {self.requests:,} requests "
                f"({self.errors:,} errors), latency p50 {self.p50_ms:.2f} ms, p99 {self.p99_ms:.2f} ms{cpu}")


def wrk_path() -> str | None:
    return shutil.which("wrk")


def wrk_version() -> str | None:
    path = wrk_path()
    if path is None:
        return None
    import subprocess

    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    first = (out.stdout or out.stderr).strip().splitlines()
    return first[0] if first else "wrk (version unknown)"


async def get_load(url: str, *, connections: int, seconds: float, use_wrk: bool = True) -> LoadResult:
    if use_wrk and wrk_path():
        return await _run_wrk(url, connections, seconds, script=None)
    return await _aiohttp_load(url, connections, seconds, None)


async def post_load(url: str, before: bytes, after: bytes, *, connections: int, seconds: float,
                    name_prefix: str, use_wrk: bool = True) -> LoadResult:
    """POST `before + name + after`, names `<name_prefix><counter>`, each used once."""
    if use_wrk and wrk_path():
        script = _post_script(before, after, name_prefix)
        return await _run_wrk(url, connections, seconds, script=script)
    return await _aiohttp_load(url, connections, seconds, (before, after, name_prefix))


def _lua_long_string(data: bytes) -> str:
    text = data.decode()
    level = 1
    while "]" + "=" * level + "]" in text:
        level += 1
    return "[" + "=" * level + "[" + text + "]" + "=" * level + "]"


def _post_script(before: bytes, after: bytes, name_prefix: str) -> str:
    # One wrk thread (-t1), so a plain counter gives unique names.
    return "\n".join([
        'wrk.method = "POST"',
        'wrk.headers["Content-Type"] = "application/json"',
        f"local before = {_lua_long_string(before)}",
        f"local after = {_lua_long_string(after)}",
        "local counter = 0",
        "request = function()",
        "  counter = counter + 1",
        f'  return wrk.format(nil, nil, nil, before .. string.format("{name_prefix}%08d", counter) .. after)',
        "end",
    ]) + "\n"


async def _run_wrk(url: str, connections: int, seconds: float, script: str | None) -> LoadResult:
    path = wrk_path()
    assert path is not None
    duration = max(1, round(seconds))
    args = [path, "-t1", f"-c{connections}", f"-d{duration}s", "--latency", "--timeout", "10s"]
    with tempfile.TemporaryDirectory(prefix="haru-wrk-") as tmp:
        if script is not None:
            script_path = Path(tmp) / "post.lua"
            script_path.write_text(script)
            args += ["-s", str(script_path)]
        args.append(url)
        process = await asyncio.create_subprocess_exec(
            *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await process.communicate()
    text = out.decode(errors="replace")
    if process.returncode != 0 or "requests in" not in text:
        raise RuntimeError(f"wrk failed ({process.returncode}): {text[-1500:]} {err.decode(errors='replace')[-500:]}")
    return parse_wrk(text, connections)


def parse_wrk(text: str, connections: int) -> LoadResult:
    """Read wrk's summary: `N requests in Ts`, the --latency percentiles, error counts."""
    done = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", text)
    if done is None:
        raise ValueError(f"no request count in wrk output:\n{text}")
    requests = int(done.group(1))
    seconds = float(done.group(2)) * _UNITS[done.group(3)] / 1e3
    percentiles = {}
    for pct, value, unit in re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M):
        percentiles[pct] = float(value) * _UNITS[unit]
    errors = 0
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if non2xx:
        errors += int(non2xx.group(1))
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sockets:
        errors += sum(int(g) for g in sockets.groups())
    return LoadResult("wrk -t1", connections, requests, seconds, errors,
                      percentiles.get("50", math.nan), percentiles.get("99", math.nan))


async def _aiohttp_load(url: str, connections: int, seconds: float,
                        post: tuple[bytes, bytes, str] | None) -> LoadResult:
    latencies: list[float] = []
    errors = 0
    failed = 0  # no answer at all (counted in `errors` too)
    counter = 0
    perf = time.perf_counter
    deadline = perf() + seconds
    headers = {"Content-Type": "application/json"}

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal errors, failed, counter
        while perf() < deadline:
            started = perf()
            try:
                if post is None:
                    async with session.get(url) as resp:
                        await resp.read()
                        status = resp.status
                else:
                    counter += 1
                    body = post[0] + f"{post[2]}{counter:08d}".encode() + post[1]
                    async with session.post(url, data=body, headers=headers) as resp:
                        await resp.read()
                        status = resp.status
            except aiohttp.ClientError:
                errors += 1
                failed += 1
                continue
            latencies.append(perf() - started)
            if status >= 300:
                errors += 1

    connector = aiohttp.TCPConnector(limit=connections)
    began = perf()
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(connections)))
    elapsed = perf() - began
    return LoadResult("aiohttp client in the benchmark process (no wrk on PATH)", connections,
                      len(latencies) + failed, elapsed, errors,
                      _timing.percentile(latencies, 50) * 1e3, _timing.percentile(latencies, 99) * 1e3)
