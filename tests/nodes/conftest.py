"""A hollow kubelet endpoint serving an in-test runtime (`fake_runtime.FakeNode`), whose reviews
go to an in-process API server (the `api` fixture), and a session that skips TLS verification
as the API server does towards kubelets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, AsyncIterator

import aiohttp
import pytest_asyncio

from client.kubeconfig import Config
from client.rest import RestClient
from nodes.server import KubeletEndpoint
from tests.nodes.fake_runtime import FakeNode


@dataclass
class Kubelet:
    node: FakeNode
    endpoint: KubeletEndpoint
    port: int
    session: aiohttp.ClientSession

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    async def get(self, path: str, **kwargs: Any) -> tuple[int, str]:
        async with self.session.get(self.url(path), **kwargs) as resp:
            return resp.status, await resp.text()


@pytest_asyncio.fixture
async def kubelet(api: Any) -> AsyncIterator[Kubelet]:
    rest = RestClient(Config.for_url(api.url))
    endpoint = KubeletEndpoint(rest)
    await endpoint.start()
    node = FakeNode()
    port = await endpoint.serve(node)
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False))
    try:
        yield Kubelet(node, endpoint, port, session)
    finally:
        await session.close()
        await endpoint.stop()
        await rest.close()
