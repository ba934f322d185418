"""The last two metric points of every node and container, and usage as a rate over their window.

metrics-server's storage rules: a newer point moves the stored one to `prev`; a container keeps
`prev` only while it has not restarted; CPU is (counter now - counter then) / window, memory the
latest working set; a counter that went down yields nothing. One difference: a container with no
usable earlier point counts from its own start (a zero counter then), at any age, since a hollow
kubelet's counters are exact from the start (metrics-server waits 10 s for cAdvisor's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

PodKey = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True)
class Point:
    # Times in unix milliseconds, as the samples carry them: integers keep the window exact.
    start: int  # 0 when unknown (nodes)
    timestamp: int
    cpu: int  # cumulative nano core-seconds
    memory: int  # working set bytes


@dataclass
class Batch:
    """One scrape of one kubelet."""

    node: Point | None
    pods: dict[PodKey, dict[str, Point]] = field(default_factory=dict)


@dataclass(frozen=True)
class Usage:
    timestamp: float  # unix seconds
    window: float  # seconds
    cpu: int  # nano cores
    memory: int  # bytes


def usage(last: Point, prev: Point) -> Usage | None:
    if last.start < prev.start or last.cpu < prev.cpu or last.timestamp <= prev.timestamp:
        return None
    window_ms = last.timestamp - prev.timestamp
    # metrics-server truncates the rate to whole nano cores.
    return Usage(last.timestamp / 1000, window_ms / 1000, (last.cpu - prev.cpu) * 1000 // window_ms, last.memory)


def _newer(new: Point, last: Point | None, prev: Point | None) -> Point | None:
    """The point to keep as `prev` beside `new`."""
    if last is not None and new.timestamp > last.timestamp:
        return last
    if prev is not None and prev.timestamp < new.timestamp:
        return prev
    return None


class Points:
    def __init__(self) -> None:
        self._node_last: dict[str, Point] = {}
        self._node_prev: dict[str, Point] = {}
        self._pod_last: dict[PodKey, dict[str, Point]] = {}
        self._pod_prev: dict[PodKey, dict[str, Point]] = {}
        self._pods_of: dict[str, set[PodKey]] = {}

    def store(self, node: str, batch: Batch) -> None:
        if batch.node is not None:
            kept = _newer(batch.node, self._node_last.get(node), self._node_prev.get(node))
            self._node_last[node] = batch.node
            if kept is None:
                self._node_prev.pop(node, None)
            else:
                self._node_prev[node] = kept
        for gone in self._pods_of.get(node, set()) - set(batch.pods):
            self._pod_last.pop(gone, None)
            self._pod_prev.pop(gone, None)
        self._pods_of[node] = set(batch.pods)
        for key, containers in batch.pods.items():
            last, prev = self._pod_last.get(key, {}), self._pod_prev.get(key, {})
            new_prev: dict[str, Point] = {}
            for name, point in containers.items():
                before = last.get(name)
                if before is not None and point.start < before.timestamp:  # the same run
                    kept = _newer(point, before, prev.get(name))
                else:
                    kept = None
                if kept is None and 0 < point.start < point.timestamp:
                    kept = Point(point.start, point.start, 0, point.memory)
                if kept is not None:
                    new_prev[name] = kept
            self._pod_last[key] = dict(containers)
            self._pod_prev[key] = new_prev

    def forget(self, node: str) -> None:
        """A node that left (deleted or no longer Ready) takes its pods' points with it."""
        self._node_last.pop(node, None)
        self._node_prev.pop(node, None)
        for key in self._pods_of.pop(node, set()):
            self._pod_last.pop(key, None)
            self._pod_prev.pop(key, None)

    def nodes(self) -> set[str]:
        return set(self._node_last)

    def node_window(self, node: str) -> float | None:
        """How far apart the node's two points are; None until it has two."""
        last, prev = self._node_last.get(node), self._node_prev.get(node)
        return None if last is None or prev is None else (last.timestamp - prev.timestamp) / 1000

    def node(self, node: str) -> Usage | None:
        last, prev = self._node_last.get(node), self._node_prev.get(node)
        return None if last is None or prev is None else usage(last, prev)

    def pod(self, key: PodKey) -> tuple[float, float, list[tuple[str, Usage]]] | None:
        """(timestamp, window, [(container, usage)]): the earliest container's time, as metrics-server
        reports a pod; None unless every container has two points."""
        last, prev = self._pod_last.get(key), self._pod_prev.get(key)
        if not last or prev is None:
            return None
        found: list[tuple[str, Usage]] = []
        for name, point in last.items():
            before = prev.get(name)
            if before is None:
                return None
            measured = usage(point, before)
            if measured is not None:
                found.append((name, measured))
        if not found:
            return None
        earliest = min((u for _, u in found), key=lambda u: u.timestamp)
        return earliest.timestamp, earliest.window, found
