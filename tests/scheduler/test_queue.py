"""The scheduling queue (scheduler/queue.py) on a fake clock: order, gates, hints, backoff."""

from __future__ import annotations

from typing import Any

from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import QueuedPodInfo
from scheduler.framework.status import Status
from scheduler.plugins.priority_sort import PrioritySort
from scheduler.plugins.scheduling_gates import SchedulingGates
from scheduler.queue import SchedulingQueue
from tests.scheduler.fakes import node, pod

Obj = dict[str, Any]
NODE_ADD = ClusterEvent(Resource.NODE, ActionType.ADD)
NODE_TAINT = ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_TAINT)
CLAIM_UPDATE = ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.UPDATE)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Profile:
    """The framework side the queue asks: PreEnqueue (SchedulingGates) and each plugin's events."""

    def __init__(self) -> None:
        self.gates = SchedulingGates()
        self.events: dict[str, list[ClusterEventWithHint]] = {
            "Fit": [ClusterEventWithHint(NODE_ADD)],
            "Taints": [ClusterEventWithHint(NODE_TAINT, self._untainted)],
            "Claims": [ClusterEventWithHint(CLAIM_UPDATE)],
            "SchedulingGates": self.gates.events_to_register(),
        }

    @staticmethod
    def _untainted(p: Obj, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.SKIP if (new.get("spec") or {}).get("taints") else QueueingHint.QUEUE

    def run_pre_enqueue_plugins(self, p: Obj) -> Status | None:
        status = self.gates.pre_enqueue(p)
        return status.with_plugin(self.gates.name) if status is not None else None

    def events_for(self, plugin: str) -> list[ClusterEventWithHint]:
        return self.events.get(plugin, [])


def make_queue() -> tuple[SchedulingQueue, Clock]:
    clock = Clock()
    profile = Profile()
    return SchedulingQueue(PrioritySort().less, lambda p: profile, clock=clock), clock


async def pop(q: SchedulingQueue) -> QueuedPodInfo:
    qpi = await q.pop()
    assert qpi is not None
    return qpi


async def fail(q: SchedulingQueue, qpi: QueuedPodInfo, *plugins: str, pending: bool = False) -> None:
    if pending:
        qpi.pending_plugins = set(plugins)
    else:
        qpi.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(qpi)


async def test_higher_priority_pods_come_first_then_the_earlier_ones() -> None:
    q, clock = make_queue()
    q.add(pod("low-early", priority=1))
    clock.now += 1
    q.add(pod("high", priority=10))
    clock.now += 1
    q.add(pod("low-late", priority=1))
    names = [(await pop(q)).pod["metadata"]["name"] for _ in range(3)]
    assert names == ["high", "low-early", "low-late"]


async def test_a_gated_pod_waits_outside_active_until_its_gates_are_removed() -> None:
    q, _ = make_queue()
    gated = pod("g", spec={"schedulingGates": [{"name": "example.com/a"}]})
    q.add(gated)
    assert q.where(gated) == "gated"
    q.move_all_on_event(NODE_ADD, None, node("n"))
    assert q.where(gated) == "gated"
    open_ = pod("g")
    q.update(gated, open_)
    assert q.where(open_) == "active"


async def test_an_unschedulable_pod_returns_only_on_an_event_its_rejecting_plugin_registered() -> None:
    q, clock = make_queue()
    q.add(pod("p"))
    qpi = await pop(q)
    await fail(q, qpi, "Fit")
    assert q.where(qpi.pod) == "unschedulable"
    q.move_all_on_event(CLAIM_UPDATE, None, {})
    assert q.where(qpi.pod) == "unschedulable"
    clock.now += 5  # past its 1 s backoff
    q.move_all_on_event(NODE_ADD, None, node("n"))
    assert q.where(qpi.pod) == "active"


async def test_a_hint_that_answers_skip_leaves_the_pod_waiting() -> None:
    q, clock = make_queue()
    q.add(pod("p"))
    qpi = await pop(q)
    await fail(q, qpi, "Taints")
    clock.now += 5
    tainted = node("n", taints=[{"key": "k", "effect": "NoSchedule"}])
    q.move_all_on_event(NODE_TAINT, tainted, tainted)
    assert q.where(qpi.pod) == "unschedulable"
    q.move_all_on_event(NODE_TAINT, tainted, node("n"))
    assert q.where(qpi.pod) == "active"


async def test_a_pod_moved_before_its_backoff_ends_waits_in_backoff_then_becomes_active() -> None:
    q, clock = make_queue()
    q.add(pod("p"))
    qpi = await pop(q)
    await fail(q, qpi, "Fit")
    q.move_all_on_event(NODE_ADD, None, node("n"))
    assert q.where(qpi.pod) == "backoff"
    clock.now += 0.5
    q.flush_backoff_completed()
    assert q.where(qpi.pod) == "backoff"
    clock.now += 0.6
    q.flush_backoff_completed()
    assert q.where(qpi.pod) == "active"


async def test_backoff_doubles_from_one_second_up_to_ten() -> None:
    q, clock = make_queue()
    q.add(pod("p"))
    seen = []
    for _ in range(6):
        qpi = await pop(q)
        await fail(q, qpi, "Fit")
        seen.append(q.backoff_duration(qpi))
        clock.now += 100
        q.move_all_on_event(NODE_ADD, None, node("n"))
    assert seen == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


async def test_a_pending_pod_goes_straight_to_active_and_its_backoff_does_not_grow() -> None:
    q, _ = make_queue()
    q.add(pod("p"))
    for _ in range(3):
        qpi = await pop(q)
        await fail(q, qpi, "Claims", pending=True)
        assert q.backoff_duration(qpi) == 0.0
        q.move_all_on_event(CLAIM_UPDATE, None, {})
        assert q.where(qpi.pod) == "active"


async def test_an_event_during_the_attempt_sends_the_failed_pod_back_instead_of_waiting() -> None:
    q, clock = make_queue()
    q.add(pod("p"))
    qpi = await pop(q)
    q.move_all_on_event(NODE_ADD, None, node("n"))  # arrives while the pod is being scheduled
    await fail(q, qpi, "Fit")
    assert q.where(qpi.pod) == "backoff"  # not the unschedulable pool: it serves its backoff and goes on
    clock.now += 1.1
    q.flush_backoff_completed()
    assert q.where(qpi.pod) == "active"


async def test_an_event_during_the_attempt_that_no_rejecting_plugin_cares_about_is_not_replayed() -> None:
    q, _ = make_queue()
    q.add(pod("p"))
    qpi = await pop(q)
    q.move_all_on_event(CLAIM_UPDATE, None, {})
    await fail(q, qpi, "Fit")
    assert q.where(qpi.pod) == "unschedulable"


async def test_a_pod_that_failed_with_an_error_is_retried_after_backoff() -> None:
    q, clock = make_queue()
    q.add(pod("p"))
    qpi = await pop(q)
    await fail(q, qpi)  # no plugin rejected it: an error
    assert q.where(qpi.pod) == "backoff"
    clock.now += 1.5
    q.flush_backoff_completed()
    assert q.where(qpi.pod) == "active"


async def test_unschedulable_pods_are_retried_after_five_minutes_whatever_happens() -> None:
    q, clock = make_queue()
    q.add(pod("p"))
    qpi = await pop(q)
    await fail(q, qpi, "Fit")
    clock.now += 299
    q.flush_unschedulable_leftover()
    assert q.where(qpi.pod) == "unschedulable"
    clock.now += 2
    q.flush_unschedulable_leftover()
    assert q.where(qpi.pod) == "active"


async def test_a_deleted_pod_leaves_every_sub_queue_and_its_nomination() -> None:
    q, _ = make_queue()
    p = pod("p", spec={})
    p["status"]["nominatedNodeName"] = "n"
    q.add(p)
    assert [i.pod["metadata"]["name"] for i in q.nominator.for_node("n")] == ["p"]
    q.delete(p)
    assert q.where(p) == "" and q.nominator.for_node("n") == []
    assert len(q) == 0


async def test_activate_moves_a_waiting_pod_to_active_at_once_but_leaves_a_gated_one() -> None:
    q, _ = make_queue()
    q.add(pod("p"))
    qpi = await pop(q)
    await fail(q, qpi, "Fit")
    gated = pod("g", spec={"schedulingGates": [{"name": "example.com/a"}]})
    q.add(gated)
    q.activate([qpi.pod, gated])
    assert q.where(qpi.pod) == "active" and q.where(gated) == "gated"


async def test_an_update_of_an_unschedulable_pod_itself_requeues_it_when_its_plugin_cares() -> None:
    """The pod's own update (a label here; the generated claim name for DynamicResources) goes
    through the rejecting plugins' hints, as upstream's PodUpdate for unschedulable pods."""
    clock = Clock()
    profile = Profile()
    profile.events["Labels"] = [ClusterEventWithHint(ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL))]
    q = SchedulingQueue(PrioritySort().less, lambda p: profile, clock=clock)
    q.add(pod("p"))
    qpi = await pop(q)
    await fail(q, qpi, "Labels")
    clock.now += 5
    old = qpi.pod
    new = {**old, "metadata": {**old["metadata"], "labels": {"ready": "yes"}}}
    q.update(old, new)
    assert q.where(new) == "active"


