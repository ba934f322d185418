"""`python -m bench.rbac`: the cost of RBAC on GET and on create, beside AlwaysAllow in the same run.

Issue 14's benchmark. Two API servers run as child processes (`bench._apiserver_child` with a
bearer-token admin): one with `--authorization-mode` `--mode` (default `Node,RBAC`, `haru up`'s:
the Node authorizer sees the caller is no node and passes it to RBAC), one `AlwaysAllow`. Both hold the same RBAC
objects: upstream's bootstrap policy plus NAMESPACES namespaces with three Roles and three
RoleBindings each, so the authorizer has a realistic index to look in. The caller is a service
account (its token from each server's TokenRequest), bound to an edit-like Role in its namespace, so on
the RBAC side every request is decided by RBAC (system:masters would short-circuit it). In
alternating rounds (which server goes first swaps each round), CONNECTIONS closed-loop aiohttp
clients GET one ConfigMap and then create ConfigMaps for SECONDS each. The machine is shared, so
the figures are server CPU per request (from /proc) rather than wall-clock throughput alone; the
target is RBAC ≤ 10 % more CPU per request than AlwaysAllow, on GET and on create. Prints one
table with both numbers, the ratio and the CPU each process used.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench._report import markdown_table
from bench._server_process import ServerProcess

TARGET = 1.10
ADMIN = "bench-admin"
NAMESPACE = "bench"
ACCOUNT = "robot"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
_NAMES = itertools.count()  # one sequence for every round, so no create collides with an earlier one


async def _post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> None:
    async with session.post(url, json=body, headers={"Authorization": f"Bearer {ADMIN}"}) as resp:
        if resp.status != 201:
            raise RuntimeError(f"POST {url} answered {resp.status}: {(await resp.read())[:500]!r}")


def _role(name: str, verbs: list[str], resources: list[str]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "rules": [{"verbs": verbs, "apiGroups": [""], "resources": resources}]}


def _binding(name: str, role: str, account: str, namespace: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]}


async def prepare(server: ServerProcess, namespaces: int) -> str:
    """Fill `server` with the namespaces, Roles and bindings; the caller's token (TokenRequest)."""
    async with aiohttp.ClientSession() as session:
        for index in range(namespaces):
            ns = NAMESPACE if index == 0 else f"tenant-{index}"
            await _post(session, f"{server.url}/api/v1/namespaces", {"metadata": {"name": ns}})
            roles = [("reader", ["get", "list", "watch"], ["pods", "services"]),
                     ("writer", ["create", "update", "delete"], ["secrets", "services"]),
                     ("editor", ["get", "list", "create", "update", "delete"], ["configmaps", "pods"])]
            for role, verbs, resources in roles:
                await _post(session, f"{server.url}{RBAC}/namespaces/{ns}/roles", _role(role, verbs, resources))
                account = ACCOUNT if (ns == NAMESPACE and role == "editor") else f"sa-{role}"
                await _post(session, f"{server.url}{RBAC}/namespaces/{ns}/rolebindings",
                            _binding(f"{role}-binding", role, account, ns))
        await _post(session, f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps",
                    {"metadata": {"name": "target"}, "data": {"k": "v"}})
        # Each server signs with its own key, and a token holds only while its account exists.
        await _post(session, f"{server.url}/api/v1/namespaces/{NAMESPACE}/serviceaccounts",
                    {"metadata": {"name": ACCOUNT}})
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"expirationSeconds": 24 * 3600}}
        async with session.post(f"{server.url}/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{ACCOUNT}/token",
                                json=request, headers={"Authorization": f"Bearer {ADMIN}"}) as resp:
            if resp.status != 201:
                raise RuntimeError(f"TokenRequest answered {resp.status}: {(await resp.read())[:500]!r}")
            return (await resp.json())["status"]["token"]


