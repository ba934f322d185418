"""GangScheduling (KEP-4671; gates GenericWorkload + GangScheduling): a gang binds whole or not at all.

PreEnqueue holds a pod while its PodGroup is missing and, for a gang, until minCount pods of it
exist. Reserve remembers the group's pods assumed here; Permit makes them WAIT (5 minutes, as
upstream's permitTimeoutDuration; a constructor parameter shortens it for tests) until assumed +
bound reach minCount, then allows them all; a pod unreserved after Permit rejects the rest, so
their reservations go together. The PodGroup
cycle (`scheduler/podgroup/`) places the group; this plugin is its gate and barrier.
"""

from __future__ import annotations

from typing import Any

from client.resources import PODGROUPS, PODS
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle
from scheduler.framework.pod_group import PodGroupInfo
from scheduler.framework.status import Status
from scheduler.plugins import names
from scheduler.plugins.pod_group_members import group_of

Obj = dict[str, Any]
PERMIT_TIMEOUT_SECONDS = 300.0  # upstream's permitTimeoutDuration, 5 minutes
GROUP_INDEX = "podGroup"  # pod store index: "<namespace>/<podGroupName>"
MISSING_GROUP = 'waiting for pods\'s pod group "{}" to appear in scheduling queue'
WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_FOR_GANG = "waiting for {} more pod(s) of gang {} to be assumed"


def group_key(pod: Obj) -> str:
    """"<namespace>/<podGroupName>", "" for a pod in no group."""
    group = group_of(pod)
    return f"{group[0]}/{group[1]}" if group is not None else ""


def _index(pod: Obj) -> list[str]:
    key = group_key(pod)
    return [key] if key else []


def _uid(pod: Obj) -> str:
    return (pod.get("metadata") or {}).get("uid", "")


