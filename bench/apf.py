"""`python -m bench.apf`: lease-renewal latency under a LIST flood, with API Priority and Fairness and without.

Issue 14's benchmark. Two API servers run as child processes (`bench._apiserver_child`, a
bearer-token admin, AlwaysAllow): one with APF (the default), one with
`--enable-priority-and-fairness=false`. Each holds OBJECTS ConfigMaps of SIZE bytes in one
namespace (the large collection) and NODES Leases in kube-node-lease. In each server, two cases:
  - quiet: NODES renewers PUT their Lease every INTERVAL seconds for SECONDS, each as
    `system:node:<name>` in `system:nodes` (impersonated by the admin), as a kubelet does;
  - flood: the same, while `bench._flood` (its own process) runs CLIENTS closed-loop LISTs of the
    large collection as one ordinary user.
The anchor of each flood row is the quiet row of the same server, in the same run; the ratio is
flood p99 / quiet p99. With APF the flood lands in global-default (its seats few, a LIST of
thousands of objects worth 10 of them) and the renewals in node-high, so their p99 should stay
near the quiet one; without APF every LIST runs at once and the renewals queue behind them.
Prints one table with p50/p99/max, the flood's answers (200 / 429), and CPU seconds per process
(server, flood, bench), with the load average at start.

A second table is APF's own cost per request: before the flood cases, in alternating rounds, the
same two servers serve closed-loop GETs of one ConfigMap and ConfigMap creates from a service
account (`bench.rbac`'s caller and load: its token classifies into service-accounts /
workload-low, a queuing level), and the server's CPU µs per request with APF is set beside the
one without (target: at most a few % more, ≤ 1.05).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import aiohttp

from bench import rbac
from bench._report import format_value, markdown_table
from bench._server_process import REPO, ServerProcess, child_env

ADMIN = rbac.ADMIN
COST_TARGET = 1.05
NAMESPACE = "flood"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"


def _admin_headers(**extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json", **extra}


def _node_headers(node: str) -> dict[str, str]:
    return _admin_headers(**{"Impersonate-User": f"system:node:{node}", "Impersonate-Group": "system:nodes"})


async def _post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> None:
    async with session.post(url, json=body, headers=_admin_headers()) as resp:
        if resp.status not in (201, 409):
            raise RuntimeError(f"POST {url} answered {resp.status}: {(await resp.read())[:300]!r}")


async def prepare(server: ServerProcess, objects: int, size: int, nodes: int) -> None:
    """The large collection and one Lease per node."""
    async with aiohttp.ClientSession() as session:
        await _post(session, f"{server.url}/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        filler = "x" * size
        names = iter(range(objects))

        async def writer() -> None:
            for i in names:
                await _post(session, f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps",
                            {"metadata": {"name": f"cm-{i:06d}"}, "data": {"payload": filler}})
        await asyncio.gather(*(writer() for _ in range(16)))
        for n in range(nodes):
            await _post(session, server.url + LEASES, {"metadata": {"name": f"node-{n}"},
                                                       "spec": {"holderIdentity": f"node-{n}", "leaseDurationSeconds": 40}})


def _micro_time() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def renew(server: ServerProcess, nodes: int, interval: float, seconds: float) -> tuple[list[float], int]:
    """Each node PUTs its Lease every `interval` s for `seconds`: (latencies in seconds, refused)."""
    latencies: list[float] = []
    refused = 0
    deadline = time.monotonic() + seconds

    async def node(session: aiohttp.ClientSession, name: str) -> None:
        nonlocal refused
        url = f"{server.url}{LEASES}/{name}"
        headers = _node_headers(name)
        async with session.get(url, headers=headers) as resp:
            lease = await resp.json()
        while time.monotonic() < deadline:
            lease["spec"]["renewTime"] = _micro_time()
            started = time.perf_counter()
            async with session.put(url, data=json.dumps(lease), headers=headers) as resp:
                body = await resp.read()
            elapsed = time.perf_counter() - started
            if resp.status == 200:
                latencies.append(elapsed)
                lease = json.loads(body)
            elif resp.status == 429:
                refused += 1
            else:
                raise RuntimeError(f"renewing {name} answered {resp.status}: {body[:300]!r}")
            await asyncio.sleep(max(0.0, interval - elapsed))

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=nodes + 2)) as session:
        await asyncio.gather(*(node(session, f"node-{n}") for n in range(nodes)))
    return latencies, refused


async def _start_flood(server: ServerProcess, clients: int, seconds: float) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench._flood", server.url, f"/api/v1/namespaces/{NAMESPACE}/configmaps",
        f"--token={ADMIN}", "--clients", str(clients), "--seconds", str(seconds),
        cwd=str(REPO), env=child_env(), stdout=asyncio.subprocess.PIPE)


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def case(server: ServerProcess, *, flood: bool, args: argparse.Namespace) -> dict[str, Any]:
    cpu_before, mine_before = server.cpu_seconds(), time.process_time()
    flooder = None
    if flood:
        warm = 1.0  # the flood is at full tilt before the first renewal is timed
        flooder = await _start_flood(server, args.clients, args.seconds + warm)
        await asyncio.sleep(warm)
    latencies, refused = await renew(server, args.nodes, args.interval, args.seconds)
    flood_result: dict[str, Any] = {}
    if flooder is not None:
        out, _ = await flooder.communicate()
        flood_result = json.loads(out.decode().strip().splitlines()[-1])
    return {"latencies": latencies, "refused": refused, "flood": flood_result,
            "server_cpu": server.cpu_seconds() - cpu_before, "bench_cpu": time.process_time() - mine_before}


def rows(results: dict[tuple[str, str], dict[str, Any]]) -> list[list[str]]:
    out = []
    for mode in ("APF on", "APF off"):
        quiet_p99 = _quantile(results[(mode, "quiet")]["latencies"], 0.99)
        for name in ("quiet", "flood"):
            r = results[(mode, name)]
            lat = r["latencies"]
            p99 = _quantile(lat, 0.99)
            codes = r["flood"].get("codes", {})
            out.append([
                f"{mode}, {name}", format_value(_quantile(lat, 0.5) * 1e3, "ms"), format_value(p99 * 1e3, "ms"),
                format_value(max(lat) * 1e3 if lat else float("nan"), "ms"),
                "anchor" if name == "quiet" else f"{p99 / quiet_p99:.1f}x" if quiet_p99 else "n/a",
                f"{len(lat)} / {r['refused']}",
                f"{codes.get('200', 0)} / {codes.get('429', 0)}" if name == "flood" else "-",
                f"{r['server_cpu']:.2f} / {r['flood'].get('cpu_seconds', 0.0):.2f} / {r['bench_cpu']:.2f}",
            ])
    return out


async def cost(servers: dict[str, ServerProcess], args: argparse.Namespace) -> list[list[str]]:
    """Server CPU µs per GET and per create, APF on beside APF off (`bench.rbac`'s caller and load)."""
    tokens = {mode: await rbac.prepare(server, 1) for mode, server in servers.items()}
    per_request: dict[tuple[str, str], list[float]] = {}
    for round_index in range(args.cost_rounds):  # alternate, so both sides see the same machine load
        # ...and swap who goes first each round: the first of a pair ran right after the other's load.
        order = list(servers.items()) if round_index % 2 == 0 else list(servers.items())[::-1]
        for request in ("GET", "create"):
            for mode, server in order:
                if request == "GET":
                    method, url = "GET", f"{server.url}/api/v1/namespaces/{rbac.NAMESPACE}/configmaps/target"
                else:
                    method, url = "POST", f"{server.url}/api/v1/namespaces/{rbac.NAMESPACE}/configmaps"
                before = server.cpu_seconds()
                ok, _ = await rbac._load(method, url, tokens[mode], args.connections, args.cost_seconds)
                per_request.setdefault((mode, request), []).append((server.cpu_seconds() - before) / ok * 1e6)
    out = []
    for request in ("GET", "create"):
        on = statistics.median(per_request[("APF on", request)])
        off = statistics.median(per_request[("APF off", request)])
        out.append([request, f"{on:.0f} µs", f"{off:.0f} µs", f"{on / off:.3f}", f"<= {COST_TARGET:.2f}",
                    "PASS" if on / off <= COST_TARGET else "FAIL"])
    return out


async def run(args: argparse.Namespace) -> tuple[dict[tuple[str, str], dict[str, Any]], list[list[str]]]:
    results: dict[tuple[str, str], dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="haru-bench-apf-") as tmp:
        servers: dict[str, ServerProcess] = {}
        try:
            for mode, flag in (("APF on", "true"), ("APF off", "false")):
                servers[mode] = await ServerProcess.start_apiserver(
                    Path(tmp) / flag, name=f"haru apiserver ({mode})",
                    extra=("--admin-token", ADMIN, "--authorization-mode", "AlwaysAllow",
                           "--enable-priority-and-fairness", flag))
            costs = await cost(servers, args)
            for mode, server in servers.items():
                await prepare(server, args.objects, args.size, args.nodes)
                for name in ("quiet", "flood"):
                    results[(mode, name)] = await case(server, flood=name == "flood", args=args)
        finally:
            for server in servers.values():
                await server.stop()
    return results, costs


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench.apf", description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=3000, help="ConfigMaps in the flooded collection")
    parser.add_argument("--size", type=int, default=1000, help="bytes of data per ConfigMap")
    parser.add_argument("--nodes", type=int, default=10, help="Leases renewed side by side")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between one node's renewals")
    parser.add_argument("--clients", type=int, default=32, help="concurrent LISTs in the flood")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds each case is timed")
    parser.add_argument("--cost-rounds", type=int, default=3, help="alternating rounds of the per-request cost")
    parser.add_argument("--cost-seconds", type=float, default=2.0, help="seconds of each cost round")
    parser.add_argument("--connections", type=int, default=8, help="closed-loop clients of the cost rounds")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"# bench.apf: lease renewals under a LIST flood of {args.clients} clients x {args.objects} ConfigMaps "
          f"of {args.size} B; {args.nodes} nodes renewing every {args.interval}s for {args.seconds}s per case")
    print(f"nproc: {os.cpu_count()}    load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    results, costs = asyncio.run(run(args))
    header = ["case", "renew p50", "renew p99", "renew max", "p99 vs quiet", "renewals / 429",
              "flood LISTs 200 / 429", "CPU s (server / flood / bench)"]
    print(markdown_table(header, rows(results)))
    on, off = results[("APF on", "flood")]["latencies"], results[("APF off", "flood")]["latencies"]
    if on and off:
        print(f"flood p99, APF off / APF on: {_quantile(off, 0.99) / _quantile(on, 0.99):.1f}x; "
              f"median {statistics.median(off) / statistics.median(on):.1f}x")
    print()
    print(f"## APF's cost per request: server CPU µs, median of {args.cost_rounds} alternating rounds of "
          f"{args.cost_seconds:g} s, {args.connections} connections, a service account's token")
    print(markdown_table(["request", "APF on", "APF off (anchor)", "ratio", "target", "verdict"], costs))
    return 0 if all(row[-1] == "PASS" for row in costs) else 1


if __name__ == "__main__":
    sys.exit(main())
