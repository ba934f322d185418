"""The batch Filter (`Framework.filter_nodes_runner`, plugins' `filter_nodes`) answers exactly what
Filter node by node answers, and the cycle built on it finds the same nodes.

Each case runs the default profile over nodes that differ in taints, cordons, load, ports and
labels; the node-by-node answer is `run_filter_plugins`, and the whole search is compared with the
one an observer forces node by node (same feasible nodes in order, same rejections, same next
start index). A plugin whose `filter_nodes` raises is asked node by node and reported as Filter
reports it.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cache import Cache
from scheduler.cycle import Algorithm
from scheduler.default_profile import default_config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.status import Code
from scheduler.queue import Nominator
from scheduler.framework.node_info import PodInfo
from scheduler.runtime import Framework
from tests.scheduler import fakes

Obj = dict[str, Any]
NO_SCHEDULE = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def cluster_nodes() -> list[Obj]:
    nodes = []
    for i in range(150):
        kind = i % 6
        if kind == 1:
            nodes.append(fakes.node(f"n{i}", taints=[NO_SCHEDULE]))
        elif kind == 2:
            nodes.append(fakes.node(f"n{i}", unschedulable=True))
        elif kind == 3:
            nodes.append(fakes.node(f"n{i}", cpu="1", memory="1Gi", pods="2"))
        elif kind == 4:
            nodes.append(fakes.node(f"n{i}", labels={"zone": "a"}))
        else:
            nodes.append(fakes.node(f"n{i}"))
    return nodes


RUNNING = [fakes.pod(f"r{i}", node_name=f"n{i}", requests={"cpu": "900m"},
                     spec={"containers": [{"name": "c", "image": "busybox",
                                           "ports": [{"containerPort": 80, "hostPort": 8080}]}]})
           for i in range(0, 150, 7)]
PODS = {
    "a pod that asks for nothing": fakes.pod("plain"),
    "a pod that fits few nodes": fakes.pod("big", requests={"cpu": "3500m", "memory": "8Gi"}),
    "a pod that tolerates the taint": fakes.pod("tolerant", requests={"cpu": "500m"},
                                                spec={"tolerations": [{"key": "dedicated", "operator": "Exists"}]}),
    "a pod that tolerates the cordon": fakes.pod("cordon", spec={"tolerations": [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]}),
    "a pod with a host port": fakes.pod("ports", spec={"containers": [
        {"name": "c", "image": "busybox", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}),
    "a pod with a node selector": fakes.pod("selector", spec={"nodeSelector": {"zone": "a"}}),
    "a pod that names its node": fakes.pod("named", spec={"nodeName": "n9"}),
    "a pod that fits nowhere": fakes.pod("huge", requests={"cpu": "64"}),
}


class _Recording:
    """An observer: its presence makes the cycle filter node by node."""

    def observe(self, *args: Any) -> None:
        pass

    def attempt_done(self, *args: Any) -> None:
        pass


def _search(pod: Obj, *, observed: bool, nominator: Any = None) -> tuple[list[str], dict[str, tuple[str, str, Any]], int]:
    cache = Cache()
    for node in cluster_nodes():
        cache.add_node(node)
    for running in RUNNING:
        cache.add_pod(running)
    snapshot = Snapshot()
    profile = default_config({}).profiles[0]
    fw = Framework(profile, features={}, snapshot=snapshot, nominator=nominator,
                   observer=_Recording() if observed else None, percentage_of_nodes_to_score=0)
    algorithm = Algorithm(cache, snapshot, nominator)
    algorithm.next_start_node_index = 37
    cache.update_snapshot(snapshot)
    feasible, diagnosis = algorithm.find_nodes_that_fit(fw, CycleState(), pod)
    rejected = {name: (s.plugin, " ".join(s.reasons), s.code) for name, s in diagnosis.node_to_status.statuses.items()}
    return [n.name for n in feasible], rejected, algorithm.next_start_node_index


@pytest.mark.parametrize("pod", PODS.values(), ids=PODS.keys())
def test_the_batch_search_finds_what_the_node_by_node_search_finds(pod: Obj) -> None:
    assert _search(pod, observed=False) == _search(pod, observed=True)


@pytest.mark.parametrize("pod", PODS.values(), ids=PODS.keys())
def test_nominated_nodes_are_filtered_with_their_nominated_pods_in_a_batch(pod: Obj) -> None:
    nominator = Nominator()
    for i in (5, 11, 12):
        nominator.add(PodInfo.of(fakes.pod(f"nominated{i}", requests={"cpu": "3900m"}, priority=100)), f"n{i}")
    assert _search(pod, observed=False, nominator=nominator) == _search(pod, observed=True, nominator=nominator)


def test_every_node_gets_the_status_of_the_first_plugin_that_turns_it_down() -> None:
    profile = default_config({}).profiles[0]
    infos = fakes.node_infos(cluster_nodes(), RUNNING)
    fw = Framework(profile, features={}, snapshot=Snapshot(infos))
    for pod in PODS.values():
        state = CycleState()
        fw.run_pre_filter_plugins(state, pod, infos)
        batch = fw.filter_nodes_runner(state, pod)
        assert batch is not None
        one_by_one = [fw.run_filter_plugins(state, pod, info) for info in infos]
        answers = batch(infos)
        assert [(s.plugin, s.reasons, s.code) if s else None for s in answers] == \
               [(s.plugin, s.reasons, s.code) if s and s.code is not Code.SUCCESS else None for s in one_by_one]


def test_a_plugin_whose_batch_raises_is_asked_node_by_node() -> None:
    profile = default_config({}).profiles[0]
    infos = fakes.node_infos(cluster_nodes()[:12])
    fw = Framework(profile, features={}, snapshot=Snapshot(infos))
    fit = fw.plugins["NodeResourcesFit"]

    def broken(*args: Any) -> dict[int, Any]:
        raise RuntimeError("batch broke")

    fit.filter_nodes = broken
    pod = fakes.pod("big", requests={"cpu": "3500m"})
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod, infos)
    batch = fw.filter_nodes_runner(state, pod)
    assert batch is not None
    got = [(s.plugin, s.reasons) if s else None for s in batch(infos)]
    want = [(s.plugin, s.reasons) if s else None for s in (fw.run_filter_plugins(state, pod, i) for i in infos)]
    assert got == want and ("NodeResourcesFit", ["Insufficient cpu"]) in got


def test_a_short_node_answers_from_its_memo_until_a_pod_leaves_it() -> None:
    profile = default_config({}).profiles[0]
    infos = fakes.node_infos([fakes.node("full"), fakes.node("roomy")],
                             [fakes.pod("hog", node_name="full", requests={"cpu": "3"})])
    fw = Framework(profile, features={}, snapshot=Snapshot(infos))
    fit = fw.plugins["NodeResourcesFit"]
    pod = fakes.pod("big", requests={"cpu": "2"})
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod, infos)
    first = fit.filter_nodes(state, pod, infos)
    assert [(i, s.reasons) for i, s in first.items()] == [(0, ["Insufficient cpu"])]
    assert fit.filter_nodes(state, pod, infos)[0] is first[0]  # the next attempt reads the verdict
    infos[0].remove_pod(fakes.pod("hog", node_name="full"))
    assert fit.filter_nodes(state, pod, infos) == {}
