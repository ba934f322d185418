"""Nodes: the one kind whose status a client may set on create.

Create keeps every field, status included, which is how a kubelet (or a kubemark-style tool)
registers a node with its capacity and addresses in one POST; only the retired dynamic kubelet
config (spec.configSource, status.config) is dropped, as upstream's dropDisabledFields does. Update
keeps the stored status; `/status` (the generic `StatusStrategy`) keeps everything but status.
Nodes count no metadata.generation. Upstream: pkg/registry/core/node/strategy.go.
"""

from __future__ import annotations

from apiserver.kinds.defaulting import NoGenerationStrategy
from apiserver.strategy import Obj


class NodeStrategy(NoGenerationStrategy):
    def prepare_for_create(self, obj: Obj) -> None:
        status = obj.get("status")
        super().prepare_for_create(obj)  # the generic rule clears status; nodes keep it
        if isinstance(status, dict):
            status.pop("config", None)
            obj["status"] = status
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.pop("configSource", None)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)  # status from the stored node
        spec, old_spec = new.get("spec"), old.get("spec") or {}
        # A config source already in use may stay; nobody may start using the retired feature.
        if isinstance(spec, dict) and "configSource" not in old_spec:
            spec.pop("configSource", None)
