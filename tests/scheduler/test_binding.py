"""The scheduler's attempt end to end without an API server: scheduling cycle, binding task, failures.

A `Scheduler` with no client, nodes put straight into its cache, fake plugins for Permit, PreBind
and Bind; events are caught by a recorder and the status patches it would send are kept.
"""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler.config.types import POINTS, PluginRef, Profile, SchedulerConfig
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import Status
from scheduler.plugins.priority_sort import PrioritySort
from scheduler.scheduler import Scheduler
from tests.scheduler.fakes import Recorder, node, pod

Obj = dict[str, Any]


class Binder:
    name = "FakeBinder"

    def __init__(self, status: Status | None = None) -> None:
        self.status = status
        self.bound: list[tuple[str, str]] = []

    async def bind(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
        self.bound.append((p["metadata"]["name"], node_name))
        return self.status


class Gate:
    """Permit that waits; the test allows or rejects through the waiting pod."""

    name = "Gate"

    def permit(self, state: CycleState, p: Obj, node_name: str) -> tuple[Status | None, float]:
        return Status.wait(), 60.0


class Reserver:
    name = "Reserver"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def reserve(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
        self.calls.append("reserve")
        return None

    def unreserve(self, state: CycleState, p: Obj, node_name: str) -> None:
        self.calls.append("unreserve")


def make(*plugins: Any) -> tuple[Scheduler, Recorder, list[Obj]]:
    all_plugins = [PrioritySort(), *plugins]
    refs = [PluginRef(p.name) for p in all_plugins]
    profile = Profile("default-scheduler", points={point: list(refs) for point in POINTS})
    registry = {p.name: (lambda a, h, f, p=p: p) for p in all_plugins}
    sched = Scheduler(None, SchedulerConfig([profile]), {}, registry=registry)
    recorder = Recorder()
    sched.frameworks["default-scheduler"].events = recorder
    patches: list[Obj] = []
    sched._send_status_patch = lambda meta, patch: patches.append(patch)  # type: ignore[method-assign]
    sched.cache.add_node(node("a"))
    return sched, recorder, patches


async def attempt(sched: Scheduler, p: Obj) -> None:
    sched.queue.add(p)
    qpi = await sched.queue.pop()
    assert qpi is not None
    await sched.schedule_one(qpi)


async def settle(sched: Scheduler) -> None:
    for _ in range(10):
        await asyncio.sleep(0)
    await asyncio.gather(*[t for t in sched._tasks], return_exceptions=True)


async def test_a_bound_pod_gets_the_scheduled_event_and_stays_counted_on_its_node() -> None:
    binder = Binder()
    sched, recorder, patches = make(binder)
    await attempt(sched, pod("p", requests={"cpu": "1"}))
    await settle(sched)
    assert binder.bound == [("p", "a")]
    assert recorder.events == [("p", "Normal", "Scheduled", "Successfully assigned default/p to a")]
    assert sched.cache.node_info("a").requested.milli_cpu == 1000  # type: ignore[union-attr]
    assert patches == []


async def test_a_bind_error_undoes_the_reservation_and_reports_a_scheduler_error() -> None:
    binder, reserver = Binder(Status.as_error("pods \"p\" is already assigned")), Reserver()
    sched, recorder, patches = make(reserver, binder)
    await attempt(sched, pod("p", requests={"cpu": "1"}))
    await settle(sched)
    assert reserver.calls == ["reserve", "unreserve"]
    assert sched.cache.node_info("a").requested.milli_cpu == 0  # type: ignore[union-attr]
    message = 'running Bind plugin "FakeBinder": pods "p" is already assigned'
    assert recorder.events == [("p", "Warning", "FailedScheduling", message)]
    condition = patches[0]["status"]["conditions"][0]
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "SchedulerError", message)
    assert sched.queue.where(pod("p")) == "backoff"


async def test_a_waiting_pod_binds_once_allowed() -> None:
    binder = Binder()
    sched, recorder, _ = make(Gate(), binder)
    p = pod("p")
    await attempt(sched, p)
    await settle_briefly()
    assert binder.bound == []
    waiting = sched.frameworks["default-scheduler"].waiting_pod(p["metadata"]["uid"])
    assert waiting is not None
    waiting.allow("Gate")
    await settle(sched)
    assert binder.bound == [("p", "a")]


async def test_a_rejected_waiting_pod_is_unschedulable_with_a_one_node_message() -> None:
    binder = Binder()
    sched, recorder, patches = make(Gate(), binder)
    p = pod("p")
    await attempt(sched, p)
    await settle_briefly()
    waiting = sched.frameworks["default-scheduler"].waiting_pod(p["metadata"]["uid"])
    assert waiting is not None
    waiting.reject("Gate", "gang is incomplete")
    await settle(sched)
    assert binder.bound == []
    assert recorder.events == [("p", "Warning", "FailedScheduling", "0/1 nodes are available: 1 gang is incomplete.")]
    assert patches[0]["status"]["conditions"][0]["reason"] == "Unschedulable"
    assert sched.queue.where(p) == "unschedulable"
    assert not sched.cache.is_assumed({**p, "spec": {**p["spec"], "nodeName": "a"}})


async def test_a_pod_being_deleted_is_not_scheduled() -> None:
    binder = Binder()
    sched, recorder, _ = make(binder)
    p = pod("p")
    p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    await attempt(sched, p)
    await settle(sched)
    assert binder.bound == []
    assert recorder.events == [("p", "Warning", "FailedScheduling", "skip schedule deleting pod: default/p")]


async def settle_briefly() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


class LabelGate:
    """Filter: only nodes labelled ready=yes; a node label change may help."""

    name = "LabelGate"

    def filter(self, state: CycleState, p: Obj, n: Any) -> Status | None:
        return None if n.labels.get("ready") == "yes" else Status.unschedulable("node(s) not ready for it")

    def events_to_register(self) -> list[Any]:
        from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource

        return [ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_LABEL))]


