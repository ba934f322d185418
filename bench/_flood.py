"""A LIST flood from one ordinary user, as a child process: `python -m bench._flood URL PATH`.

`--clients` closed-loop aiohttp clients GET `PATH` (a large collection) for `--seconds`, each as
the same user: the bearer token of `--token` with `Impersonate-User: --user` (the admin may
impersonate), so the server classifies every request as that user's (global-default under
upstream's FlowSchemas). Bodies are read and dropped, never decoded: the flood should cost the
server, not this process. At the end it prints one JSON line: answers by status code, the
priority-level UIDs the answers carried, and its own CPU seconds. A separate process, so its
work never shares a GIL with the cluster or the clients measuring it; used by `bench.apf` and
by the acceptance test in tests/e2e/test_list_flood.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter

import aiohttp


async def flood(url: str, path: str, token: str, user: str, clients: int, seconds: float) -> dict[str, object]:
    codes: Counter[str] = Counter()
    levels: Counter[str] = Counter()
    headers = {"Authorization": f"Bearer {token}", "Impersonate-User": user, "Accept": "application/json"}
    deadline = time.monotonic() + seconds

    async def client(session: aiohttp.ClientSession) -> None:
        while time.monotonic() < deadline:
            try:
                async with session.get(url + path, headers=headers) as resp:
                    while await resp.content.read(1 << 20):
                        pass
                    codes[str(resp.status)] += 1
                    levels[resp.headers.get("X-Kubernetes-PF-PriorityLevel-UID", "")] += 1
                    if resp.status == 429:  # what client-go does: wait Retry-After, then again
                        await asyncio.sleep(float(resp.headers.get("Retry-After", "1")))
            except aiohttp.ClientError as exc:
                codes[type(exc).__name__] += 1
                await asyncio.sleep(0.1)

    connector = aiohttp.TCPConnector(limit=clients, ssl=False)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as session:
        await asyncio.gather(*(client(session) for _ in range(clients)))
    return {"codes": dict(codes), "priority_level_uids": dict(levels), "cpu_seconds": time.process_time()}


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench._flood")
    parser.add_argument("url")
    parser.add_argument("path")
    parser.add_argument("--token", required=True)
    parser.add_argument("--user", default="flooder")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    result = asyncio.run(flood(args.url, args.path, args.token, args.user, args.clients, args.seconds))
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