async def _load(method: str, url: str, token: str, connections: int, seconds: float) -> tuple[int, int]:
    """(successful requests, failures) from `connections` closed-loop clients over `seconds`."""
    ok = failed = 0
    last_failure = ""
    deadline = time.perf_counter() + seconds
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json", "Content-Type": "application/json"}

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal ok, failed, last_failure
        while time.perf_counter() < deadline:
            body = None
            if method == "POST":
                body = (b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"},"data":{"k":"v"}}'
                        % next(_NAMES))
            async with session.request(method, url, data=body, headers=headers) as resp:
                await resp.read()
                if resp.status in (200, 201):
                    ok += 1
                else:
                    failed += 1
                    last_failure = f"{resp.status} {(await resp.read())[:300]!r}"

    connector = aiohttp.TCPConnector(limit=connections)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(client(session) for _ in range(connections)))
    if failed:
        raise RuntimeError(f"{failed} of {ok + failed} {method} {url} failed; the last: {last_failure}")
    return ok, failed


async def run(namespaces: int, rounds: int, seconds: float, connections: int,
              authorized: str = "Node,RBAC") -> list[list[str]]:
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}  # (mode, case) → [(req/s, server µs/req)]
    bench_cpu: dict[str, float] = {}
    server_cpu: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="haru-bench-rbac-") as tmp:
        servers = {}
        for mode in ("AlwaysAllow", authorized):
            servers[mode] = await ServerProcess.start_apiserver(
                Path(tmp) / mode, name=f"haru apiserver ({mode})",
                extra=("--admin-token", ADMIN, "--authorization-mode", mode))
        try:
            tokens = {mode: await prepare(server, namespaces) for mode, server in servers.items()}
            for round_index in range(rounds):  # alternate, so both sides see the same machine load
                # and swap which side goes first each round: the second of a pair ran right after
                # the other's load (its writes still being flushed), and paid for it on create.
                order = list(servers.items()) if round_index % 2 == 0 else list(servers.items())[::-1]
                for case in ("GET", "create"):
                    for mode, server in order:
                        if case == "GET":
                            url, method = f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps/target", "GET"
                        else:
                            url, method = f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps", "POST"
                        cpu_before, mine_before = server.cpu_seconds(), time.process_time()
                        started = time.perf_counter()
                        ok, failed = await _load(method, url, tokens[mode], connections, seconds)
                        wall = time.perf_counter() - started
                        used = server.cpu_seconds() - cpu_before
                        if failed or not ok:
                            raise RuntimeError(f"{failed} of {ok + failed} {case} requests failed against {mode}")
                        results.setdefault((mode, case), []).append((ok / wall, used / ok * 1e6))
                        server_cpu[mode] = server_cpu.get(mode, 0.0) + used
                        bench_cpu[mode] = bench_cpu.get(mode, 0.0) + time.process_time() - mine_before
        finally:
            for server in servers.values():
                await server.stop()
    rows = []
    for case in ("GET", "create"):
        allow = statistics.median(us for _, us in results[("AlwaysAllow", case)])
        rbac = statistics.median(us for _, us in results[(authorized, case)])
        allow_rate = statistics.median(r for r, _ in results[("AlwaysAllow", case)])
        rbac_rate = statistics.median(r for r, _ in results[(authorized, case)])
        ratio = rbac / allow
        rows.append([case, f"{rbac:.0f} µs ({rbac_rate:.0f}/s)", f"{allow:.0f} µs ({allow_rate:.0f}/s)",
                     f"{ratio:.3f}", f"<= {TARGET:.2f}", "PASS" if ratio <= TARGET else "FAIL"])
    rows.append(["CPU s (server + bench)", f"{server_cpu[authorized]:.2f} + {bench_cpu[authorized]:.2f}",
                 f"{server_cpu['AlwaysAllow']:.2f} + {bench_cpu['AlwaysAllow']:.2f}", "", "", ""])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rbac", description=__doc__.split("\n")[0])
    parser.add_argument("--namespaces", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--mode", default="Node,RBAC", help="the authorized side's --authorization-mode")
    args = parser.parse_args()
    rows = asyncio.run(run(args.namespaces, args.rounds, args.seconds, args.connections, args.mode))
    print(f"# bench.rbac — {platform.python_implementation()} {platform.python_version()}, "
          f"{args.namespaces} namespaces × 3 roles + 3 bindings beside the bootstrap policy, "
          f"{args.connections} connections, {args.rounds} alternating rounds of {args.seconds:g} s; "
          "server CPU µs per request (median of rounds; shared machine: CPU, not wall time, is the figure)")
    print(markdown_table(["case", args.mode, "AlwaysAllow", "ratio", "target", "verdict"], rows))
    return 0 if all(r[5] != "FAIL" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
