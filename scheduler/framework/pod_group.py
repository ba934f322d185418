"""The PodGroup side of the framework: a group as one scheduling entity, its candidate placements,
and the two placement extension points (KEP-4671 gang scheduling, KEP-5732 topology placement).

`PodGroupInfo` is what the PodGroup cycle (`scheduler/podgroup/`) hands to plugins: the PodGroup
object and its pending pods. A `Placement` is one candidate domain (the nodes of one rack, say);
PlacementGenerate plugins (TopologyPlacement) turn the parent placement, all nodes, into
candidates; the cycle tries the group inside each one and PlacementScore plugins (PodGroupPodsCount,
NodeResourcesFit's MostAllocated) rate the feasible ones by the `PodGroupAssignment` they produced.
Upstream's names: GeneratePlacements, ScorePlacement; haru's methods are snake_case, as the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status

Obj = dict[str, Any]
GANG = "gang"
BASIC = "basic"


@dataclass
class PodGroupInfo:
    """A PodGroup and the pods of it the scheduler holds (pending ones, in the order tried)."""

    pod_group: Obj
    pods: list[Obj] = field(default_factory=list)
    # How many of the group's pods are already assumed or bound, when the caller knows (the
    # PodGroup cycle asks GangScheduling); None: count them on the snapshot's nodes.
    placed: int | None = None

    @property
    def key(self) -> str:
        meta = self.pod_group.get("metadata") or {}
        return f"{meta.get('namespace', '')}/{meta.get('name', '')}"

    @property
    def policy(self) -> str:
        """"gang" or "basic" (spec.schedulingPolicy has exactly one member)."""
        policy = (self.pod_group.get("spec") or {}).get("schedulingPolicy") or {}
        return GANG if "gang" in policy else BASIC

    @property
    def min_count(self) -> int:
        """How many pods must fit together; 0 for a basic group (no all-or-nothing check)."""
        policy = (self.pod_group.get("spec") or {}).get("schedulingPolicy") or {}
        return int((policy.get("gang") or {}).get("minCount") or 0)

    @property
    def topology_key(self) -> str:
        """spec.schedulingConstraints.topology[0].key, "" when the group has no constraint."""
        constraints = (self.pod_group.get("spec") or {}).get("schedulingConstraints") or {}
        topology = constraints.get("topology") or []
        return (topology[0] or {}).get("key", "") if topology else ""


@dataclass
class Placement:
    """One candidate domain for a whole group: the nodes it may use.

    `name` says which domain it is ("" for the root placement, all nodes; "rack=r1" for one value
    of a topology label); `node_selector` is the core/v1 NodeSelector that defines it, as upstream's
    Placement.NodeSelector (None for the root).
    """

    name: str
    nodes: Sequence[NodeInfo]
    node_selector: Obj | None = None


@dataclass
class PodGroupAssignment:
    """Where the cycle placed each pod of the group inside one placement: pod key -> node name."""

    pod_to_node: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class PlacementGeneratePlugin(Protocol):
    name: str

    def generate_placements(self, state: CycleState, group: PodGroupInfo,
                            parents: Sequence[Placement]) -> tuple[list[Placement] | None, Status | None]:
        """Child placements of `parents` (None: this plugin has nothing to say for this group)."""
        ...


@runtime_checkable
class PlacementScorePlugin(Protocol):
    name: str

    def score_placement(self, state: CycleState, group: PodGroupInfo, placement: Placement,
                        assignment: PodGroupAssignment) -> tuple[float, Status | None]:
        """How good this feasible placement is (higher is better)."""
        ...
