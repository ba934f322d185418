"""ImageLocality: prefer nodes that already hold the pod's images, weighted by how widely spread.

Score sums, over the pod's init and app containers, each image's size on the node times the
fraction of nodes that have it (so an image every node holds does not crowd pods onto one), then
clamps the sum to [23 MiB, 1000 MiB x containers] and maps it linearly to 0..100, as upstream's
`calculatePriority`. Image names are normalised to `:latest` when untagged. Score only: it never
rejects, so it registers no events. Image sizes and spreads are NodeInfo.image_states (the cache).
"""

from __future__ import annotations

from typing import Any

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import MAX_NODE_SCORE, Features, Handle
from scheduler.framework.node_info import ImageState, NodeInfo
from scheduler.framework.status import Status
from scheduler.plugins import names

Obj = dict[str, Any]
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(image: str) -> str:
    if image.rfind(":") <= image.rfind("/"):
        return image + ":latest"
    return image


def scaled_image_score(state: ImageState, total_nodes: int) -> int:
    spread = state.num_nodes / total_nodes
    return int(state.size * spread)


def sum_image_scores(node: NodeInfo, pod: Obj, total_nodes: int) -> int:
    spec = pod.get("spec") or {}
    total = 0
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        state = node.image_states.get(normalized_image_name(container.get("image") or ""))
        if state is not None:
            total += scaled_image_score(state, total_nodes)
    return total


def calculate_priority(sum_scores: int, containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * containers
    clamped = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name = names.IMAGE_LOCALITY

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def score(self, state: CycleState, pod: Obj, node: NodeInfo) -> tuple[int, Status | None]:
        if not node.image_states:
            return 0, None  # no image here: the sum is 0, below the threshold (Score runs per node)
        total_nodes = len(self.handle.snapshot)
        spec = pod.get("spec") or {}
        containers = len(spec.get("initContainers") or []) + len(spec.get("containers") or [])
        if total_nodes == 0 or containers == 0:
            return 0, None
        return calculate_priority(sum_image_scores(node, pod, total_nodes), containers), None

    def score_nodes(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> list[int]:
        # Nodes without images (no kubelet reported any) score 0 without a call each.
        return [self.score(state, pod, node)[0] if node.image_states else 0 for node in nodes]


def new(args: dict[str, Any], handle: Handle, features: Features) -> ImageLocality:
    return ImageLocality(handle)
