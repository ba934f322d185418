"""The scheduling queue's unschedulable pool: pods waiting for a cluster event, by uid.

A plain mapping for `queue.py`, which owns the pool, plus an index: the ungated pods, and the
gated ones (those a PreEnqueue plugin holds back) grouped by their profile and gating plugin,
each group keeping apart the pods an earlier attempt turned down (they have rejecting plugins).
A cluster event asks every waiting pod whether it may move; with thousands of pods gated by one
plugin (pods waiting for the ResourceClaims their templates make, say), the queue asks that
plugin's registrations once per group and reads only the pods they name, and the turned-down
ones, instead of every gated pod (`gated_groups`). A pod's gate and its rejecting plugins change
only while it is out of the pool (the queue sets them, then puts the pod in), so the index
cannot go stale.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, ValuesView
from typing import Any

from scheduler.framework.interfaces import QueuedPodInfo

Obj = dict[str, Any]
GateKey = tuple[Any, str]  # (the pod's profile, the PreEnqueue plugin gating it)


class GateGroup:
    """The pods one plugin gates under one profile, by uid: `fresh` ones no attempt turned down
    yet, and `retried` ones with rejecting plugins."""

    __slots__ = ("profile", "plugin", "fresh", "retried")

    def __init__(self, profile: Any, plugin: str) -> None:
        self.profile, self.plugin = profile, plugin
        self.fresh: dict[str, QueuedPodInfo] = {}
        self.retried: dict[str, QueuedPodInfo] = {}


class UnschedulablePool:
    def __init__(self, profile_of: Callable[[Obj], Any]) -> None:
        self._profile_of = profile_of
        self._pods: dict[str, QueuedPodInfo] = {}
        self._ungated: dict[str, QueuedPodInfo] = {}
        self._groups: dict[GateKey, GateGroup] = {}
        # uid -> the index dict holding it, and its gate group's key (None: ungated)
        self._place: dict[str, tuple[dict[str, QueuedPodInfo], GateKey | None]] = {}

    def __setitem__(self, uid: str, qpi: QueuedPodInfo) -> None:
        self._unindex(uid)
        self._pods[uid] = qpi
        key: GateKey | None = None
        if not qpi.gated_by:
            place = self._ungated
        else:
            # A pod's schedulerName is immutable, so its profile is the one it had when it came.
            key = (self._profile_of(qpi.pod), qpi.gated_by)
            group = self._groups.get(key)
            if group is None:
                group = self._groups[key] = GateGroup(*key)
            place = group.retried if qpi.unschedulable_plugins or qpi.pending_plugins else group.fresh
        place[uid] = qpi
        self._place[uid] = (place, key)

    def __getitem__(self, uid: str) -> QueuedPodInfo:
        return self._pods[uid]

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._pods.get(uid)

    def pop(self, uid: str, *default: None) -> QueuedPodInfo | None:
        """dict.pop: KeyError for an absent uid unless a default is given."""
        self._unindex(uid)
        return self._pods.pop(uid, *default)

    def items(self) -> ItemsView[str, QueuedPodInfo]:
        return self._pods.items()

    def values(self) -> ValuesView[QueuedPodInfo]:
        return self._pods.values()

    def ungated(self) -> list[tuple[str, QueuedPodInfo]]:
        """The pods no PreEnqueue plugin holds."""
        return list(self._ungated.items())

    def gated_groups(self) -> list[GateGroup]:
        """The groups of gated pods; their dicts are the pool's own: copy before changing the pool."""
        return list(self._groups.values())

    def _unindex(self, uid: str) -> None:
        found = self._place.pop(uid, None)
        if found is None:
            return
        place, key = found
        del place[uid]
        if key is not None:
            group = self._groups[key]
            if not group.fresh and not group.retried:
                del self._groups[key]