async def test_informer_events_move_the_rejected_pod_and_confirm_the_bound_one() -> None:
    from client.informer import Event

    binder = Binder()
    sched, recorder, _ = make(LabelGate(), binder)
    p = pod("p")
    sched._on_pod(Event("ADDED", p))
    qpi = await sched.queue.pop()
    assert qpi is not None
    await sched.schedule_one(qpi)
    assert recorder.events[-1][3] == "0/1 nodes are available: 1 node(s) not ready for it."
    assert sched.queue.where(p) == "unschedulable"
    old = node("a")
    sched._on_node(Event("MODIFIED", node("a", taints=[{"key": "k", "effect": "NoSchedule"}]), old))
    assert sched.queue.where(p) == "unschedulable"  # a taint change: not an event LabelGate cares about
    sched.queue.clock = lambda: 10**9  # its backoff is long over
    sched._on_node(Event("MODIFIED", node("a", labels={"ready": "yes"}), old))
    assert sched.queue.where(p) == "active"
    qpi = await sched.queue.pop()
    assert qpi is not None
    await sched.schedule_one(qpi)
    await settle(sched)
    assert binder.bound == [("p", "a")]
    bound = {**p, "spec": {**p["spec"], "nodeName": "a"}}
    sched._on_pod(Event("MODIFIED", bound, p))  # the informer shows the binding
    assert not sched.cache.is_assumed(bound) and sched.cache.has_pod(bound)
    assert sched.queue.where(p) == ""


async def test_health_counts_only_the_informers_it_started() -> None:
    from client import kubeconfig, resources
    from client.rest import RestClient

    client = RestClient(kubeconfig.Config.for_url("http://127.0.0.1:9", None, None))
    refs = [PluginRef(PrioritySort.name)]
    profile = Profile("default-scheduler", points={point: list(refs) for point in POINTS})
    sched = Scheduler(client, SchedulerConfig([profile]), {}, registry={PrioritySort.name: lambda a, h, f: PrioritySort()})
    sched.store(resources.PODGROUPS)  # asked for, but (say) not served: never started
    assert sched.problems() == []
    sched._watched.add(resources.PODGROUPS)
    assert sched.problems() == [f"informer {resources.PODGROUPS} has not synced"]
    await client.close()


async def test_prebind_runs_beside_the_nomination_and_the_binding_waits_for_it() -> None:
    order: list[str] = []
    nominated = asyncio.Event()
    prebind_started = asyncio.Event()

    class Writer:
        """A PreBind with work to do (DRA's claim writes), so the pod is nominated first."""

        name = "Writer"

        def pre_bind_pre_flight(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
            return None

        async def pre_bind(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
            order.append("prebind")
            prebind_started.set()
            return None

    class OrderedBinder(Binder):
        async def bind(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
            order.append("bind")
            return await super().bind(state, p, node_name)

    async def nominate() -> None:
        await prebind_started.wait()  # the API round trip ends only after PreBind began
        order.append("nominated")
        nominated.set()

    binder = OrderedBinder()
    sched, recorder, _ = make(Writer(), binder)
    sched.features["NominatedNodeNameForExpectation"] = True  # beta, on by default in 1.36
    sched.patch_nominated_node = lambda p, node_name: asyncio.ensure_future(nominate())  # type: ignore[method-assign,assignment]
    await attempt(sched, pod("p"))
    await asyncio.wait_for(nominated.wait(), 5)
    await settle(sched)
    assert order == ["prebind", "nominated", "bind"]
    assert binder.bound == [("p", "a")]
