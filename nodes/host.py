"""`NodesHost`: N hollow kubelets in one event loop, over one shared `RestClient`, and their endpoint.

Each kubelet may act with its own identity (`own_clients`: system:node:<name>, as NodeRestriction
and the Node authorizer expect); the shared client reads for all of them (the pod feed, the DRA
driver, fault labels), as the nodes process is not a kubelet. Under `haru up` and the embedded
cluster that client is `haru:nodes-host`, with a role granting those reads and the few writes
beside them (`cluster/identities.nodes_host_grant`), never the admin. A visible deviation:
upstream's kubelets each watch their own pods as system:node:<name>; one shared watch is what lets
thousands of hollow kubelets live in one process.

`start(client, shapes, ...)` opens the kubelet HTTPS endpoint (`nodes/server.py`, one application
for the whole process), gives each node its own socket on it, lists the bound pods once for all
kubelets (`pod_feed.PodFeed`, one watch instead of one per node), then registers the nodes
(`STARTING` at a time) and returns once each has its Node, its Lease and its pods. Every Node
advertises the same `daemonEndpoints.kubeletEndpoint.Port`; on loopback each node has its own
InternalIP (127.0.0.1 + its index), so the API server's `nodes/proxy` and `pods/exec` reach the
right one, as on a real cluster. `view` is the read-only runtime view (`runtime.view.RuntimeView`).
`stop_kubelet(name)` / `start_kubelet(name)` take one node down and bring it back (a fresh kubelet
that re-registers and resumes its pods), driven by `node_fault.KubeletFaults` (`haru fault node`).
Used by `nodes/__main__.py` and, embedded, by `cluster/supervisor.py`.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
from dataclasses import dataclass, field
from typing import Any

from client.rest import RestClient
from nodes import node_fault, pools, server
from nodes.kubelet.kubelet import Kubelet, NodeSettings
from nodes.kubelet.served_view import ServedNode
from nodes.pod_feed import PodFeed
from nodes.runtime.records import Registry
from nodes.runtime.view import RuntimeView

# At most this many kubelets register at once. All 5,000 at once held 5,000 requests, responses and
# keep-alive connections in flight, and the RSS never came down from that peak (`bench.nodes`, 5,000
# nodes: 53 -> 40 KB per node, and all Ready in 5.5 s instead of 6.5: the API server is the limit).
STARTING = 128
_PORT_ATTEMPTS = 5


@dataclass
class NodesHost:
    client: RestClient
    kubelets: list[Kubelet]
    registry: Registry = field(default_factory=Registry)
    address: str = "127.0.0.1"  # the first node's InternalIP (the others follow it on loopback)
    port: int = 10250  # every Node's daemonEndpoints.kubeletEndpoint.Port
    endpoint: server.KubeletEndpoint | None = None
    feed: PodFeed | None = None  # the one pod watch every kubelet here shares
    state_dir: str = ""
    settings: NodeSettings = NodeSettings()
    faults: node_fault.KubeletFaults | None = None
    own_clients: dict[str, RestClient] = field(default_factory=dict)  # kubelet name → its own identity

    @property
    def view(self) -> RuntimeView:
        by_name = {k.name: k for k in self.kubelets}
        return RuntimeView(self.registry, lambda node: by_name[node].userns.table() if node in by_name else [])

    def userns_table(self) -> dict[str, list[dict[str, Any]]]:
        return {k.name: k.userns.table() for k in self.kubelets}

    def _index(self, name: str) -> int:
        for i, kubelet in enumerate(self.kubelets):
            if kubelet.name == name:
                return i
        raise KeyError(name)

    async def stop_kubelet(self, name: str) -> None:
        """As if the machine died: the kubelet stops without a word to the API, its socket closes."""
        kubelet = self.kubelets[self._index(name)]
        await kubelet.stop()
        if self.endpoint is not None:
            await self.endpoint.remove(name)

    async def start_kubelet(self, name: str) -> None:
        """The machine is back: a fresh kubelet on the same address and port re-registers and resumes."""
        index = self._index(name)
        old = self.kubelets[index]
        kubelet = Kubelet(self.own_clients.get(name, self.client), old.shape, registry=self.registry,
                          state_dir=self.state_dir, address=old.host_ip, port=old.port, settings=self.settings,
                          pods=self.feed, host_client=self.client)
        if self.endpoint is not None:
            kubelet.port = await self.endpoint.serve(ServedNode(kubelet), old.port, address=kubelet.host_ip)
        self.kubelets[index] = kubelet
        await kubelet.start()

    async def stop(self) -> None:
        if self.faults is not None:
            await self.faults.stop()
        await asyncio.gather(*(k.stop() for k in self.kubelets), return_exceptions=True)
        if self.feed is not None:
            await self.feed.stop()
        if self.endpoint is not None:
            await self.endpoint.stop()
        await asyncio.gather(*(c.close() for c in self.own_clients.values()), return_exceptions=True)


def node_address(base: str, index: int) -> str:
    """Loopback: one address per node (127.0.0.0/8 is all local on Linux); otherwise the one address."""
    first = ipaddress.ip_address(base)
    return str(first + index) if first.is_loopback and first.version == 4 else base


async def _serve(endpoint: server.KubeletEndpoint, kubelets: list[Kubelet], port: int) -> int:
    """Bind every node's socket: one shared port on per-node loopback addresses (0: any free one,
    retried when another node's address has it taken), else one port per node on the one address."""
    shared = len({k.host_ip for k in kubelets}) == len(kubelets)
    for _ in range(_PORT_ATTEMPTS):
        chosen = port
        try:
            for i, kubelet in enumerate(kubelets):
                wanted = chosen if shared else (port + i if port else 0)
                kubelet.port = await endpoint.serve(ServedNode(kubelet), wanted, address=kubelet.host_ip)
                chosen = kubelet.port if chosen == 0 else chosen
            return kubelets[0].port
        except OSError as exc:
            for kubelet in kubelets:
                await endpoint.remove(kubelet.name)
            if exc.errno != errno.EADDRINUSE or port != 0:
                raise
    raise OSError(errno.EADDRINUSE, f"no port free on every node's address after {_PORT_ATTEMPTS} attempts")