def _live(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not (pod.get("metadata") or {}).get("deletionTimestamp")


class GangScheduling:
    name = names.GANG_SCHEDULING

    def __init__(self, handle: Handle, permit_timeout: float = PERMIT_TIMEOUT_SECONDS) -> None:
        self.handle = handle
        # Upstream's is a constant (no plugin args); tests shorten it to see the timeout end to end.
        self.permit_timeout = permit_timeout
        self.pods = handle.store(PODS)
        self.pods.add_indexer(GROUP_INDEX, _index)
        self.groups = handle.store(PODGROUPS)
        self._reserved: dict[str, set[str]] = {}  # group key -> uids assumed by this scheduler
        # group key -> (index size when read, live member uids, bound member uids): PreEnqueue and
        # Permit run once per pod, so a gang of 5,000 must not rescan its 5,000 pods each time. The
        # entry is renewed whenever a member is added or removed; a member that finishes or is
        # bound elsewhere without that is seen at the next renewal (this scheduler's own
        # placements count through `_reserved` meanwhile).
        self._seen: dict[str, tuple[int, frozenset[str], frozenset[str]]] = {}
        self._permitted: set[str] = set()  # uids that reached Permit (the simulation never does)

    # -- what the group looks like now -------------------------------------------------------

    def pod_group(self, key: str) -> Obj | None:
        return self.groups.get(key)

    def members(self, key: str) -> list[Obj]:
        """The group's pods that still count: not finished, not being deleted."""
        return [p for p in self.pods.by_index(GROUP_INDEX, key) if _live(p)]

    def _read(self, key: str) -> tuple[frozenset[str], frozenset[str]]:
        size = self.pods.index_count(GROUP_INDEX, key)
        seen = self._seen.get(key)
        if seen is None or seen[0] != size:
            live = self.members(key)
            bound = frozenset(_uid(p) for p in live if (p.get("spec") or {}).get("nodeName"))
            seen = self._seen[key] = (size, frozenset(_uid(p) for p in live), bound)
            if not size:
                del self._seen[key]
        return seen[1], seen[2]

    def member_count(self, key: str) -> int:
        return len(self._read(key)[0])

    def ready_count(self, key: str) -> int:
        """Pods of the group assumed here or already bound (each counted once)."""
        live, bound = self._read(key)
        reserved = self._reserved.get(key)
        if reserved:
            reserved &= live  # a deleted pod's reservation no longer counts
        return len((reserved or set()) | bound)

    def reserved_count(self, key: str) -> int:
        """Pods of the group this scheduler holds reservations for (assumed, not yet bound)."""
        reserved = self._reserved.get(key)
        return len(reserved - self._read(key)[1]) if reserved else 0

    # -- PreEnqueue --------------------------------------------------------------------------

    def pre_enqueue(self, pod: Obj) -> Status | None:
        key = group_key(pod)
        if not key:
            return None
        pod_group = self.pod_group(key)
        if pod_group is None:
            return Status.unresolvable(MISSING_GROUP.format(key.split("/", 1)[1]))
        need = PodGroupInfo(pod_group).min_count
        # The index's size bounds the count from above: while a gang arrives, no scan is needed.
        if need and (self.pods.index_count(GROUP_INDEX, key) < need or self.member_count(key) < need):
            return Status.unresolvable(WAITING_FOR_MIN_COUNT)
        return None

    # -- Reserve -----------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        key = group_key(pod)
        if key:
            self._reserved.setdefault(key, set()).add(_uid(pod))
        return None

    def unreserve(self, state: CycleState, pod: Obj, node_name: str) -> None:
        key = group_key(pod)
        if not key:
            return
        uid = _uid(pod)
        self._reserved.get(key, set()).discard(uid)
        if uid in self._permitted:
            self._permitted.discard(uid)
            # The gang lost a member after Permit: the others must not bind without it.
            self.reject_waiting(key, f"pod group {key.split('/', 1)[1]} lost pod "
                                     f"{(pod.get('metadata') or {}).get('name', '')} before binding")

    def reject_waiting(self, key: str, message: str) -> None:
        for waiting in self.handle.iterate_waiting_pods():
            if group_key(waiting.pod) == key:
                waiting.reject(self.name, message)

    # -- Permit ------------------------------------------------------------------------------

    def permit(self, state: CycleState, pod: Obj, node_name: str) -> tuple[Status | None, float]:
        key = group_key(pod)
        if not key:
            return None, 0.0
        pod_group = self.pod_group(key)
        if pod_group is None:
            return Status.unresolvable(MISSING_GROUP.format(key.split("/", 1)[1])), 0.0
        need = PodGroupInfo(pod_group).min_count
        if not need:
            return None, 0.0  # a basic group: batching only, no barrier
        self._permitted.add(_uid(pod))
        ready = self.ready_count(key)
        if ready < need:
            return Status.wait(WAITING_FOR_GANG.format(need - ready, key.split("/", 1)[1])), self.permit_timeout
        for waiting in self.handle.iterate_waiting_pods():
            if group_key(waiting.pod) == key:
                waiting.allow(self.name)
        return None, 0.0

    def forget_permitted(self, pod: Obj) -> None:
        """The pod is bound (or gone): a later unreserve of it is none of the gang's business."""
        self._permitted.discard(_uid(pod))

    # -- events ------------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.ADD), self._same_group),
                ClusterEventWithHint(ClusterEvent(Resource.POD_GROUP, ActionType.ADD), self._its_group)]

    @staticmethod
    def _same_group(pod: Obj, old: Any, new: Any) -> QueueingHint:
        key = group_key(pod)
        return QueueingHint.QUEUE if key and new is not None and group_key(new) == key else QueueingHint.SKIP

    @staticmethod
    def _its_group(pod: Obj, old: Any, new: Any) -> QueueingHint:
        meta = (new or {}).get("metadata") or {}
        return QueueingHint.QUEUE if group_key(pod) == f"{meta.get('namespace', '')}/{meta.get('name', '')}" \
            else QueueingHint.SKIP


def new(args: dict[str, Any], handle: Handle, features: Features) -> GangScheduling:
    return GangScheduling(handle)
