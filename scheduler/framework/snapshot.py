"""`Snapshot`: the nodes one scheduling cycle sees, unchanged while the cycle runs.

The cache (`scheduler/cache.py`) refreshes it before each cycle, copying only the NodeInfos whose
generation moved, as upstream's `UpdateSnapshot` does. Plugins reach it through
`Handle.snapshot`; InterPodAffinity reads the two pre-filtered lists instead of every node (kept
between cycles and rebuilt only when a node that has or had such pods is replaced, as upstream's
havePodsWithAffinityNodeInfoList).
"""

from __future__ import annotations

from scheduler.framework.node_info import NodeInfo


class Snapshot:
    def __init__(self, node_infos: list[NodeInfo] | None = None) -> None:
        self.node_infos: list[NodeInfo] = []
        self._by_name: dict[str, NodeInfo] = {}
        self.generation = 0
        self._with_affinity: list[NodeInfo] | None = None
        self._with_anti_affinity: list[NodeInfo] | None = None
        if node_infos:
            self.replace(node_infos)

    def replace(self, node_infos: list[NodeInfo]) -> None:
        self.node_infos = [n for n in node_infos if n.node is not None]
        self._by_name = {n.name: n for n in self.node_infos}
        self._with_affinity = self._with_anti_affinity = None

    def set(self, position: int, info: NodeInfo) -> None:
        """Put `info` at `position`, replacing the same node's older copy (the cache's incremental update)."""
        old = self.node_infos[position]
        self.node_infos[position] = info
        self._by_name[info.name] = info
        if old.pods_with_affinity or info.pods_with_affinity:
            self._with_affinity = None
        if old.pods_with_required_anti_affinity or info.pods_with_required_anti_affinity:
            self._with_anti_affinity = None

    def get(self, name: str) -> NodeInfo | None:
        return self._by_name.get(name)

    def __len__(self) -> int:
        return len(self.node_infos)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.node_infos)

    def with_pods_with_affinity(self) -> list[NodeInfo]:
        """The nodes with a pod that has (anti-)affinity terms; shared between calls: read, don't change."""
        if self._with_affinity is None:
            self._with_affinity = [n for n in self.node_infos if n.pods_with_affinity]
        return self._with_affinity

    def with_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        """The nodes with a pod that has required anti-affinity; shared between calls: read, don't change."""
        if self._with_anti_affinity is None:
            self._with_anti_affinity = [n for n in self.node_infos if n.pods_with_required_anti_affinity]
        return self._with_anti_affinity
