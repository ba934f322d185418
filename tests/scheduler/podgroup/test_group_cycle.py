"""The PodGroup cycle inside a real `Scheduler` with no API server: the default profile with the
gang gates on, stores filled by hand, a binder that records, a client that keeps the status
patches. Covers the queue entity (a group popped together, gated members left behind), the
GangScheduling gates, all-or-nothing commit behind Permit, basic groups, scheduler names, and
the PodGroupScheduled condition."""

from __future__ import annotations

import asyncio
from typing import Any

from client import cache as client_cache
from client import resources as api
from client.resources import Resource as ApiResource
from scheduler import config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, Resource
from scheduler.framework.status import Status
from scheduler.plugins import names
from scheduler.registry import REGISTRY
from scheduler.scheduler import Scheduler
from tests.scheduler.fakes import Recorder, node, pod

Obj = dict[str, Any]
FEATURES = {"GenericWorkload": True, "GangScheduling": True}


class Binder:
    name = names.DEFAULT_BINDER

    def __init__(self) -> None:
        self.bound: dict[str, str] = {}

    async def bind(self, state: CycleState, p: Obj, node_name: str) -> Status | None:
        self.bound[p["metadata"]["name"]] = node_name
        return None


class Client:
    def __init__(self) -> None:
        self.patches: list[tuple[str, str, Obj]] = []

    async def patch(self, resource: ApiResource, name: str, patch: Any, namespace: str | None = None,
                    **kwargs: Any) -> Obj:
        self.patches.append((resource.resource, name, patch))
        return {}


