"""`python -m bench.audit`: the cost of the audit log on GET and on create, off beside on, in one run.

Issue 14's audit point: the log must be about free when it is off. Three API servers run as child
processes (`bench._apiserver_child`, bearer-token admin, AlwaysAllow): no audit flags (off), a
policy logging everything at Metadata, and one at RequestResponse, each writing its own file. In
alternating rounds, CONNECTIONS closed-loop aiohttp clients GET one ConfigMap, then create
ConfigMaps, for SECONDS each. The figure is server CPU per request (from /proc; the machine is
shared), with the ratio to "off". What "off" itself costs (the Audit-Id of every answer) is
measured in-process beside it: µs per request of `audit.on_prepare`, as a share of a GET.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path

from bench._report import markdown_table
from bench._server_process import ServerProcess
from bench.rbac import ADMIN, _load, _post

NAMESPACE = "default"
LEVELS = ("off", "Metadata", "RequestResponse")
POLICY = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: {level}\n"


def _off_path_cost() -> float:
    """µs per request of what every answer pays with no audit log: the Audit-Id header."""
    from aiohttp import web
    from aiohttp.test_utils import make_mocked_request

    from apiserver.audit import recorder

    async def one() -> None:
        request = make_mocked_request("GET", "/api/v1/namespaces/default/configmaps/target")
        await recorder.on_prepare(request, web.Response())

    loop = asyncio.new_event_loop()
    try:
        number = 20000
        seconds = min(timeit.repeat(lambda: loop.run_until_complete(one()), number=1, repeat=number))
        baseline = min(timeit.repeat(lambda: loop.run_until_complete(_nothing()), number=1, repeat=number))
        return max(seconds - baseline, 0.0) * 1e6
    finally:
        loop.close()


async def _nothing() -> None:
    from aiohttp import web
    from aiohttp.test_utils import make_mocked_request

    make_mocked_request("GET", "/api/v1/namespaces/default/configmaps/target")
    web.Response()


async def run(rounds: int, seconds: float, connections: int) -> tuple[list[list[str]], dict[str, int]]:
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    server_cpu: dict[str, float] = {}
    log_bytes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="haru-bench-audit-") as tmp:
        servers = {}
        for level in LEVELS:
            extra: tuple[str, ...] = ("--admin-token", ADMIN, "--authorization-mode", "AlwaysAllow")
            if level != "off":
                policy = Path(tmp) / f"{level}.yaml"
                policy.write_text(POLICY.format(level=level))
                extra += ("--audit-policy-file", str(policy), "--audit-log-path", str(Path(tmp) / f"{level}.log"))
            servers[level] = await ServerProcess.start_apiserver(Path(tmp) / level, name=f"haru apiserver ({level})",
                                                                 extra=extra)
        try:
            import aiohttp

            async with aiohttp.ClientSession() as session:
                for server in servers.values():
                    await _post(session, f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps",
                                {"metadata": {"name": "target"}, "data": {"k": "v"}})
            for _ in range(rounds):
                for case in ("GET", "create"):
                    for level, server in servers.items():
                        base = f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
                        url, method = (f"{base}/target", "GET") if case == "GET" else (base, "POST")
                        before = server.cpu_seconds()
                        started = time.perf_counter()
                        ok, _ = await _load(method, url, ADMIN, connections, seconds)
                        wall = time.perf_counter() - started
                        used = server.cpu_seconds() - before
                        results.setdefault((level, case), []).append((ok / wall, used / ok * 1e6))
                        server_cpu[level] = server_cpu.get(level, 0.0) + used
            for level in LEVELS[1:]:
                log_bytes[level] = os.path.getsize(Path(tmp) / f"{level}.log")
        finally:
            for server in servers.values():
                await server.stop()
    rows = []
    for case in ("GET", "create"):
        off = statistics.median(us for _, us in results[("off", case)])
        row = [case]
        for level in LEVELS:
            us = statistics.median(u for _, u in results[(level, case)])
            rate = statistics.median(r for r, _ in results[(level, case)])
            row.append(f"{us:.0f} µs ({rate:.0f}/s)" + ("" if level == "off" else f" ×{us / off:.2f}"))
        rows.append(row)
    rows.append(["server CPU s", *(f"{server_cpu[level]:.2f}" for level in LEVELS)])
    return rows, log_bytes


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.audit", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="one round of 1 s")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.seconds = 1, 1.0
    rows, log_bytes = asyncio.run(run(args.rounds, args.seconds, args.connections))
    off_cost = _off_path_cost()
    print(f"# bench.audit — {platform.python_implementation()} {platform.python_version()}, {args.connections} "
          f"connections, {args.rounds} alternating rounds of {args.seconds:g} s; server CPU µs per request (median "
          f"of rounds), ×ratio to off; load average {os.getloadavg()[0]:.2f}")
    print(markdown_table(["case", "audit off", "Metadata", "RequestResponse"], rows))
    print(f"\noff-path cost (Audit-Id on every answer, in-process): {off_cost:.2f} µs per request; "
          f"log written: " + ", ".join(f"{level} {size / 1e6:.1f} MB" for level, size in log_bytes.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