async def start(client: RestClient, shapes: list[pools.NodeShape], *, state_dir: str, address: str = "127.0.0.1",
                port: int = 10250, settings: NodeSettings = NodeSettings(),
                own_clients: dict[str, RestClient] | None = None) -> NodesHost:
    """`own_clients`: each kubelet's own identity (system:node:<name>), by node name; the host owns
    and closes them. A kubelet without one acts with `client`, which also reads for every kubelet."""
    own_clients = own_clients or {}
    registry = Registry()
    feed = PodFeed(client)
    kubelets = [Kubelet(own_clients.get(shape.name, client), shape, registry=registry, state_dir=state_dir,
                        address=node_address(address, i), port=port, settings=settings, pods=feed,
                        host_client=client)
                for i, shape in enumerate(shapes)]
    endpoint = server.KubeletEndpoint(client, host=address)
    host = NodesHost(client, kubelets, registry, address, port, endpoint, feed, state_dir, settings,
                     own_clients=own_clients)
    try:
        await endpoint.start()
        if kubelets:
            host.port = await _serve(endpoint, kubelets, port)
        await feed.start()
        starting = asyncio.Semaphore(STARTING)

        async def start_one(kubelet: Kubelet) -> None:
            async with starting:
                await kubelet.start()

        async with asyncio.TaskGroup() as group:
            for kubelet in kubelets:
                group.create_task(start_one(kubelet))
        host.faults = node_fault.KubeletFaults(client, {k.name for k in kubelets}, host.stop_kubelet,
                                               host.start_kubelet)
        await host.faults.start()
    except BaseException:
        await host.stop()
        raise
    return host
