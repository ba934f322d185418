"""The `kubelet` fixture: a hollow kubelet endpoint serving an in-test runtime
(`fake_runtime.FakeNode`), whose reviews go to an in-process API server (the `api` fixture).
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest_asyncio

from tests.nodes import endpoint_fixture
from tests.nodes.endpoint_fixture import Kubelet


@pytest_asyncio.fixture
async def kubelet(api: Any) -> AsyncIterator[Kubelet]:
    async with endpoint_fixture.running(api.url) as running:
        yield running
