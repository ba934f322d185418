"""The scheduler's cache: one NodeInfo per node with the pods on it, assumed pods included.

Fed by the node and pod informers (`scheduler/scheduler.py`): nodes with their allocatable and
images, pods once they have a `spec.nodeName` (terminal pods free their node and are dropped). A
pod the scheduler has picked a node for is *assumed* at Reserve, so the next cycle already counts
it; it is forgotten if binding fails and confirmed when the informer shows it bound. Every change
bumps the NodeInfo's generation; `update_snapshot` copies only the NodeInfos that moved since the
last snapshot, as upstream's `UpdateSnapshot` does. Image states (size and on how many nodes an
image is) come from `node.status.images` and are shared by every NodeInfo that has the image.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from typing import Any

from scheduler.framework.node_info import ImageState, NodeInfo, PodInfo, pod_key
from scheduler.framework.snapshot import Snapshot

log = logging.getLogger("haru.scheduler.cache")
Obj = dict[str, Any]


def _uid(pod: Obj) -> str:
    return (pod.get("metadata") or {}).get("uid", "") or pod_key(pod)


def _name(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


@dataclass
class _PodState:
    pod: Obj
    node: str
    assumed: bool = False
    binding_finished: bool = False


class Cache:
    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._pods: dict[str, _PodState] = {}
        self._images: dict[str, ImageState] = {}
        self._image_nodes: dict[str, set[str]] = {}
        self._generation = itertools.count(1)
        self._last = 0  # the generation of the newest change
        self._copies: dict[str, NodeInfo] = {}  # what the snapshot holds, by node
        self._positions: dict[str, int] = {}  # where each node sits in the snapshot's list
        self._dirty: set[str] = set()  # nodes changed since the last snapshot
        self._membership_changed = True
        self._snapshot: Snapshot | None = None  # the one snapshot kept up to date incrementally

    # -- nodes ---------------------------------------------------------------------------------

    def add_node(self, node: Obj) -> None:
        name = _name(node)
        info = self._nodes.get(name)
        if info is None:
            info = self._nodes[name] = NodeInfo()
            self._membership_changed = True
        elif info.node is None:
            self._membership_changed = True
        else:
            self._remove_images(name, info.node)
        info.set_node(node)
        self._add_images(name, node, info)
        self._bump(info, name)

    update_node = add_node

    def remove_node(self, node: Obj) -> None:
        name = _name(node)
        info = self._nodes.get(name)
        if info is None:
            return
        if info.node is not None:
            self._remove_images(name, info.node)
        self._membership_changed = True
        if info.pods:
            info.node = None  # pods still point at it; keep their accounting until they go
            info.image_states = {}
            self._bump(info, name)
        else:
            del self._nodes[name]
            self._copies.pop(name, None)
            self._last = next(self._generation)

    def node_names(self) -> list[str]:
        return [n for n, info in self._nodes.items() if info.node is not None]

    def node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    # -- pods ----------------------------------------------------------------------------------

    def add_pod(self, pod: Obj) -> None:
        """A pod the informer shows on a node (confirms it if it was assumed)."""
        node = (pod.get("spec") or {}).get("nodeName", "")
        if not node:
            return
        if is_terminal(pod):
            self.remove_pod(pod)
            return
        uid = _uid(pod)
        state = self._pods.get(uid)
        if state is not None:
            self._detach(state)
        self._pods[uid] = _PodState(pod, node)
        self._attach(pod, node)

    update_pod = add_pod

    def remove_pod(self, pod: Obj) -> None:
        state = self._pods.pop(_uid(pod), None)
        if state is not None:
            self._detach(state)

    def assume_pod(self, pod: Obj) -> None:
        """Count `pod` (its spec.nodeName already set to the chosen node) before it is bound."""
        uid = _uid(pod)
        if uid in self._pods:
            raise ValueError(f"pod {pod_key(pod)} (uid {uid}) is in the cache, so can't be assumed")
        node = pod["spec"]["nodeName"]
        self._pods[uid] = _PodState(pod, node, assumed=True)
        self._attach(pod, node)

    def finish_binding(self, pod: Obj) -> None:
        state = self._pods.get(_uid(pod))
        if state is not None and state.assumed:
            state.binding_finished = True

    def forget_pod(self, pod: Obj) -> None:
        """Drop an assumed pod whose binding failed (a confirmed one stays)."""
        state = self._pods.get(_uid(pod))
        if state is not None and state.assumed:
            del self._pods[_uid(pod)]
            self._detach(state)

    def is_assumed(self, pod: Obj) -> bool:
        state = self._pods.get(_uid(pod))
        return state is not None and state.assumed

    def has_pod(self, pod: Obj) -> bool:
        return _uid(pod) in self._pods

    def pod_count(self) -> int:
        return len(self._pods)

    # -- the snapshot --------------------------------------------------------------------------

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring `snapshot` up to date, copying only NodeInfos whose generation moved."""
        if snapshot.generation == self._last and not self._membership_changed:
            return
        if not self._membership_changed and snapshot is self._snapshot:
            # The usual case (a pod assumed or bound): swap in copies of the changed nodes only.
            for name in self._dirty:
                info = self._nodes.get(name)
                position = self._positions.get(name)
                if info is None or info.node is None or position is None:
                    continue
                copy = self._copies[name] = info.clone()
                snapshot.set(position, copy)
            self._dirty.clear()
            snapshot.generation = self._last
            return
        infos = []
        self._positions = {}
        for name, info in self._nodes.items():
            if info.node is None:
                self._copies.pop(name, None)
                continue
            copy = self._copies.get(name)
            if copy is None or copy.generation != info.generation:
                copy = self._copies[name] = info.clone()
            self._positions[name] = len(infos)
            infos.append(copy)
        snapshot.replace(infos)
        snapshot.generation = self._last
        self._snapshot = snapshot
        self._dirty.clear()
        self._membership_changed = False

    # -- internals -----------------------------------------------------------------------------

    def _bump(self, info: NodeInfo, name: str) -> None:
        info.generation = self._last = next(self._generation)
        self._dirty.add(name)

    def _attach(self, pod: Obj, node: str) -> None:
        info = self._nodes.get(node)
        if info is None:
            info = self._nodes[node] = NodeInfo()  # the pod came before its node
        info.add_pod(PodInfo.of(pod))
        self._bump(info, node)

    def _detach(self, state: _PodState) -> None:
        info = self._nodes.get(state.node)
        if info is None:
            return
        info.remove_pod(state.pod)
        self._bump(info, state.node)
        if info.node is None and not info.pods:
            del self._nodes[state.node]
            self._copies.pop(state.node, None)

    def _add_images(self, node_name: str, node: Obj, info: NodeInfo) -> None:
        states: dict[str, ImageState] = {}
        for image in (node.get("status") or {}).get("images") or []:
            size = int(image.get("sizeBytes") or 0)
            for name in image.get("names") or []:
                holders = self._image_nodes.setdefault(name, set())
                holders.add(node_name)
                state = self._images.get(name)
                if state is None:
                    state = self._images[name] = ImageState(size=size, num_nodes=0)
                state.size = size
                state.num_nodes = len(holders)
                states[name] = state
        info.image_states = states

    def _remove_images(self, node_name: str, node: Obj) -> None:
        for image in (node.get("status") or {}).get("images") or []:
            for name in image.get("names") or []:
                holders = self._image_nodes.get(name)
                if holders is None:
                    continue
                holders.discard(node_name)
                if holders:
                    self._images[name].num_nodes = len(holders)
                else:
                    del self._image_nodes[name]
                    self._images.pop(name, None)