async def test_a_registration_naming_its_candidates_is_asked_only_about_those_pods() -> None:
    asked: list[str] = []

    def hint(p: Obj, old: Any, new: Any) -> QueueingHint:
        asked.append(p["metadata"]["name"])
        return QueueingHint.QUEUE

    named: list[set[str] | None] = []

    def candidates(old: Any, new: Any) -> set[str] | None:
        return named[-1]

    profile = Profile()
    profile.events["Claims"] = [ClusterEventWithHint(CLAIM_UPDATE, hint, candidates)]
    q = SchedulingQueue(PrioritySort().less, lambda p: profile, clock=Clock())
    pods = {name: pod(name) for name in ("a", "b", "c")}
    for p in pods.values():
        q.add(p)
    for _ in pods:
        await fail(q, await pop(q), "Claims")
    named.append({pods["b"]["metadata"]["uid"]})
    q.move_all_on_event(CLAIM_UPDATE, {}, {})
    assert asked == ["b"]
    assert q.where(pods["b"]) == "backoff" and q.where(pods["a"]) == q.where(pods["c"]) == "unschedulable"
    named.append(None)  # any pod may care (a deallocated claim frees devices for all)
    q.move_all_on_event(CLAIM_UPDATE, {}, {})
    assert sorted(asked) == ["a", "b", "c"]


