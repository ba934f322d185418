"""The scheduling queue: which pending pod the scheduler tries next, and when a rejected one returns.

Three sub-queues, as upstream's PriorityQueue: `activeQ` (a heap ordered by the QueueSort
plugin's `less`), `backoffQ` (pods waiting out their backoff, 1 s doubling to 10 s by default)
and the unschedulable pool (pods waiting for a cluster event). A pod rejected by some plugins
comes back only when an event arrives that one of those plugins registered and whose queueing
hint answers QUEUE (or after 5 minutes, `UnschedulableTimeout`); events that arrive while the pod
is being scheduled are kept and replayed when it fails, so none is lost. PreEnqueue plugins
(SchedulingGates, DefaultPreemption while a preemptor's victims go) gate a pod before it enters
activeQ or backoffQ, also on its way back from the unschedulable pool. Pods rejected as PENDING go straight to
activeQ when their event comes and do not grow their backoff. `scheduler/scheduler.py` feeds it
informer events; the nominator (pods nominated to a node by PostFilter) lives here too.
Pods of one PodGroup (`spec.schedulingGroup`) are one entity: `take_group` hands the loop every
queued, ungated member of the popped pod's group, and once a member gets past PreEnqueue its gated
siblings ask their PreEnqueue plugins again (GangScheduling's minCount gate). Time comes from
`clock` so the tests can drive it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import QueuedPodInfo
from scheduler.framework.node_info import PodInfo
from scheduler.framework.resources import pod_requests
from scheduler.framework.status import Code, Status
from scheduler.keyed_heap import KeyedHeap
from scheduler.unschedulable_pool import GateGroup, UnschedulablePool

log = logging.getLogger("haru.scheduler.queue")
Obj = dict[str, Any]

UNSCHEDULABLE_MAX_SECONDS = 300.0  # upstream's podMaxInUnschedulablePodsDuration
_IN_FLIGHT_EVENTS_MAX = 256  # past this, a failing pod is simply retried after backoff


class QueueProfile(Protocol):
    """What the queue asks the pod's framework (`runtime.Framework` implements it)."""

    def run_pre_enqueue_plugins(self, pod: Obj) -> Status | None: ...

    def events_for(self, plugin: str) -> list[ClusterEventWithHint]: ...


def _uid(pod: Obj) -> str:
    return (pod.get("metadata") or {}).get("uid", "")


def group_key(pod: Obj) -> str:
    """"<namespace>/<podGroupName>" of the PodGroup the pod joins, "" for none."""
    name = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    return f"{(pod.get('metadata') or {}).get('namespace', '')}/{name}" if name else ""


class _Entry:
    """A heap entry ordered by the QueueSort plugin (ties: first come, first served)."""

    __slots__ = ("qpi", "less", "seq")

    def __init__(self, qpi: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool], seq: int) -> None:
        self.qpi, self.less, self.seq = qpi, less, seq

    def __lt__(self, other: "_Entry") -> bool:
        if self.less(self.qpi, other.qpi):
            return True
        if self.less(other.qpi, self.qpi):
            return False
        return self.seq < other.seq


@dataclass
class _InFlight:
    events: list[tuple[ClusterEvent, Any, Any]]
    overflow: bool = False


class Nominator:
    """Pods nominated to a node (by preemption, or found with status.nominatedNodeName)."""

    def __init__(self) -> None:
        self._by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def add(self, info: PodInfo, node_name: str | None) -> None:
        """Nominate to `node_name`; None keeps what the pod's status says (upstream's ModeNoop)."""
        self.delete(info.pod)
        if (info.pod.get("spec") or {}).get("nodeName"):
            return
        name = node_name if node_name is not None else (info.pod.get("status") or {}).get("nominatedNodeName", "")
        if not name:
            return
        self._node_of[info.uid] = name
        self._by_node.setdefault(name, []).append(info)

    def delete(self, pod: Obj) -> None:
        uid = _uid(pod)
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        left = [p for p in self._by_node.get(node, []) if p.uid != uid]
        if left:
            self._by_node[node] = left
        else:
            self._by_node.pop(node, None)

    def update(self, old: Obj, new: Obj) -> None:
        """Keep a nomination the scheduler made unless the pod's own status names another node."""
        uid = _uid(new)
        current = self._node_of.get(uid)
        status_node = (new.get("status") or {}).get("nominatedNodeName", "")
        self.add(PodInfo.of(new), status_node or current or "")

    def __bool__(self) -> bool:
        return bool(self._by_node)

    def for_node(self, node_name: str) -> list[PodInfo]:
        return list(self._by_node.get(node_name, ()))

    def node_names(self) -> set[str]:
        """The nodes some pod is nominated to (the cycle's batch Filter treats those one by one)."""
        return set(self._by_node)

    def node_of(self, uid: str) -> str:
        return self._node_of.get(uid, "")


