"""`NodesHost`: N hollow kubelets over one shared `RestClient`, in one event loop.

`start(client, shapes, ...)` registers every node concurrently (one asyncio task group of work per
kubelet) and returns once each has its Node, its Lease and its pods listed. `view` is the
read-only runtime view (`runtime.view.RuntimeView`) for the kubelet HTTP endpoint, which listens
once for the whole process at `address:port` — the port every Node advertises as
`daemonEndpoints.kubeletEndpoint.Port`. Used by `nodes/__main__.py` and, embedded, by
`cluster/supervisor.py`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from client.rest import RestClient
from nodes import pools
from nodes.kubelet.kubelet import Kubelet, NodeSettings
from nodes.runtime.records import Registry
from nodes.runtime.view import RuntimeView


@dataclass
class NodesHost:
    client: RestClient
    kubelets: list[Kubelet]
    registry: Registry = field(default_factory=Registry)
    address: str = "127.0.0.1"  # where the shared kubelet endpoint listens (every Node's InternalIP)
    port: int = 10250  # and its port (every Node's daemonEndpoints.kubeletEndpoint.Port)

    @property
    def view(self) -> RuntimeView:
        by_name = {k.name: k for k in self.kubelets}
        return RuntimeView(self.registry, lambda node: by_name[node].userns.table() if node in by_name else [])

    def userns_table(self) -> dict[str, list[dict[str, Any]]]:
        return {k.name: k.userns.table() for k in self.kubelets}

    async def stop(self) -> None:
        await asyncio.gather(*(k.stop() for k in self.kubelets), return_exceptions=True)


async def start(client: RestClient, shapes: list[pools.NodeShape], *, state_dir: str, address: str = "127.0.0.1",
                port: int = 10250, settings: NodeSettings = NodeSettings()) -> NodesHost:
    registry = Registry()
    kubelets = [Kubelet(client, shape, registry=registry, state_dir=state_dir, address=address, port=port,
                        settings=settings) for shape in shapes]
    host = NodesHost(client, kubelets, registry, address, port)
    try:
        async with asyncio.TaskGroup() as group:
            for kubelet in kubelets:
                group.create_task(kubelet.start())
    except BaseException:
        await host.stop()
        raise
    return host
