"""`PodFeed`: one pod informer for every kubelet of a `NodesHost`, handed out by `spec.nodeName`.

A real kubelet watches `pods?fieldSelector=spec.nodeName=<me>`; N hollow kubelets doing the same
open N watches, and the API server then filters every pod event once per watch (5,000 nodes: 5,000
decodes and selector checks per pod write, which held 500 pod creates to 3/s). The feed opens one
watch of the bound pods (`spec.nodeName!=`) and indexes them by node, so a kubelet reads its pods
with `pods_on(name)` and gets its events through `subscribe(name, handler)`. Started by `nodes.host`
before the kubelets; a `Kubelet` without a feed keeps its own field-selected informer.
"""

from __future__ import annotations

from typing import Any

from client.informer import Event, Handler, Informer
from client.resources import PODS
from client.rest import RestClient

Obj = dict[str, Any]
BY_NODE = "spec.nodeName"


def _node_of(pod: Obj) -> list[str]:
    node = (pod.get("spec") or {}).get("nodeName")
    return [node] if node else []


class PodFeed:
    def __init__(self, client: RestClient) -> None:
        self.informer = Informer.for_resource(client, PODS, None, field_selector="spec.nodeName!=",
                                              indexers={BY_NODE: _node_of})
        self._handlers: dict[str, Handler] = {}

    async def start(self) -> None:
        self.informer.start()
        await self.informer.wait_synced()
        self.informer.add_handler(self._dispatch)

    async def stop(self) -> None:
        await self.informer.stop()

    def pods_on(self, node: str) -> list[Obj]:
        return self.informer.store.by_index(BY_NODE, node)

    def subscribe(self, node: str, handler: Handler) -> None:
        """From now on `handler` sees every event of a pod bound to `node` (call right after `pods_on`,
        with no await between, so that nothing falls in the gap)."""
        self._handlers[node] = handler

    def unsubscribe(self, node: str) -> None:
        self._handlers.pop(node, None)

    def _dispatch(self, event: Event) -> None:
        if event.initial:
            return  # the store as first listed: each kubelet reads its share with pods_on
        nodes = _node_of(event.obj)
        for node in nodes:
            handler = self._handlers.get(node)
            if handler is not None:
                handler(event)
        if event.old is not None:
            # Deleted and recreated under the same name on another node: for the old node it is gone.
            for node in _node_of(event.old):
                handler = self._handlers.get(node)
                if node not in nodes and handler is not None:
                    handler(Event("DELETED", event.old))
