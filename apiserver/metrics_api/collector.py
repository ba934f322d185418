"""When to scrape: on demand, at most every `TTL` seconds, never holding a request for long.

`fresh(server)` starts one round (shared by concurrent requests) when the last ended over `TTL`
ago: every Ready node's kubelet at once (`PARALLEL` at a time, `SCRAPE_TIMEOUT` each), and again
`GAP` later for a node whose two points are missing or over `MAX_WINDOW` apart, so windows stay near
the scrape interval. A request waits at most `REQUEST_WAIT`, then answers from what is stored: a
slow node keeps its older points. One `Collector` per server (`of(server)`, in `Server.extra`).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from typing import Any

import aiohttp

from apiserver import errors, responses
from apiserver.context import Server
from apiserver.metrics_api import points, scraping
from apiserver.subresources import kubelet

log = logging.getLogger("haru.apiserver.metrics")
TTL = 5.0
GAP = 0.5
MAX_WINDOW = 60.0
SCRAPE_TIMEOUT = 5.0
REQUEST_WAIT = 3.0
PARALLEL = 64
_KEY = "metrics_collector"


def ready(node: dict[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _tls() -> ssl.SSLContext:
    # As kube-apiserver without --kubelet-certificate-authority: the kubelet's certificate is not checked.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class Collector:
    def __init__(self) -> None:
        self.points = points.Points()
        self._session: aiohttp.ClientSession | None = None
        self._round: asyncio.Task[None] | None = None
        self._finished = float("-inf")

    async def fresh(self, server: Server) -> None:
        if self._round is None or self._round.done():
            if time.monotonic() - self._finished < TTL:
                return
            self._round = asyncio.create_task(self._refresh(server))
        try:
            await asyncio.wait_for(asyncio.shield(self._round), REQUEST_WAIT)
        except TimeoutError:
            log.info("metrics: answering before the scrape round ends (a slow kubelet)")
        except Exception:  # noqa: BLE001 - a failed round leaves the stored points to answer
            log.exception("metrics: scrape round failed")

    async def close(self) -> None:
        if self._round is not None and not self._round.done():
            self._round.cancel()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _refresh(self, server: Server) -> None:
        try:
            targets = self._targets(server)
            for gone in self.points.nodes() - set(targets):
                self.points.forget(gone)
            await self._scrape(server, targets)
            again = {name: t for name, t in targets.items()
                     if (window := self.points.node_window(name)) is None or window > MAX_WINDOW}
            if again:
                await asyncio.sleep(GAP)
                await self._scrape(server, again)
        finally:
            self._finished = time.monotonic()

    def _targets(self, server: Server) -> dict[str, kubelet.Kubelet]:
        nodes = server.registry.get("", "v1", "nodes")
        assert nodes is not None
        found: dict[str, kubelet.Kubelet] = {}
        for record in server.store.list(nodes.key_prefix).records:
            node = responses.decode(record.value)
            if not ready(node):
                continue
            try:
                found[node["metadata"]["name"]] = kubelet.kubelet_of(node)
            except errors.APIError:
                continue  # no address to reach it by: metrics-server skips it too
        return found

    async def _scrape(self, server: Server, targets: dict[str, kubelet.Kubelet]) -> None:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=_tls(), limit=PARALLEL))
        session, gate = self._session, asyncio.Semaphore(PARALLEL)

        async def one(name: str, target: kubelet.Kubelet) -> None:
            async with gate:
                try:
                    batch = await scraping.scrape(session, target, server.admin_token, SCRAPE_TIMEOUT)
                except scraping.ScrapeError as exc:
                    log.info("metrics: failed to scrape node %s: %s", name, exc)
                    return
            self.points.store(name, batch)

        await asyncio.gather(*(one(name, target) for name, target in targets.items()))


def of(server: Server) -> Collector:
    found: Collector | None = server.extra.get(_KEY)
    if found is None:
        found = server.extra[_KEY] = Collector()
    return found


async def close(server: Server) -> None:
    found: Collector | None = server.extra.pop(_KEY, None)
    if found is not None:
        await found.close()
