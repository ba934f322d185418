"""`Snapshot`: the nodes one scheduling cycle sees, unchanged while the cycle runs.

The cache (`scheduler/cache.py`) refreshes it before each cycle, copying only the NodeInfos whose
generation moved, as upstream's `UpdateSnapshot` does. Plugins reach it through
`Handle.snapshot`; InterPodAffinity reads the two pre-filtered lists instead of every node.
"""

from __future__ import annotations

from scheduler.framework.node_info import NodeInfo


class Snapshot:
    def __init__(self, node_infos: list[NodeInfo] | None = None) -> None:
        self.node_infos: list[NodeInfo] = []
        self._by_name: dict[str, NodeInfo] = {}
        self.generation = 0
        if node_infos:
            self.replace(node_infos)

    def replace(self, node_infos: list[NodeInfo]) -> None:
        self.node_infos = [n for n in node_infos if n.node is not None]
        self._by_name = {n.name: n for n in self.node_infos}

    def set(self, position: int, info: NodeInfo) -> None:
        """Put `info` at `position`, replacing the same node's older copy (the cache's incremental update)."""
        self.node_infos[position] = info
        self._by_name[info.name] = info

    def get(self, name: str) -> NodeInfo | None:
        return self._by_name.get(name)

    def __len__(self) -> int:
        return len(self.node_infos)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.node_infos)

    def with_pods_with_affinity(self) -> list[NodeInfo]:
        return [n for n in self.node_infos if n.pods_with_affinity]

    def with_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        return [n for n in self.node_infos if n.pods_with_required_anti_affinity]