class ClaimGateProfile(Profile):
    """DynamicResources' shape: PreEnqueue holds a pod until its claims exist, and the claim
    event's registration names the pods it concerns."""

    def __init__(self, named: list[set[str] | None]) -> None:
        super().__init__()
        self.waiting: set[str] = set()
        self.asked: list[str] = []
        self.events["Claims"] = [ClusterEventWithHint(CLAIM_UPDATE, self._hint, lambda old, new: named[-1])]

    def _hint(self, p: Obj, old: Any, new: Any) -> QueueingHint:
        self.asked.append(p["metadata"]["name"])
        return QueueingHint.QUEUE

    def run_pre_enqueue_plugins(self, p: Obj) -> Status | None:
        if p["metadata"]["uid"] in self.waiting:
            return Status.unresolvable("waiting for resource claims").with_plugin("Claims")
        return super().run_pre_enqueue_plugins(p)


async def test_pods_gated_by_a_plugin_are_asked_only_when_its_event_names_them() -> None:
    named: list[set[str] | None] = []
    profile = ClaimGateProfile(named)
    q = SchedulingQueue(PrioritySort().less, lambda p: profile, clock=Clock())
    pods = {name: pod(name) for name in ("a", "b", "c")}
    profile.waiting = {p["metadata"]["uid"] for p in pods.values()}
    for p in pods.values():
        q.add(p)
    assert {q.where(p) for p in pods.values()} == {"gated"}
    q.move_all_on_event(NODE_ADD, None, node("n"))  # the gating plugin did not register it
    named.append({pods["b"]["metadata"]["uid"]})
    profile.waiting.discard(pods["b"]["metadata"]["uid"])
    q.move_all_on_event(CLAIM_UPDATE, {}, {})
    assert profile.asked == ["b"]
    assert q.where(pods["b"]) == "active" and q.where(pods["a"]) == q.where(pods["c"]) == "gated"
    named.append(None)  # no narrowing: every gated pod is asked
    q.move_all_on_event(CLAIM_UPDATE, {}, {})
    assert sorted(profile.asked) == ["a", "b", "c"]


