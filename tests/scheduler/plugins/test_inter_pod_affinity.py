"""InterPodAffinity: required affinity and anti-affinity, existing pods' anti-affinity, namespaces
and namespace selectors, matchLabelKeys/mismatchLabelKeys, the self-affinity special case, the
preemption extensions, and scores worked out from upstream's sums and min-max normalization."""

from __future__ import annotations

from typing import Any

import pytest

from client import resources
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import QueueingHint
from scheduler.framework.interfaces import NodeScore
from scheduler.framework.node_info import PodInfo
from scheduler.framework.status import Code
from scheduler.plugins import inter_pod_affinity as ipa
from tests.scheduler.fakes import FakeHandle, node, pod

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
AFFINITY = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ipa.ERR_AFFINITY_RULES)
ANTI = (Code.UNSCHEDULABLE, ipa.ERR_ANTI_AFFINITY_RULES)
EXISTING = (Code.UNSCHEDULABLE, ipa.ERR_EXISTING_ANTI_AFFINITY)


def zoned(name: str, zone: str | None) -> Obj:
    return node(name, labels={ZONE: zone} if zone else {})


NODES = [zoned("a", "z1"), zoned("b", "z1"), zoned("c", "z2")]


def term(labels: dict[str, str], key: str = ZONE, **extra: Any) -> Obj:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key, **extra}


def with_affinity(name: str, labels: dict[str, str], *, on: str = "", affinity: list[Obj] = (),
                  anti: list[Obj] = (), preferred: list[Obj] = (), preferred_anti: list[Obj] = (),
                  namespace: str = "default") -> Obj:
    spec: Obj = {}
    if affinity or preferred:
        spec["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(affinity),
                               "preferredDuringSchedulingIgnoredDuringExecution": list(preferred)}
    if anti or preferred_anti:
        spec["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti),
                                   "preferredDuringSchedulingIgnoredDuringExecution": list(preferred_anti)}
    return pod(name, node_name=on, labels=labels, namespace=namespace, spec={"affinity": spec} if spec else {})


def namespace(name: str, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}}}


NAMESPACES = [namespace("default", {}), namespace("blue", {"team": "blue"}), namespace("green", {"team": "green"})]


def verdicts(handle: FakeHandle, p: Obj, state: CycleState | None = None) -> dict[str, Any]:
    plugin = ipa.new({}, handle, {})
    state = state or CycleState()
    _, status = plugin.pre_filter(state, p, handle.snapshot.node_infos)
    if status is not None and status.code is Code.SKIP:
        return {info.name: None for info in handle.snapshot.node_infos}  # the framework skips Filter
    assert status is None, status
    out: dict[str, Any] = {}
    for info in handle.snapshot.node_infos:
        st = plugin.filter(state, p, info)
        out[info.name] = None if st is None else (st.code, st.message)
    return out