class SchedulingQueue:
    def __init__(self, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
                 profile_of: Callable[[Obj], QueueProfile | None], *, initial_backoff: float = 1.0,
                 max_backoff: float = 10.0, clock: Callable[[], float] = time.monotonic,
                 nominator: Nominator | None = None) -> None:
        self.less = less
        self.profile_of = profile_of
        self.initial_backoff, self.max_backoff = initial_backoff, max_backoff
        self.clock = clock
        self.nominator = nominator if nominator is not None else Nominator()
        self._active: KeyedHeap[_Entry] = KeyedHeap()  # by uid
        self._backoff: KeyedHeap[tuple[float, int, QueuedPodInfo]] = KeyedHeap()  # by uid
        self._unschedulable = UnschedulablePool(profile_of)
        self._where: dict[str, str] = {}  # uid -> "active" | "backoff" | "unschedulable" | "flight"
        self._infos: dict[str, QueuedPodInfo] = {}  # uid -> the queued info, wherever it is
        self._in_flight: dict[str, _InFlight] = {}
        self._unschedulable_count: dict[str, int] = {}  # rejections that grow the backoff
        self._groups: dict[str, set[str]] = {}  # PodGroup key -> uids of its queued pods
        self._regating = False
        self._seq = itertools.count()
        self._wakeup = asyncio.Event()
        self._closed = False

    # -- what is where (tests, metrics) -------------------------------------------------------

    def where(self, pod: Obj) -> str:
        """"active", "backoff", "unschedulable", "gated", "flight" or "" (not queued)."""
        uid = _uid(pod)
        where = self._where.get(uid, "")
        if where == "unschedulable" and self._unschedulable[uid].gated_by:
            return "gated"
        return where

    def __len__(self) -> int:
        return len(self._where)

    def pending_counts(self) -> dict[str, int]:
        counts = {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}
        for uid, where in self._where.items():
            if where == "unschedulable" and self._unschedulable[uid].gated_by:
                counts["gated"] += 1
            elif where in counts:
                counts[where] += 1
        return counts

    # -- informer events for unscheduled pods --------------------------------------------------

    def add(self, pod: Obj) -> None:
        uid = _uid(pod)
        if uid in self._where:
            self.update(self._infos[uid].pod, pod)
            return
        now = self.clock()
        qpi = QueuedPodInfo(pod_info=PodInfo.of(pod), timestamp=now, initial_attempt_timestamp=None)
        self._infos[uid] = qpi
        self.nominator.add(qpi.pod_info, None)
        key = group_key(pod)
        if key:
            self._groups.setdefault(key, set()).add(uid)
        self._enqueue_gated_or_active(qpi)

    def update(self, old: Obj, new: Obj) -> None:
        uid = _uid(new)
        where = self._where.get(uid)
        if where is None:
            self.add(new)
            return
        qpi = self._infos[uid]
        qpi.pod_info = PodInfo.of(new)
        self.nominator.update(old, new)
        if where == "active":
            entry = self._active.get(uid)
            if entry is not None:  # the priority may have changed: its place in the heap too
                self._active.push(uid, _Entry(qpi, self.less, entry.seq))
        elif where == "flight":
            self._note_in_flight(pod_update_event(old, new), old, new, only=uid)
        elif where == "unschedulable":
            event = pod_update_event(old, new)
            if qpi.gated_by:
                if self._gate_hint(qpi, event, old, new) != "skip":
                    self._unschedulable.pop(uid)
                    del self._where[uid]
                    self._enqueue_gated_or_active(qpi)
                return
            decision = self._hint_for(qpi, event, old, new)
            if decision != "skip":
                self._requeue(qpi, decision)

    def delete(self, pod: Obj) -> None:
        uid = _uid(pod)
        where = self._where.pop(uid, None)
        self._infos.pop(uid, None)
        self._unschedulable_count.pop(uid, None)
        self._unindex(uid, pod)
        self.nominator.delete(pod)
        if where == "active":
            self._active.discard(uid)
        elif where == "backoff":
            self._backoff.discard(uid)
        elif where == "unschedulable":
            self._unschedulable.pop(uid, None)

    # -- the scheduling loop's side -------------------------------------------------------------

    async def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, waiting for one; None once the queue is closed."""
        while not self._closed:
            self.flush_backoff_completed()
            entry = self._active.pop()
            if entry is not None:
                qpi = entry.qpi
                uid = _uid(qpi.pod)
                self._where[uid] = "flight"
                self._in_flight[uid] = _InFlight([])
                qpi.attempts += 1
                if qpi.initial_attempt_timestamp is None:
                    qpi.initial_attempt_timestamp = self.clock()
                return qpi
            self._wakeup.clear()
            timeout = None
            soonest = self._backoff.peek()
            if soonest is not None:
                timeout = max(0.0, soonest[0] - self.clock())
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout)
            except asyncio.TimeoutError:
                pass
        return None

    def close(self) -> None:
        self._closed = True
        self._wakeup.set()

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over (bound, or handed back): stop keeping its events."""
        self._in_flight.pop(uid, None)
        if self._where.get(uid) == "flight":
            del self._where[uid]
            qpi = self._infos.pop(uid, None)
            self._unschedulable_count.pop(uid, None)
            if qpi is not None:
                self._unindex(uid, qpi.pod)

    def take_group(self, qpi: QueuedPodInfo) -> list[QueuedPodInfo]:
        """The popped pod and the other queued members of its PodGroup, all now in flight.

        Members in activeQ, backoffQ or the unschedulable pool go (the group is retried as one,
        so they share its fate); gated ones stay behind their PreEnqueue plugin, and pods already
        in flight (binding, waiting on Permit) are not taken twice.
        """
        key = group_key(qpi.pod)
        if not key:
            return [qpi]
        taken = [qpi]
        uid = _uid(qpi.pod)
        now = self.clock()
        for other in sorted(self._groups.get(key, ()) - {uid}):
            where = self._where.get(other)
            member = self._infos.get(other)
            if member is None or where not in ("active", "backoff", "unschedulable") or member.gated_by:
                continue
            if where == "active":
                self._active.discard(other)
            elif where == "backoff":
                self._backoff.discard(other)
            else:
                self._unschedulable.pop(other, None)
            self._where[other] = "flight"
            self._in_flight[other] = _InFlight([])
            member.attempts += 1
            if member.initial_attempt_timestamp is None:
                member.initial_attempt_timestamp = now
            taken.append(member)
        return taken

    def _unindex(self, uid: str, pod: Obj) -> None:
        key = group_key(pod)
        members = self._groups.get(key)
        if members is not None:
            members.discard(uid)
            if not members:
                del self._groups[key]

    def _regate(self, key: str, arrived: Obj) -> None:
        """A pod of the group passed PreEnqueue: its gated siblings ask their plugins again."""
        event = ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.ADD)
        for other in sorted(self._groups.get(key, ()) - {_uid(arrived)}):
            member = self._unschedulable.get(other)
            if member is None or not member.gated_by:
                continue
            if self._hint_for(member, event, None, arrived, plugins={member.gated_by}) != "skip":
                self._unschedulable.pop(other)
                del self._where[other]
                self._enqueue_gated_or_active(member)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, pod: Obj | None = None) -> None:
        """A failed attempt: to the unschedulable pool, or back at once if an event already undid it."""
        uid = _uid(qpi.pod)
        if pod is not None:
            qpi.pod_info = PodInfo.of(pod)
        flight = self._in_flight.pop(uid, None)
        if self._where.get(uid) not in (None, "flight"):
            return  # already queued again by an update
        qpi.timestamp = self.clock()
        self._infos[uid] = qpi
        rejected_by_plugins = bool(qpi.unschedulable_plugins or qpi.pending_plugins)
        if qpi.unschedulable_plugins or not qpi.pending_plugins:
            self._unschedulable_count[uid] = self._unschedulable_count.get(uid, 0) + 1
        decision = "skip"
        if not rejected_by_plugins:
            decision = "backoff"  # an error, or nothing to wait for: retry after backoff
        elif flight is not None:
            if flight.overflow:
                decision = "backoff"
            for event, old, new in flight.events:
                got = self._hint_for(qpi, event, old, new)
                if got == "active" or (got == "backoff" and decision == "skip"):
                    decision = got
                if decision == "active":
                    break
        if decision == "skip":
            self._unschedulable[uid] = qpi
            self._where[uid] = "unschedulable"
        else:
            self._where[uid] = "unschedulable"  # _requeue moves it from there
            self._unschedulable[uid] = qpi
            self._requeue(qpi, decision)

    def activate(self, pods: Iterable[Obj]) -> None:
        """Move these pods to activeQ now, wherever they wait (upstream's Activate)."""
        for pod in pods:
            uid = _uid(pod)
            qpi = self._infos.get(uid)
            if qpi is None or self._where.get(uid) not in ("backoff", "unschedulable"):
                continue
            if qpi.gated_by:
                # Asked again, not let through: a preemptor whose evictions failed is activated by
                # the preemption plugin, whose PreEnqueue now lets it go; a real gate holds.
                self._unschedulable.pop(uid, None)
                del self._where[uid]
                self._enqueue_gated_or_active(qpi)
                continue
            self._take_out(uid)
            self._push_active(qpi)

    # -- cluster events ------------------------------------------------------------------------

    def move_all_on_event(self, event: ClusterEvent, old: Any = None, new: Any = None,
                          pre_check: Callable[[Obj], bool] | None = None) -> None:
        """An event arrived: move the unschedulable pods it may help, remember it for in-flight ones."""
        self._note_in_flight(event, old, new)
        # Which registrations of a (profile, plugin) cover this event, worked out once per event
        # rather than once per pending pod (thousands of them wait on, say, their claims).
        matching: dict[tuple[int, str], list[Any]] = {}
        # Per registration with `candidates`: the pods its hint may move on this event, asked once.
        candidates: dict[int, Collection[str] | None] = {}
        for uid, qpi in self._unschedulable.ungated():
            if self._unschedulable.get(uid) is not qpi:
                continue  # an earlier move took it along (a PodGroup's siblings)
            if pre_check is not None and not pre_check(qpi.pod):
                continue
            decision = self._hint_for(qpi, event, old, new, candidates=candidates)
            if decision != "skip":
                self._requeue(qpi, decision)
        if event.resource is Resource.WILDCARD:
            return  # timeouts and force-activation do not lift a gate
        for group in self._unschedulable.gated_groups():
            for qpi in self._gated_in_reach(group, event, old, new, matching, candidates):
                uid = _uid(qpi.pod)
                if self._unschedulable.get(uid) is not qpi:
                    continue
                if pre_check is not None and not pre_check(qpi.pod):
                    continue
                if self._gate_hint(qpi, event, old, new, matching, candidates) != "skip":
                    self._unschedulable.pop(uid)
                    del self._where[uid]
                    self._enqueue_gated_or_active(qpi)

    def _gated_in_reach(self, group: GateGroup, event: ClusterEvent, old: Any, new: Any,
                        matching: dict[tuple[int, str], list[Any]],
                        candidates: dict[int, Collection[str] | None]) -> list[QueuedPodInfo]:
        """The pods of one gate group that `_gate_hint` may let through on this event: none if
        the gating plugin registered no matching event; else the pods an earlier attempt turned
        down (their other plugins are asked too), and of the others only those the plugin's
        registrations' `candidates` name, when every one of them has candidates."""
        profile, plugin = group.profile, group.plugin
        if profile is None:
            return []  # no framework for its schedulerName: `_hint_for` skips it
        key = (id(profile), plugin)
        registrations = matching.get(key)
        if registrations is None:
            registrations = matching[key] = [r for r in profile.events_for(plugin) if r.event.matches(event)]
        if not registrations:
            return []
        allowed: set[str] = set()
        for registered in registrations:
            named = None
            if registered.hint is not None and registered.candidates is not None:
                if id(registered) not in candidates:
                    candidates[id(registered)] = registered.candidates(old, new)
                named = candidates[id(registered)]
            if named is None:
                return list(group.retried.values()) + list(group.fresh.values())
            allowed.update(named)
        fresh = group.fresh
        return list(group.retried.values()) + [fresh[uid] for uid in allowed if uid in fresh]

    def flush_backoff_completed(self) -> None:
        now = self.clock()
        while (soonest := self._backoff.peek()) is not None and soonest[0] <= now:
            self._backoff.pop()
            self._push_active(soonest[2])

    def flush_unschedulable_leftover(self) -> None:
        """Pods unschedulable for 5 minutes are tried again whatever happened (UnschedulableTimeout)."""
        now = self.clock()
        stale = [q for q in self._unschedulable.values()
                 if not q.gated_by and now - q.timestamp >= UNSCHEDULABLE_MAX_SECONDS]
        for qpi in stale:
            self._requeue(qpi, "backoff")

    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        count = self._unschedulable_count.get(_uid(qpi.pod), 0)
        duration = self.initial_backoff
        for _ in range(1, count):
            duration *= 2
            if duration >= self.max_backoff:
                return self.max_backoff
        return duration if count else 0.0

    def backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        return qpi.timestamp + self.backoff_duration(qpi)

    async def run(self, stop: asyncio.Event) -> None:
        """Move unschedulable pods that waited too long; wake the loop for expired backoffs."""
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), 30.0)
            except asyncio.TimeoutError:
                pass
            self.flush_unschedulable_leftover()

    # -- internals -----------------------------------------------------------------------------

    def _enqueue_gated_or_active(self, qpi: QueuedPodInfo) -> None:
        uid = _uid(qpi.pod)
        profile = self.profile_of(qpi.pod)
        status = profile.run_pre_enqueue_plugins(qpi.pod) if profile is not None else None
        if status is not None and status.code is not Code.SUCCESS:
            qpi.gated_by = status.plugin
            qpi.timestamp = self.clock()
            self._unschedulable[uid] = qpi
            self._where[uid] = "unschedulable"
            return
        qpi.gated_by = ""
        self._push_active(qpi)
        key = group_key(qpi.pod)
        if key and not self._regating:
            # A member got past PreEnqueue: what held its siblings (their group's count) may not now.
            self._regating = True
            try:
                self._regate(key, qpi.pod)
            finally:
                self._regating = False

    def _push_active(self, qpi: QueuedPodInfo) -> None:
        uid = _uid(qpi.pod)
        self._where[uid] = "active"
        self._active.push(uid, _Entry(qpi, self.less, next(self._seq)))
        self._wakeup.set()

    def _take_out(self, uid: str) -> None:
        where = self._where.get(uid)
        if where == "unschedulable":
            self._unschedulable.pop(uid, None)
        elif where == "backoff":
            self._backoff.discard(uid)

    def _requeue(self, qpi: QueuedPodInfo, decision: str) -> None:
        """Out of the unschedulable pool: to activeQ ("active", or backoff already over) or backoffQ."""
        uid = _uid(qpi.pod)
        # PreEnqueue is asked on the way to activeQ or backoffQ too, as upstream's moveToActiveQ and
        # (with SchedulerPopFromBackoffQ) moveToBackoffQ ask it: a preemptor whose victims are
        # still being evicted waits, gated, instead of coming back to find its node still full.
        profile = self.profile_of(qpi.pod)
        status = profile.run_pre_enqueue_plugins(qpi.pod) if profile is not None else None
        if status is not None and status.code is not Code.SUCCESS:
            qpi.gated_by = status.plugin
            self._unschedulable[uid] = qpi
            self._where[uid] = "unschedulable"
            return
        qpi.gated_by = ""
        self._unschedulable.pop(uid, None)
        expiry = self.backoff_expiry(qpi)
        if decision == "active" or expiry <= self.clock():
            self._push_active(qpi)
            return
        self._where[uid] = "backoff"
        self._backoff.push(uid, (expiry, next(self._seq), qpi))
        self._wakeup.set()  # the loop's wait may now end sooner

    def _note_in_flight(self, event: ClusterEvent, old: Any, new: Any, only: str | None = None) -> None:
        for uid, flight in self._in_flight.items():
            if only is not None and uid != only:
                continue
            if len(flight.events) >= _IN_FLIGHT_EVENTS_MAX:
                flight.overflow = True
            else:
                flight.events.append((event, old, new))

    def _gate_hint(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any,
                   matching: dict[tuple[int, str], list[Any]] | None = None,
                   candidates: dict[int, Collection[str] | None] | None = None) -> str:
        """Whether an event may lift a gated pod's gate ("skip": it stays gated). The gating plugin's
        hint decides; for a pod that an attempt already turned down, an event the gating plugin
        registered is also passed to the plugins that turned it down (upstream's DefaultPreemption
        leaves when to requeue its preemptor to them). A pod let through is asked PreEnqueue again."""
        decision = self._hint_for(qpi, event, old, new, plugins={qpi.gated_by}, matching=matching,
                                  candidates=candidates)
        if decision != "skip" or not (qpi.unschedulable_plugins or qpi.pending_plugins):
            return decision
        profile = self.profile_of(qpi.pod)
        if profile is None or not any(r.event.matches(event) for r in profile.events_for(qpi.gated_by)):
            return "skip"
        return self._hint_for(qpi, event, old, new, matching=matching, candidates=candidates)

    def _hint_for(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any,
                  plugins: set[str] | None = None, matching: dict[tuple[int, str], list[Any]] | None = None,
                  candidates: dict[int, Collection[str] | None] | None = None) -> str:
        """"skip", "backoff" (queue after backoff) or "active" (a PENDING plugin's event: at once).
        `candidates`: the event's answers of registrations that name the pods they may move."""
        if event.resource is Resource.WILDCARD:
            return "backoff"
        rejectors = plugins if plugins is not None else (qpi.unschedulable_plugins | qpi.pending_plugins)
        if not rejectors:
            return "backoff"
        profile = self.profile_of(qpi.pod)
        if profile is None:
            return "skip"
        decision = "skip"
        for plugin in rejectors:
            registrations = matching.get((id(profile), plugin)) if matching is not None else None
            if registrations is None:
                registrations = [r for r in profile.events_for(plugin) if r.event.matches(event)]
                if matching is not None:
                    matching[(id(profile), plugin)] = registrations
            for registered in registrations:
                hint = QueueingHint.QUEUE
                if registered.hint is not None and registered.candidates is not None and candidates is not None:
                    key = id(registered)
                    if key not in candidates:
                        candidates[key] = registered.candidates(old, new)
                    allowed = candidates[key]
                    if allowed is not None and _uid(qpi.pod) not in allowed:
                        continue  # what the hint would answer, without asking it
                if registered.hint is not None:
                    try:
                        hint = registered.hint(qpi.pod, old, new)
                    except Exception:  # a broken hint must not strand the pod
                        log.exception("queueing hint of %s failed for %s", plugin, event)
                        hint = QueueingHint.QUEUE
                if hint is QueueingHint.QUEUE:
                    if plugin in qpi.pending_plugins and plugins is None:
                        return "active"
                    decision = "backoff"
                    break
        return decision


def _labels(obj: Obj) -> Any:
    return (obj.get("metadata") or {}).get("labels")


def pod_update_event(old: Obj, new: Obj, resource: Resource = Resource.UNSCHEDULED_POD) -> ClusterEvent:
    """What kind of update a pod went through (upstream's PodSchedulingPropertiesChange)."""
    action = ActionType(0)
    if _labels(old) != _labels(new):
        action |= ActionType.UPDATE_POD_LABEL
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if old_spec.get("tolerations") != new_spec.get("tolerations"):
        action |= ActionType.UPDATE_POD_TOLERATIONS
    if old_spec.get("schedulingGates") and not new_spec.get("schedulingGates"):
        action |= ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    if (old.get("status") or {}).get("resourceClaimStatuses") != (new.get("status") or {}).get("resourceClaimStatuses"):
        action |= ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
    try:
        before, after = pod_requests(old), pod_requests(new)
        if any(after.get(n) < before.get(n) for n in set(before.names()) | {"cpu", "memory"}):
            action |= ActionType.UPDATE_POD_SCALE_DOWN
    except ValueError:
        pass
    if not action:
        action = ActionType.UPDATE
    return ClusterEvent(resource, action)
