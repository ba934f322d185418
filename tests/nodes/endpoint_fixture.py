"""Start a hollow kubelet endpoint over an in-test runtime for the duration of a test.

Shared by `tests/nodes/conftest.py` and the API server's proxy tests: the endpoint's reviews go
to the given API server URL; the session skips TLS verification as the API server does.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, AsyncIterator

import aiohttp

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


@contextlib.asynccontextmanager
async def running(api_url: str, node: FakeNode | None = None, token: str | None = None,
                  ca_pem: bytes | None = None) -> AsyncIterator[Kubelet]:
    rest = RestClient(Config.for_url(api_url, token=token, ca_pem=ca_pem))
    endpoint = KubeletEndpoint(rest)
    await endpoint.start()
    node = node or FakeNode()
    port = await endpoint.serve(node)
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False))
    try:
        yield Kubelet(node, endpoint, port, session)
    finally:
        await session.close()
        await endpoint.stop()
        await rest.close()