FILTER_CASES = [
    pytest.param(NODES, [pod("db", node_name="a", labels={"app": "db"})],
                 with_affinity("in", {"app": "web"}, affinity=[term({"app": "db"})]),
                 {"a": None, "b": None, "c": AFFINITY},
                 id="Required affinity admits every node of the zone that holds a matching pod"),
    pytest.param(NODES + [zoned("d", None)], [], with_affinity("in", {"app": "db"}, affinity=[term({"app": "db"})]),
                 {"a": None, "b": None, "c": None, "d": AFFINITY},
                 id="The first pod of a self-affine group may go to any node with the topology key"),
    pytest.param(NODES, [], with_affinity("in", {"app": "web"}, affinity=[term({"app": "db"})]),
                 {"a": AFFINITY, "b": AFFINITY, "c": AFFINITY},
                 id="Required affinity with no matching pod anywhere and no self-match fails everywhere"),
    pytest.param(NODES, [pod("db", node_name="c", labels={"app": "db"})],
                 with_affinity("in", {"app": "db"}, affinity=[term({"app": "db"})]),
                 {"a": AFFINITY, "b": AFFINITY, "c": None},
                 id="Once a matching pod exists the self-match no longer opens other zones"),
    pytest.param(NODES, [pod("db", node_name="a", labels={"app": "db", "tier": "x"})],
                 with_affinity("in", {"app": "web"}, affinity=[term({"app": "db"}), term({"tier": "x"}, HOST)]),
                 {"a": None, "b": AFFINITY, "c": AFFINITY},
                 id="Every required affinity term must hold on the node"),
    pytest.param(NODES, [pod("w", node_name="a", labels={"app": "web"})],
                 with_affinity("in", {"app": "web"}, anti=[term({"app": "web"}, HOST)]),
                 {"a": ANTI, "b": None, "c": None},
                 id="Required anti-affinity by hostname closes only the node with the matching pod"),
    pytest.param(NODES, [with_affinity("guard", {"app": "guard"}, on="a", anti=[term({"app": "web"})])],
                 pod("in", labels={"app": "web"}),
                 {"a": EXISTING, "b": EXISTING, "c": None},
                 id="An existing pod's anti-affinity keeps the incoming pod out of its zone"),
    pytest.param(NODES, [with_affinity("guard", {"app": "guard"}, on="a", anti=[term({"app": "web"})])],
                 pod("in", labels={"app": "web"}, namespace="blue"),
                 {"a": None, "b": None, "c": None},
                 id="An existing pod's anti-affinity covers only its own namespace by default"),
    pytest.param(NODES, [with_affinity("guard", {"app": "guard"}, on="a",
                                       anti=[term({"app": "web"}, namespaceSelector={"matchLabels": {"team": "blue"}})])],
                 pod("in", labels={"app": "web"}, namespace="blue"),
                 {"a": EXISTING, "b": EXISTING, "c": None},
                 id="An existing pod's namespace selector is matched against the incoming pod's namespace labels"),
    pytest.param(NODES, [pod("db", node_name="a", labels={"app": "db"}, namespace="blue")],
                 with_affinity("in", {"app": "web"},
                               affinity=[term({"app": "db"}, namespaceSelector={"matchLabels": {"team": "blue"}})]),
                 {"a": None, "b": None, "c": AFFINITY},
                 id="A namespace selector finds matching pods in the namespaces it selects"),
    pytest.param(NODES, [pod("db", node_name="a", labels={"app": "db"}, namespace="green")],
                 with_affinity("in", {"app": "web"},
                               affinity=[term({"app": "db"}, namespaceSelector={"matchLabels": {"team": "blue"}})]),
                 {"a": AFFINITY, "b": AFFINITY, "c": AFFINITY},
                 id="Pods in namespaces the selector does not select do not count"),
    pytest.param(NODES, [pod("db", node_name="c", labels={"app": "db"}, namespace="green")],
                 with_affinity("in", {"app": "web"}, affinity=[term({"app": "db"}, namespaceSelector={})]),
                 {"a": AFFINITY, "b": AFFINITY, "c": None},
                 id="An empty namespace selector means every namespace"),
    pytest.param(NODES, [pod("db", node_name="c", labels={"app": "db"}, namespace="green")],
                 with_affinity("in", {"app": "web"}, affinity=[term({"app": "db"}, namespaces=["green"])]),
                 {"a": AFFINITY, "b": AFFINITY, "c": None},
                 id="An explicit namespaces list replaces the pod's own namespace"),
    pytest.param(NODES, [pod("w1", node_name="a", labels={"app": "web", "rev": "1"}),
                         pod("w2", node_name="c", labels={"app": "web", "rev": "2"})],
                 with_affinity("in", {"app": "web", "rev": "2"}, anti=[term({"app": "web"}, HOST, matchLabelKeys=["rev"])]),
                 {"a": None, "b": None, "c": ANTI},
                 id="matchLabelKeys narrows anti-affinity to the pods of the same revision"),
    pytest.param(NODES, [pod("t1", node_name="a", labels={"tenant": "one"}),
                         pod("t2", node_name="c", labels={"tenant": "two"})],
                 with_affinity("in", {"tenant": "one"},
                               anti=[{"labelSelector": {"matchExpressions": [{"key": "tenant", "operator": "Exists"}]},
                                      "topologyKey": HOST, "mismatchLabelKeys": ["tenant"]}]),
                 {"a": None, "b": None, "c": ANTI},
                 id="mismatchLabelKeys keeps the pod away from other tenants only"),
    pytest.param(NODES, [pod("db", node_name="a", labels={"app": "db"})],
                 with_affinity("in", {"app": "web"}, affinity=[term({"app": "db"})], anti=[term({"app": "db"}, HOST)]),
                 {"a": ANTI, "b": None, "c": AFFINITY},
                 id="Affinity is checked before anti-affinity"),
]