class Offline(Scheduler):
    """Stores filled by the test instead of informers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.offline: dict[ApiResource, client_cache.Store] = {}
        super().__init__(*args, **kwargs)

    def store(self, resource: ApiResource) -> client_cache.Store:
        return self.offline.setdefault(resource, client_cache.Store())


def make(nodes: int = 4, cpu: str = "1") -> tuple[Offline, Binder, Client, Recorder]:
    binder = Binder()
    registry = {**REGISTRY, names.DEFAULT_BINDER: lambda a, h, f: binder}
    sched = Offline(None, config.default(FEATURES), FEATURES, registry=registry)
    client = Client()
    sched.client = client  # type: ignore[assignment]
    recorder = Recorder()
    sched.frameworks["default-scheduler"].events = recorder  # type: ignore[assignment]
    for i in range(nodes):
        sched.cache.add_node(node(f"n{i}", cpu=cpu))
    return sched, binder, client, recorder


def group(name: str, min_count: int | None) -> Obj:
    policy: Obj = {"gang": {"minCount": min_count}} if min_count else {"basic": {}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "generation": 1},
            "spec": {"schedulingPolicy": policy}}


def member(name: str, pod_group: str, cpu: str = "1", **spec: Any) -> Obj:
    return pod(name, requests={"cpu": cpu}, spec={"schedulingGroup": {"podGroupName": pod_group}, **spec})


def add_group(sched: Offline, pg: Obj) -> None:
    sched.store(api.PODGROUPS).add(pg)
    sched.queue.move_all_on_event(ClusterEvent(Resource.POD_GROUP, ActionType.ADD), None, pg)


def add_pod(sched: Offline, p: Obj) -> None:
    sched.store(api.PODS).add(p)  # the informer's store holds a pod before its handler runs
    sched.queue.add(p)


async def run_once(sched: Offline) -> None:
    qpi = await asyncio.wait_for(sched.queue.pop(), 5)
    assert qpi is not None
    await sched.schedule_one(qpi)
    for _ in range(20):
        await asyncio.sleep(0)


def conditions(client: Client, name: str) -> list[Obj]:
    return [c for res, n, patch in client.patches if res == "podgroups" and n == name
            for c in patch["status"]["conditions"]]


def test_a_pod_whose_group_is_missing_waits_unresolvable_until_the_group_appears() -> None:
    sched, _, _, _ = make()
    p = member("p0", "pg")
    add_pod(sched, p)
    assert sched.queue.where(p) == "gated"
    status = sched.frameworks["default-scheduler"].run_pre_enqueue_plugins(p)
    assert status is not None and status.message == 'waiting for pods\'s pod group "pg" to appear in scheduling queue'
    add_group(sched, group("pg", 2))
    # The group exists now, but a gang of 2 has only one pod so far.
    assert sched.queue.where(p) == "gated"
    status = sched.frameworks["default-scheduler"].run_pre_enqueue_plugins(p)
    assert status is not None and status.message == "waiting for minCount pods from a gang to appear in scheduling queue"
    q = member("p1", "pg")
    add_pod(sched, q)
    assert sched.queue.where(p) == "active" and sched.queue.where(q) == "active"


def test_the_queue_hands_out_a_group_as_one_entity() -> None:
    async def go() -> None:
        sched, _, _, _ = make()
        sched.store(api.PODGROUPS).add(group("pg", 2))
        pods = [member(f"p{i}", "pg") for i in range(3)]
        loner = pod("loner", requests={"cpu": "1"})
        for p in pods + [loner]:
            add_pod(sched, p)
        qpi = await sched.queue.pop()
        assert qpi is not None
        taken = sched.queue.take_group(qpi)
        if qpi.pod["metadata"]["name"] == "loner":
            assert taken == [qpi]
            qpi = await sched.queue.pop()
            assert qpi is not None
            taken = sched.queue.take_group(qpi)
        assert sorted(q.pod["metadata"]["name"] for q in taken) == ["p0", "p1", "p2"]
        assert all(sched.queue.where(p) == "flight" for p in pods)
        assert all(q.attempts == 1 for q in taken)
    asyncio.run(go())


def test_a_gang_that_does_not_fit_binds_nothing_and_says_why_then_binds_whole() -> None:
    async def go() -> None:
        sched, binder, client, recorder = make(nodes=4)
        add_group(sched, group("pg", 5))
        pods = [member(f"p{i}", "pg") for i in range(5)]
        for p in pods:
            add_pod(sched, p)
        await run_once(sched)
        assert binder.bound == {}
        assert sched.cache.pod_count() == 0  # every assumption was released
        assert all(sched.queue.where(p) in ("unschedulable", "backoff") for p in pods)
        [cond] = conditions(client, "pg")
        assert cond["type"] == "PodGroupScheduled" and cond["status"] == "False" and cond["reason"] == "Unschedulable"
        assert cond["message"] == ("0/1 placements are available, first placement status: pod group is unschedulable: "
                               "needs 5, 4 fit: 1 pods Insufficient cpu; 0/4 nodes are available: 4 Insufficient cpu.")
        assert cond["message"].startswith("0/1 placements are available")
        failed = [e for e in recorder.events if e[2] == "FailedScheduling"]
        assert sorted(e[0] for e in failed) == ["p0", "p1", "p2", "p3", "p4", "pg"]
        # A fifth node: the node event wakes the group, which then binds all together.
        fifth = node("n4", cpu="1")
        sched.cache.add_node(fifth)
        sched.queue.move_all_on_event(ClusterEvent(Resource.NODE, ActionType.ADD), None, fifth)
        sched.queue.flush_backoff_completed()
        for qpi in list(sched.queue._infos.values()):  # noqa: SLF001 - skip the backoff wait
            qpi.timestamp = -100.0
        sched.queue.activate(pods)
        await run_once(sched)
        assert sorted(binder.bound) == ["p0", "p1", "p2", "p3", "p4"]
        assert sorted(binder.bound.values()) == ["n0", "n1", "n2", "n3", "n4"]
        assert conditions(client, "pg")[-1]["status"] == "True"
        assert not sched.waiting_pods
    asyncio.run(go())


def test_permit_holds_a_gang_until_min_count_pods_are_assumed() -> None:
    async def go() -> None:
        sched, binder, _, _ = make(nodes=4)
        fw = sched.frameworks["default-scheduler"]
        gang = fw.plugins[names.GANG_SCHEDULING]
        sched.store(api.PODGROUPS).add(group("pg", 3))
        pods = [member(f"p{i}", "pg") for i in range(3)]
        for p in pods:
            sched.store(api.PODS).add(p)
        state = CycleState()
        assert gang.reserve(state, pods[0], "n0") is None
        status, timeout = gang.permit(state, pods[0], "n0")
        assert status is not None and status.code.name == "WAIT" and timeout == 300.0
        # Two wait in the framework; the third, once assumed, allows them all.
        for p in pods[:2]:
            gang.reserve(state, p, "n0")
            wait = fw.run_permit_plugins(state, p, "n0")
            assert wait is not None and wait.code.name == "WAIT"
        gang.reserve(state, pods[2], "n0")
        assert fw.run_permit_plugins(state, pods[2], "n0") is None
        results = await asyncio.gather(*(fw.wait_on_permit(p) for p in pods[:2]))
        assert results == [None, None]
    asyncio.run(go())


def test_a_member_lost_after_permit_rejects_the_waiting_rest() -> None:
    async def go() -> None:
        sched, _, _, _ = make(nodes=4)
        fw = sched.frameworks["default-scheduler"]
        sched.store(api.PODGROUPS).add(group("pg", 3))
        pods = [member(f"p{i}", "pg") for i in range(3)]
        for p in pods:
            sched.store(api.PODS).add(p)
        state = CycleState()
        for p in pods[:2]:
            fw.run_reserve_plugins_reserve(state, p, "n0")
            fw.run_permit_plugins(state, p, "n0")
        fw.run_reserve_plugins_unreserve(state, pods[0], "n0")
        status = await fw.wait_on_permit(pods[1])
        assert status is not None and status.rejected and status.plugin == names.GANG_SCHEDULING
        assert "lost pod p0" in status.message
    asyncio.run(go())


def test_a_basic_group_schedules_what_fits() -> None:
    async def go() -> None:
        sched, binder, client, _ = make(nodes=3)
        add_group(sched, group("pg", None))
        pods = [member(f"p{i}", "pg") for i in range(5)]
        for p in pods:
            add_pod(sched, p)
        await run_once(sched)
        assert len(binder.bound) == 3
        assert sorted(binder.bound.values()) == ["n0", "n1", "n2"]
        left = [p for p in pods if p["metadata"]["name"] not in binder.bound]
        assert all(sched.queue.where(p) in ("unschedulable", "backoff") for p in left)
        assert conditions(client, "pg")[-1]["status"] == "True"
    asyncio.run(go())


def test_pods_of_one_group_must_share_a_scheduler_name() -> None:
    async def go() -> None:
        sched, binder, client, _ = make(nodes=4)
        add_group(sched, group("pg", 2))
        pods = [member("p0", "pg"), member("p1", "pg")]
        other = member("p2", "pg", schedulerName="other-scheduler")
        sched.store(api.PODS).add(other)  # not ours: never queued, but it is in the group
        for p in pods:
            add_pod(sched, p)
        await run_once(sched)
        assert binder.bound == {}
        [cond] = conditions(client, "pg")
        assert cond["message"] == ("pods of pod group pg do not share a scheduler name: "
                                   "default-scheduler, other-scheduler")
    asyncio.run(go())


def test_like_pods_are_tried_together_highest_priority_first() -> None:
    from scheduler.podgroup import ordering
    small = [pod(f"s{i}", requests={"cpu": "1"}) for i in range(2)]
    big = pod("big", requests={"cpu": "2"}, priority=10)
    mixed = [small[0], big, small[1]]
    assert [p["metadata"]["name"] for p in ordering.order(mixed)] == ["big", "s0", "s1"]


class Observer:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str, str]] = []
        self.done: dict[str, str] = {}

    def observe(self, p: Obj, point: str, plugin: str, node_name: str, value: Any) -> None:
        self.seen.append((p["metadata"]["name"], point, plugin, node_name))

    def attempt_done(self, p: Obj, selected_node: str) -> None:
        self.done[p["metadata"]["name"]] = selected_node


def test_record_results_sees_the_group_cycle_per_plugin_and_per_pod() -> None:
    async def go() -> None:
        binder = Binder()
        observer = Observer()
        registry = {**REGISTRY, names.DEFAULT_BINDER: lambda a, h, f: binder}
        sched = Offline(None, config.default(FEATURES), FEATURES, registry=registry, observer=observer)
        for i in range(2):
            sched.cache.add_node(node(f"n{i}", cpu="1"))
        add_group(sched, group("pg", 3))
        pods = [member(f"p{i}", "pg") for i in range(3)]
        for p in pods:
            add_pod(sched, p)
        await run_once(sched)  # 2 nodes of 1 CPU for a gang of 3: rejected whole
        assert observer.done == {"p0": "", "p1": "", "p2": ""}
        filtered = {(pod_name, plugin, n) for pod_name, point, plugin, n in observer.seen if point == "Filter"}
        assert ("p2", names.NODE_RESOURCES_FIT, "n0") in filtered  # the one that found no room
        assert {pod_name for pod_name, point, _, _ in observer.seen if point == "Reserve"} == {"p0", "p1"}
        observer.done.clear()
        third = node("n2", cpu="1")
        sched.cache.add_node(third)
        for qpi in list(sched.queue._infos.values()):  # noqa: SLF001 - skip the backoff wait
            qpi.timestamp = -100.0
        sched.queue.move_all_on_event(ClusterEvent(Resource.NODE, ActionType.ADD), None, third)
        sched.queue.flush_backoff_completed()
        await run_once(sched)
        assert sorted(observer.done.values()) == ["n0", "n1", "n2"]
        permits = [(pod_name, plugin) for pod_name, point, plugin, _ in observer.seen if point == "Permit"]
        assert sorted(permits) == [(f"p{i}", names.GANG_SCHEDULING) for i in range(3)]
    asyncio.run(go())


def test_take_group_takes_members_from_every_sub_queue_but_not_gated_ones() -> None:
    async def go() -> None:
        sched, _, _, _ = make()
        sched.store(api.PODGROUPS).add(group("pg", 2))
        pods = [member(f"p{i}", "pg") for i in range(3)]
        gated = member("gated", "pg", schedulingGates=[{"name": "wait"}])
        for p in pods + [gated]:
            add_pod(sched, p)
        assert sched.queue.where(gated) == "gated"
        first = await sched.queue.pop()
        assert first is not None
        taken = sched.queue.take_group(first)
        # All three fail together: one goes to backoff, one to the unschedulable pool by hand.
        for qpi in taken:
            qpi.unschedulable_plugins = {names.NODE_RESOURCES_FIT}
            sched.queue.add_unschedulable_if_not_present(qpi)
        sched.queue.activate([pods[0]])
        sched.queue._requeue(sched.queue._infos[pods[1]["metadata"]["uid"]], "backoff")  # noqa: SLF001
        assert {sched.queue.where(p) for p in pods} == {"active", "backoff", "unschedulable"}
        popped = await sched.queue.pop()
        assert popped is not None and popped.pod["metadata"]["name"] == "p0"
        again = sched.queue.take_group(popped)
        assert sorted(q.pod["metadata"]["name"] for q in again) == ["p0", "p1", "p2"]
        assert sched.queue.where(gated) == "gated"
        assert sched.queue.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    asyncio.run(go())