async def test_a_gated_pod_an_attempt_turned_down_is_asked_whatever_the_event_names() -> None:
    named: list[set[str] | None] = [set()]  # the claim events name no pod
    profile = ClaimGateProfile(named)
    profile.events["Fit"] = [ClusterEventWithHint(NODE_ADD), ClusterEventWithHint(CLAIM_UPDATE)]
    q = SchedulingQueue(PrioritySort().less, lambda p: profile, clock=Clock())
    q.add(pod("p"))
    qpi = await pop(q)
    profile.waiting.add(qpi.pod["metadata"]["uid"])
    await fail(q, qpi, "Fit")
    q.move_all_on_event(NODE_ADD, None, node("n"))  # Fit's event: PreEnqueue then holds the pod
    assert q.where(qpi.pod) == "gated"
    q.move_all_on_event(NODE_ADD, None, node("m"))  # Claims, the gate, did not register it
    assert q.where(qpi.pod) == "gated"
    profile.waiting.clear()
    q.move_all_on_event(CLAIM_UPDATE, {}, {})  # the gate's event, naming no pod: Fit is asked
    assert q.where(qpi.pod) == "active" and profile.asked == []


ASSIGNED_POD_DELETE = ClusterEvent(Resource.ASSIGNED_POD, ActionType.DELETE)


class PreemptingProfile(Profile):
    """DefaultPreemption's shape: PreEnqueue holds the pods whose evictions are under way, and its
    own hint on an assigned pod's deletion is Skip (the plugins that turned the pod down decide)."""

    def __init__(self) -> None:
        super().__init__()
        self.preempting: set[str] = set()
        self.events["Fit"] = [ClusterEventWithHint(NODE_ADD), ClusterEventWithHint(ASSIGNED_POD_DELETE)]
        self.events["DefaultPreemption"] = [ClusterEventWithHint(ASSIGNED_POD_DELETE, lambda *_: QueueingHint.SKIP)]

    def run_pre_enqueue_plugins(self, p: Obj) -> Status | None:
        if p["metadata"]["uid"] in self.preempting:
            return Status.unresolvable("waiting for the preemption for this pod to be finished").with_plugin(
                "DefaultPreemption")
        return super().run_pre_enqueue_plugins(p)


async def test_a_preemptor_waits_gated_while_its_victims_go_and_returns_on_the_last_deletion() -> None:
    clock, profile = Clock(), PreemptingProfile()
    q = SchedulingQueue(PrioritySort().less, lambda p: profile, clock=clock)
    q.add(pod("high", priority=10))
    qpi = await pop(q)
    profile.preempting.add(qpi.pod["metadata"]["uid"])  # PostFilter started the evictions
    await fail(q, qpi, "Fit")
    clock.now += 5  # past its backoff
    q.move_all_on_event(ASSIGNED_POD_DELETE, pod("victim-1", node_name="n"), None)
    assert q.where(qpi.pod) == "gated"  # the first victim went, the evictions are still under way
    q.move_all_on_event(NODE_TAINT, node("n"), node("n"))
    assert q.where(qpi.pod) == "gated"  # an event neither plugin registered leaves it
    profile.preempting.clear()  # the last victim's deletion has started
    q.move_all_on_event(ASSIGNED_POD_DELETE, pod("victim-2", node_name="n"), None)
    assert q.where(qpi.pod) == "active"


async def test_activating_a_gated_preemptor_asks_its_gate_again() -> None:
    clock, profile = Clock(), PreemptingProfile()
    q = SchedulingQueue(PrioritySort().less, lambda p: profile, clock=clock)
    q.add(pod("high", priority=10))
    qpi = await pop(q)
    profile.preempting.add(qpi.pod["metadata"]["uid"])
    await fail(q, qpi, "Fit")
    q.move_all_on_event(ASSIGNED_POD_DELETE, pod("victim", node_name="n"), None)
    q.activate([qpi.pod])
    assert q.where(qpi.pod) == "gated"  # still preempting: the gate holds
    profile.preempting.clear()  # the evictions failed and ended: the plugin activates the pod
    q.activate([qpi.pod])
    assert q.where(qpi.pod) == "active"


async def test_activation_does_not_open_a_scheduling_gate() -> None:
    q, _ = make_queue()
    gated = pod("g", spec={"schedulingGates": [{"name": "example.com/a"}]})
    q.add(gated)
    q.activate([gated])
    assert q.where(gated) == "gated"