@pytest.mark.parametrize("nodes,pods,p,want", FILTER_CASES)
def test_filter(nodes: list[Obj], pods: list[Obj], p: Obj, want: dict[str, Any]) -> None:
    handle = FakeHandle(nodes, pods, stores={resources.NAMESPACES: NAMESPACES})
    assert verdicts(handle, p) == want


def test_a_pod_without_terms_and_no_existing_anti_affinity_is_skipped() -> None:
    handle = FakeHandle(NODES, [with_affinity("x", {"app": "x"}, on="a", anti=[term({"app": "y"})])])
    _, status = ipa.new({}, handle, {}).pre_filter(CycleState(), pod("in", labels={"app": "web"}),
                                                   handle.snapshot.node_infos)
    assert status is not None and status.code is Code.SKIP


def test_remove_pod_and_add_pod_keep_counts_for_preemption() -> None:
    guard = with_affinity("guard", {"app": "guard"}, on="a", anti=[term({"app": "web"}, HOST)])
    blocker = pod("w", node_name="b", labels={"app": "web"})
    handle = FakeHandle(NODES, [guard, blocker])
    plugin = ipa.new({}, handle, {})
    p = with_affinity("in", {"app": "web"}, anti=[term({"app": "web"}, HOST)])
    state = CycleState()
    plugin.pre_filter(state, p, handle.snapshot.node_infos)
    a, b, c = (handle.snapshot.get(n) for n in "abc")
    assert plugin.filter(state, p, a) is not None and plugin.filter(state, p, b) is not None
    copy = state.clone()
    plugin.remove_pod(copy, p, PodInfo.of(guard), a)
    plugin.remove_pod(copy, p, PodInfo.of(blocker), b)
    assert plugin.filter(copy, p, a) is None and plugin.filter(copy, p, b) is None
    assert plugin.filter(state, p, a) is not None  # the original is untouched
    plugin.add_pod(copy, p, PodInfo.of(pod("w2", node_name="c", labels={"app": "web"})), c)
    assert (plugin.filter(copy, p, c).code, plugin.filter(copy, p, c).message) == ANTI


def scores(handle: FakeHandle, p: Obj, args: Obj | None = None) -> tuple[dict[str, int], dict[str, int]]:
    plugin = ipa.new(args or {}, handle, {})
    state = CycleState()
    nodes = handle.snapshot.node_infos
    assert plugin.pre_score(state, p, nodes) is None
    raw = [NodeScore(info.name, plugin.score(state, p, info)[0]) for info in nodes]
    before = {s.name: s.score for s in raw}
    plugin.normalize_score(state, p, raw)
    return before, {s.name: s.score for s in raw}


def weighted(weight: int, t: Obj) -> Obj:
    return {"weight": weight, "podAffinityTerm": t}


def test_preferred_terms_add_and_subtract_weights_per_topology_pair() -> None:
    # zone z1 +5 (db on a), node b -3 (web on b): a 5, b 2, c 0 -> 100, 40, 0.
    handle = FakeHandle(NODES, [pod("db", node_name="a", labels={"app": "db"}),
                                pod("w", node_name="b", labels={"app": "web"})])
    p = with_affinity("in", {"app": "web"}, preferred=[weighted(5, term({"app": "db"}))],
                      preferred_anti=[weighted(3, term({"app": "web"}, HOST))])
    assert scores(handle, p) == ({"a": 5, "b": 2, "c": 0}, {"a": 100, "b": 40, "c": 0})


def test_existing_pods_terms_count_with_hard_pod_affinity_weight() -> None:
    # c's pod requires app=web in its zone: z2 += 10; a's pod prefers no web on its host: a -= 7.
    # a -7, b 0, c 10: min -7, spread 17 -> 0, int(100 * 7 / 17) = 41, 100.
    handle = FakeHandle(NODES, [with_affinity("x", {"app": "x"}, on="c", affinity=[term({"app": "web"})]),
                                with_affinity("y", {"app": "y"}, on="a",
                                              preferred_anti=[weighted(7, term({"app": "web"}, HOST))])])
    p = pod("in", labels={"app": "web"})
    assert scores(handle, p, {"hardPodAffinityWeight": 10}) == ({"a": -7, "b": 0, "c": 10}, {"a": 0, "b": 41, "c": 100})
    assert scores(handle, p, {"hardPodAffinityWeight": 0})[0] == {"a": -7, "b": 0, "c": 0}


