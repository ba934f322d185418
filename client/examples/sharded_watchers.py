"""N sharded pod watchers that together see every pod exactly once (KEP-5866, `shardSelector`).

    python -m client.examples.sharded_watchers --kubeconfig .haru/kubeconfig --shards 4 --seconds 30

Each watcher is one asyncio task with its own HTTP stream over its own slice of the 64-bit hash
space of `metadata.uid`: it LISTs its shard, then WATCHes from the list's resourceVersion with the
same selector, re-watching where a stream ends or fails retriably, re-listing after a 410. A
server that ignored the parameter (the gate off, or older than 1.36) answers without
`metadata.shardInfo`; the watcher then filters for itself with the same FNV-1a 64 rule. At the
end it prints each shard's pods and checks that no pod reached two shards. Plain aiohttp; only
the kubeconfig reader is haru's client.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass, field
from typing import Any

import aiohttp

TOP = 1 << 64


def shard_selectors(count: int, field_path: str = "object.metadata.uid") -> list[str]:
    """`count` selectors that split [0, 2^64) into equal, adjacent ranges."""
    def hex_bound(value: int) -> str:
        return "0x10000000000000000" if value == TOP else f"0x{value:016x}"
    cuts = [TOP * i // count for i in range(count + 1)]
    return [f"shardRange({field_path}, '{hex_bound(cuts[i])}', '{hex_bound(cuts[i + 1])}')" for i in range(count)]


def bounds_of(selector: str) -> tuple[int, int]:
    """The one range of a selector made by `shard_selectors` (for filtering on the client)."""
    start, end = (part.strip(" ')") for part in selector.split(",")[1:])
    return int(start, 16), int(end, 16)


def fnv1a64(text: str) -> int:
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


@dataclass
class Shard:
    index: int
    selector: str
    seen: dict[str, str] = field(default_factory=dict)  # uid -> namespace/name
    server_side: bool | None = None  # None until the first LIST says

    def keep(self, obj: dict[str, Any]) -> bool:
        if self.server_side:
            return True
        low, high = bounds_of(self.selector)
        return low <= fnv1a64(obj["metadata"].get("uid", "")) < high

    def note(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        if self.keep(obj):
            self.seen[meta["uid"]] = f"{meta.get('namespace', '')}/{meta['name']}"


async def watch_shard(http: aiohttp.ClientSession, path: str, shard: Shard, stop: asyncio.Event) -> None:
    """LIST then WATCH one shard until `stop` is set."""
    while not stop.is_set():
        async with http.get(path, params={"shardSelector": shard.selector}) as response:
            response.raise_for_status()
            listed = await response.json()
        shard.server_side = "shardInfo" in listed["metadata"]
        for item in listed["items"]:
            shard.note(item)
        rv = listed["metadata"]["resourceVersion"]
        while not stop.is_set():
            params = {"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true",
                      "timeoutSeconds": "30", "shardSelector": shard.selector}
            expired = False
            async with http.get(path, params=params) as response:
                if response.status == 410:
                    break  # compacted: list again
                if response.status in (429, 500, 503, 504):  # e.g. a resourceVersion not yet visible
                    await asyncio.sleep(0.1)
                    continue
                response.raise_for_status()
                reading = asyncio.ensure_future(_read_events(response, shard))
                stopping = asyncio.ensure_future(stop.wait())
                await asyncio.wait([reading, stopping], return_when=asyncio.FIRST_COMPLETED)
                stopping.cancel()
                if not reading.done():
                    reading.cancel()
                    return
                last_rv, expired = reading.result()
                rv = last_rv or rv
            if expired:
                break  # 410: list again


async def _read_events(response: aiohttp.ClientResponse, shard: Shard) -> tuple[str | None, bool]:
    last_rv = None
    async for line in response.content:
        if not line.strip():
            continue
        event = json.loads(line)
        obj = event["object"]
        if event["type"] == "ERROR":
            return last_rv, obj.get("code") == 410
        last_rv = obj["metadata"].get("resourceVersion", last_rv)
        if event["type"] != "BOOKMARK":
            shard.note(obj)
    return last_rv, False


def make_shards(count: int) -> list[Shard]:
    return [Shard(i, selector) for i, selector in enumerate(shard_selectors(count))]


async def run(server: str, shards: int | list[Shard], seconds: float, *, namespace: str | None = None,
              headers: dict[str, str] | None = None, ssl: Any = None,
              stop: asyncio.Event | None = None) -> list[Shard]:
    """Watch pods with one task per shard for `seconds` (or until `stop` is set); return what each saw."""
    path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
    stop = stop or asyncio.Event()
    result = make_shards(shards) if isinstance(shards, int) else shards
    connector = aiohttp.TCPConnector(ssl=ssl if ssl is not None else True, limit=0)
    async with aiohttp.ClientSession(server, headers=headers, connector=connector) as http:
        tasks = [asyncio.create_task(watch_shard(http, path, shard, stop)) for shard in result]
        try:
            await asyncio.wait_for(stop.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            stop.set()
        await asyncio.gather(*tasks)
    return result


def overlaps(result: list[Shard]) -> set[str]:
    """Uids that more than one shard saw (empty when sharding works)."""
    owners: dict[str, int] = {}
    for shard in result:
        for uid in shard.seen:
            owners[uid] = owners.get(uid, 0) + 1
    return {uid for uid, count in owners.items() if count > 1}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", help="a kubeconfig (haru up writes DATA_DIR/kubeconfig)")
    parser.add_argument("--server", help="an http:// URL instead of a kubeconfig")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--namespace", default=None)
    args = parser.parse_args(argv)
    if args.kubeconfig:
        from client import kubeconfig

        config = kubeconfig.load(args.kubeconfig)
        server, headers, ssl = config.server, config.headers(), config.ssl_context()
    elif args.server:
        server, headers, ssl = args.server, {}, None
    else:
        parser.error("give --kubeconfig or --server")
    result = asyncio.run(run(server, args.shards, args.seconds, namespace=args.namespace, headers=headers, ssl=ssl))
    for shard in result:
        how = "server-side" if shard.server_side else "client-side (the server ignored shardSelector)"
        print(f"shard {shard.index} {shard.selector}: {len(shard.seen)} pods, filtered {how}")
    twice = overlaps(result)
    print(f"{sum(len(s.seen) for s in result)} pods in all; seen by two shards: {len(twice)}")
    return 1 if twice else 0


if __name__ == "__main__":
    sys.exit(main())
