"""`haru fault node NODE down|up`: stop one hollow kubelet as if its machine died, and bring it back.

`set_kubelet_state(rest, "cpu-node-0", "down")` labels the Node `haru.dev/kubelet-fault=down`
over the API (`up` removes the label). The nodes process, wherever it runs, follows the labelled
Nodes (`KubeletFaults`, one informer selecting that label, started by `nodes.host`): for `down` it
stops that kubelet without touching the API (its Lease renewals, status reports and pod workers end,
its endpoint socket closes), so the node lifecycle controller sees an expired Lease; for `up` it
starts a fresh kubelet that re-registers, renews its Lease and resumes its pods. A label, not an
annotation, so that only faulted Nodes are cached. `cluster/cli.py` calls `set_kubelet_state`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from client import errors
from client.informer import Event, Informer
from client.resources import NODES
from client.rest import RestClient

log = logging.getLogger("haru.nodes.fault")
LABEL = "haru.dev/kubelet-fault"
DOWN = "down"
STATES = ("down", "up")


class NodeFaultError(Exception):
    pass


def add_node_command(kinds: Any) -> None:
    """The `node NODE down|up` command, for `haru fault`."""
    node = kinds.add_parser("node", help="stop (down) or restart (up) a hollow node's kubelet")
    node.add_argument("node", metavar="NODE")
    node.add_argument("state", choices=STATES)


async def set_kubelet_state(rest: RestClient, node_name: str, state: str) -> str:
    if state not in STATES:
        raise NodeFaultError(f"state must be one of {', '.join(STATES)}, got {state!r}")
    try:
        await rest.patch(NODES, node_name, {"metadata": {"labels": {LABEL: DOWN if state == "down" else None}}})
    except errors.APIError as err:
        if errors.is_not_found(err):
            raise NodeFaultError(f'node "{node_name}" not found') from None
        raise
    if state == "down":
        return f"node/{node_name} kubelet stopped (no more Lease renewals or status updates)"
    return f"node/{node_name} kubelet started"


class KubeletFaults:
    """Follows the Nodes labelled down and stops or restarts the host's kubelets to match.

    `stop_kubelet(name)` and `start_kubelet(name)` are the host's; they are called one at a time per
    node, in the order the label changed.
    """

    def __init__(self, client: RestClient, names: set[str], stop_kubelet: Callable[[str], Awaitable[None]],
                 start_kubelet: Callable[[str], Awaitable[None]]) -> None:
        self.client = client
        self.names = names
        self.stop_kubelet, self.start_kubelet = stop_kubelet, start_kubelet
        self.down: set[str] = set()
        self.informer = Informer.for_resource(client, NODES, label_selector=LABEL)
        self._queue: asyncio.Queue[tuple[str, bool]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.informer.add_handler(self._on_event)
        self.informer.start()
        self._task = asyncio.create_task(self._apply(), name="kubelet faults")
        await self.informer.wait_synced()

    async def stop(self) -> None:
        await self.informer.stop()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def _on_event(self, event: Event) -> None:
        meta = event.obj.get("metadata") or {}
        name = meta.get("name")
        if name not in self.names:
            return
        # DELETED: the Node lost the label (it left the selector) or was deleted; either way, back up.
        wanted_down = event.type != "DELETED" and (meta.get("labels") or {}).get(LABEL) == DOWN
        self._queue.put_nowait((name, wanted_down))

    async def _apply(self) -> None:
        while True:
            name, wanted_down = await self._queue.get()
            try:
                if wanted_down and name not in self.down:
                    self.down.add(name)
                    await self.stop_kubelet(name)
                    log.warning("node %s: kubelet stopped (%s=%s)", name, LABEL, DOWN)
                elif not wanted_down and name in self.down:
                    await self.start_kubelet(name)
                    self.down.discard(name)
                    log.warning("node %s: kubelet started again", name)
            except Exception as exc:  # noqa: BLE001 - one node's trouble must not end the others' faults
                log.warning("node %s: could not apply the kubelet fault: %s", name, exc)