def test_ignore_preferred_terms_of_existing_pods_skips_a_pod_without_its_own() -> None:
    handle = FakeHandle(NODES, [with_affinity("y", {"app": "y"}, on="a",
                                              preferred=[weighted(7, term({"app": "web"}, HOST))])])
    plugin = ipa.new({"ignorePreferredTermsOfExistingPods": True}, handle, {})
    status = plugin.pre_score(CycleState(), pod("in", labels={"app": "web"}), handle.snapshot.node_infos)
    assert status is not None and status.code is Code.SKIP


def test_no_matching_terms_anywhere_skips_score() -> None:
    handle = FakeHandle(NODES, [pod("z", node_name="a", labels={"app": "z"})])
    p = with_affinity("in", {"app": "web"}, preferred=[weighted(5, term({"app": "db"}))])
    status = ipa.new({}, handle, {}).pre_score(CycleState(), p, handle.snapshot.node_infos)
    assert status is not None and status.code is Code.SKIP


def test_args() -> None:
    assert ipa.DEFAULT_ARGS == {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}
    with pytest.raises(ValueError, match=r"not in valid range \[0-100\]"):
        ipa.new({"hardPodAffinityWeight": 101}, FakeHandle(), {})


ON_NODE = {"node_name": "a"}
HINT_CASES = [
    pytest.param(None, pod("db", labels={"app": "db"}, **ON_NODE), QueueingHint.QUEUE,
                 id="An assigned pod matching the required affinity queues"),
    pytest.param(None, pod("db", labels={"app": "db"}), QueueingHint.SKIP, id="An unscheduled pod skips"),
    pytest.param(None, pod("x", labels={"app": "x"}, **ON_NODE), QueueingHint.SKIP, id="An unrelated pod added skips"),
    pytest.param(pod("w", labels={"app": "web"}, **ON_NODE), None, QueueingHint.QUEUE,
                 id="Deleting a pod the anti-affinity matched queues"),
    pytest.param(with_affinity("g", {"app": "g"}, anti=[term({"app": "in"})], **{"on": "a"}), None, QueueingHint.QUEUE,
                 id="Deleting a pod whose anti-affinity matched the incoming pod queues"),
    pytest.param(pod("x", labels={"app": "x"}, **ON_NODE), pod("x", labels={"app": "db"}, **ON_NODE), QueueingHint.QUEUE,
                 id="A label change that makes a pod match the affinity queues"),
    pytest.param(pod("x", labels={"app": "x"}, **ON_NODE), pod("x", labels={"app": "x", "a": "b"}, **ON_NODE),
                 QueueingHint.SKIP, id="A label change that matters to no term skips"),
]


@pytest.mark.parametrize("old,new,want", HINT_CASES)
def test_pod_hint(old: Obj | None, new: Obj | None, want: QueueingHint) -> None:
    plugin = ipa.new({}, FakeHandle(), {})
    p = with_affinity("in", {"app": "in"}, affinity=[term({"app": "db"})], anti=[term({"app": "web"}, HOST)])
    assert plugin.events_to_register()[0].hint(p, old, new) is want


def bare(name: str) -> Obj:
    n = node(name, labels={"x": "y"})
    del n["metadata"]["labels"][HOST]
    return n


@pytest.mark.parametrize("old,new,want", [
    pytest.param(None, zoned("n", "z1"), QueueingHint.QUEUE, id="A node with an affinity term's topology key queues"),
    pytest.param(bare("n"), node("n"), QueueingHint.QUEUE, id="A node gaining an anti-affinity term's key queues"),
    pytest.param(None, bare("n"), QueueingHint.SKIP, id="A node without any of the keys skips"),
])
def test_node_hint(old: Obj | None, new: Obj | None, want: QueueingHint) -> None:
    plugin = ipa.new({}, FakeHandle(), {})
    p = with_affinity("in", {"app": "in"}, affinity=[term({"app": "db"})], anti=[term({"app": "web"}, HOST)])
    assert plugin.events_to_register()[1].hint(p, old, new) is want
