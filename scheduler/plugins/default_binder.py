"""DefaultBinder: binds a pod to its node with POST pods/<name>/binding, as upstream's plugin does.

The Binding names the pod (with its uid, so a pod deleted and recreated under the same name is not
bound by mistake) and targets the Node; the API server sets spec.nodeName and the PodScheduled
condition. An API error (409: already bound, 404: gone) becomes Status ERROR and the binding
cycle undoes the assumption.
"""

from __future__ import annotations

from typing import Any

from client.resources import PODS
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Features, Handle
from scheduler.framework.status import Status
from scheduler.plugins import names


class DefaultBinder:
    name = names.DEFAULT_BINDER

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    async def bind(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status | None:
        meta = pod.get("metadata") or {}
        binding = {"apiVersion": "v1", "kind": "Binding",
                   "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"), "uid": meta.get("uid")},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        try:
            await self.handle.client.request("POST", PODS.path(meta.get("namespace"), meta.get("name"), "binding"),
                                             body=binding)
        except Exception as exc:  # noqa: BLE001 - any failure to bind is this pod's error
            return Status.as_error(exc)
        return None


def new(args: dict[str, Any], handle: Handle, features: Features) -> DefaultBinder:
    return DefaultBinder(handle)
