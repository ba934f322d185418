"""PodTopologySpread: PreFilter counts and Filter verdicts, the preemption extensions, soft-constraint
scores worked out from upstream's formulas (count * ln(domains + 2) + maxSkew - 1, then
100 * (max + min - s) / max), the system default constraints, and the queueing hints."""

from __future__ import annotations

from typing import Any

import pytest

from client import resources
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import QueueingHint
from scheduler.framework.interfaces import NodeScore
from scheduler.framework.node_info import PodInfo
from scheduler.framework.status import Code
from scheduler.plugins import pod_topology_spread as pts
from tests.scheduler.fakes import FakeHandle, node, pod

Obj = dict[str, Any]
NOT_MATCH = pts.ERR_CONSTRAINTS_NOT_MATCH
MISSING = pts.ERR_NODE_LABEL_NOT_MATCH


def zoned(name: str, zone: str | None, **kw: Any) -> Obj:
    labels = dict(kw.pop("labels", {}) or {})
    if zone is not None:
        labels["topology.kubernetes.io/zone"] = zone
    return node(name, labels=labels, **kw)


def web(name: str, on: str = "", labels: dict[str, str] | None = None, **kw: Any) -> Obj:
    return pod(name, node_name=on, labels={"app": "web", **(labels or {})}, **kw)


def spread(key: str = "topology.kubernetes.io/zone", max_skew: int = 1, when: str = "DoNotSchedule",
           selector: Obj | None = None, **extra: Any) -> Obj:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "web"}} if selector is None else selector, **extra}


def incoming(*constraints: Obj, labels: dict[str, str] | None = None, spec: Obj | None = None) -> Obj:
    return pod("incoming", labels={"app": "web", **(labels or {})},
               spec={"topologySpreadConstraints": list(constraints), **(spec or {})})


def verdicts(plugin: pts.PodTopologySpread, handle: FakeHandle, p: Obj,
             state: CycleState | None = None) -> dict[str, Any]:
    state = state or CycleState()
    _, status = plugin.pre_filter(state, p, handle.snapshot.node_infos)
    assert status is None, status
    out: dict[str, Any] = {}
    for info in handle.snapshot.node_infos:
        st = plugin.filter(state, p, info)
        out[info.name] = None if st is None else (st.code, st.message)
    return out


FOUR_NODES = [zoned("a", "z1"), zoned("b", "z1"), zoned("c", "z2"), zoned("d", "z2")]
UNSCHED = (Code.UNSCHEDULABLE, NOT_MATCH)

FILTER_CASES = [
    pytest.param(FOUR_NODES, [web("p1", "a"), web("p2", "a"), web("p3", "c")], incoming(spread()),
                 {"a": UNSCHED, "b": UNSCHED, "c": None, "d": None},
                 id="A zone holding one more matching pod than the other is closed at maxSkew 1"),
    pytest.param(FOUR_NODES, [web("p1", "a"), web("p2", "c")], incoming(spread()),
                 {"a": None, "b": None, "c": None, "d": None},
                 id="Evenly spread zones leave every node open"),
    pytest.param(FOUR_NODES, [web("p1", "a"), web("p2", "a"), web("p3", "c")], incoming(spread(max_skew=2)),
                 {"a": None, "b": None, "c": None, "d": None},
                 id="A skew of two fits under maxSkew 2"),
    pytest.param([zoned("a", "z1"), zoned("b", None)], [], incoming(spread()),
                 {"a": None, "b": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MISSING)},
                 id="A node without the topology key is unresolvable with the missing-label text"),
    pytest.param(FOUR_NODES, [web("p1", "a"), web("p2", "a", namespace="other"),
                              web("p3", "a", labels={"app": "db"})], incoming(spread()),
                 {"a": UNSCHED, "b": UNSCHED, "c": None, "d": None},
                 id="Pods of other namespaces and pods the selector does not match are not counted"),
    pytest.param([node("a"), node("b")], [web("p1", "a"), web("p2", "b")],
                 incoming(spread("kubernetes.io/hostname", minDomains=3)),
                 {"a": UNSCHED, "b": UNSCHED},
                 id="Fewer domains than minDomains make the global minimum zero"),
    pytest.param([node("a"), node("b"), node("c")], [web("p1", "a"), web("p2", "b")],
                 incoming(spread("kubernetes.io/hostname", minDomains=3)),
                 {"a": UNSCHED, "b": UNSCHED, "c": None},
                 id="With minDomains domains present the real minimum is used"),
    pytest.param([zoned("a", "z1", labels={"disk": "ssd"}), zoned("b", "z2")], [web("p1", "a"), web("p2", "a")],
                 incoming(spread(), spec={"nodeSelector": {"disk": "ssd"}}),
                 {"a": None, "b": None},
                 id="nodeAffinityPolicy Honor leaves out the domains the pod cannot reach"),
    pytest.param([zoned("a", "z1", labels={"disk": "ssd"}), zoned("b", "z2")], [web("p1", "a"), web("p2", "a")],
                 incoming(spread(nodeAffinityPolicy="Ignore"), spec={"nodeSelector": {"disk": "ssd"}}),
                 {"a": UNSCHED, "b": None},
                 id="nodeAffinityPolicy Ignore counts the unreachable empty zone as the minimum"),
    pytest.param([zoned("a", "z1"), zoned("b", "z2", taints=[{"key": "k", "effect": "NoSchedule"}])],
                 [web("p1", "a")], incoming(spread(nodeTaintsPolicy="Honor")),
                 {"a": None, "b": None},
                 id="nodeTaintsPolicy Honor leaves out a tainted node's domain"),
    pytest.param([zoned("a", "z1"), zoned("b", "z2", taints=[{"key": "k", "effect": "NoSchedule"}])],
                 [web("p1", "a")], incoming(spread()),
                 {"a": UNSCHED, "b": None},
                 id="nodeTaintsPolicy defaults to Ignore and counts the tainted domain"),
    pytest.param(FOUR_NODES, [web("p1", "a", labels={"rev": "1"}), web("p2", "a", labels={"rev": "1"})],
                 incoming(spread(matchLabelKeys=["rev"]), labels={"rev": "2"}),
                 {"a": None, "b": None, "c": None, "d": None},
                 id="matchLabelKeys counts only the pods with the incoming pod's values"),
    pytest.param(FOUR_NODES, [web("p1", "a", labels={"rev": "2"}), web("p2", "b", labels={"rev": "2"})],
                 incoming(spread(matchLabelKeys=["rev"]), labels={"rev": "2"}),
                 {"a": UNSCHED, "b": UNSCHED, "c": None, "d": None},
                 id="matchLabelKeys still counts the pods of the same revision"),
    pytest.param(FOUR_NODES, [web("p1", "a"), web("p2", "b")],
                 incoming(spread(), labels={"app": "other"}),
                 {"a": UNSCHED, "b": UNSCHED, "c": None, "d": None},
                 id="A pod outside its own selector adds no self-match but the skew still counts"),
]


@pytest.mark.parametrize("nodes,pods,p,want", FILTER_CASES)
def test_filter(nodes: list[Obj], pods: list[Obj], p: Obj, want: dict[str, Any]) -> None:
    handle = FakeHandle(nodes, pods)
    assert verdicts(pts.new({}, handle, {}), handle, p) == want


def test_terminating_pods_are_not_counted() -> None:
    gone = web("p1", "a")
    gone["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    handle = FakeHandle(FOUR_NODES, [gone, web("p2", "a")])
    plugin = pts.new({}, handle, {})
    assert verdicts(plugin, handle, incoming(spread()))["a"] == UNSCHED  # 1 + 1 - 0
    handle = FakeHandle(FOUR_NODES, [gone])
    assert verdicts(pts.new({}, handle, {}), handle, incoming(spread()))["a"] is None


def test_a_pod_without_constraints_or_workload_is_skipped() -> None:
    handle = FakeHandle(FOUR_NODES)
    _, status = pts.new({}, handle, {}).pre_filter(CycleState(), web("p"), handle.snapshot.node_infos)
    assert status is not None and status.code is Code.SKIP


def test_soft_constraints_alone_skip_pre_filter() -> None:
    handle = FakeHandle(FOUR_NODES)
    _, status = pts.new({}, handle, {}).pre_filter(CycleState(), incoming(spread(when="ScheduleAnyway")),
                                                   handle.snapshot.node_infos)
    assert status is not None and status.code is Code.SKIP


def test_remove_pod_and_add_pod_move_the_counts_for_preemption() -> None:
    victim = web("p2", "a")
    handle = FakeHandle(FOUR_NODES, [web("p1", "a"), victim, web("p3", "c")])
    plugin = pts.new({}, handle, {})
    p = incoming(spread())
    state = CycleState()
    plugin.pre_filter(state, p, handle.snapshot.node_infos)
    a = handle.snapshot.get("a")
    assert plugin.filter(state, p, a) is not None
    copy = state.clone()
    assert plugin.remove_pod(copy, p, PodInfo.of(victim), a) is None
    assert plugin.filter(copy, p, a) is None  # 1 + 1 - 1
    assert plugin.filter(state, p, a) is not None  # the original state is untouched
    assert plugin.add_pod(copy, p, PodInfo.of(web("p4", "c")), handle.snapshot.get("c")) is None
    assert plugin.filter(copy, p, handle.snapshot.get("c")) is not None  # z2 now 2, z1 1
    # A pod of another namespace changes nothing.
    assert plugin.add_pod(copy, p, PodInfo.of(web("x", "a", namespace="other")), a) is None
    assert plugin.filter(copy, p, a) is None


def scores(plugin: pts.PodTopologySpread, handle: FakeHandle, p: Obj) -> tuple[dict[str, int], dict[str, int]]:
    state = CycleState()
    nodes = handle.snapshot.node_infos
    assert plugin.pre_score(state, p, nodes) is None
    raw = []
    for info in nodes:
        value, status = plugin.score(state, p, info)
        assert status is None
        raw.append(NodeScore(info.name, value))
    before = {s.name: s.score for s in raw}
    assert plugin.normalize_score(state, p, raw) is None
    return before, {s.name: s.score for s in raw}


SCORE_CASES = [
    # ln(3 + 2) = 1.609: a 2 pods -> 3.22 -> 3, b 1 -> 1.61 -> 2, c 0 -> 0; max 3, min 0.
    pytest.param([node("a"), node("b"), node("c")], [web("1", "a"), web("2", "a"), web("3", "b")],
                 incoming(spread("kubernetes.io/hostname", when="ScheduleAnyway")),
                 {"a": 3, "b": 2, "c": 0}, {"a": 0, "b": 33, "c": 100},
                 id="Hostname spreading scores each node by its own matching pods"),
    # Two zones: ln(4) = 1.386; z1 holds 2 -> 2.77 + 1 = 3.77 -> 4, z2 holds 1 -> 2.39 -> 2.
    pytest.param([zoned("a", "z1"), zoned("b", "z1"), zoned("c", "z2")], [web("1", "a"), web("2", "b"), web("3", "c")],
                 incoming(spread(max_skew=2, when="ScheduleAnyway")),
                 {"a": 4, "b": 4, "c": 2}, {"a": 50, "b": 50, "c": 100},
                 id="Zone spreading gives every node of a zone the zone's count and adds maxSkew minus one"),
    pytest.param([zoned("a", "z1"), zoned("b", "z2"), zoned("c", None)], [web("1", "a")],
                 incoming(spread(when="ScheduleAnyway")),
                 {"a": 1, "b": 0, "c": 0}, {"a": 0, "b": 100, "c": 0},
                 id="A node without the key of the pod's own constraint is ignored and scores zero"),
    pytest.param([node("a"), node("b")], [], incoming(spread("kubernetes.io/hostname", when="ScheduleAnyway")),
                 {"a": 0, "b": 0}, {"a": 100, "b": 100},
                 id="No matching pods anywhere gives every node the maximum"),
]


@pytest.mark.parametrize("nodes,pods,p,raw,final", SCORE_CASES)
def test_score(nodes: list[Obj], pods: list[Obj], p: Obj, raw: dict[str, int], final: dict[str, int]) -> None:
    handle = FakeHandle(nodes, pods)
    assert scores(pts.new({}, handle, {}), handle, p) == (raw, final)


def replica_set() -> Obj:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": "default", "uid": "rs"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}}}


def owned(name: str, labels: dict[str, str] | None = None) -> Obj:
    p = web(name, labels=labels)
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "rs",
                                         "controller": True}]
    return p


def test_system_defaults_spread_a_replica_sets_pods() -> None:
    # hostname: ln(3 + 2) = 1.609, maxSkew 3; zone: domains z1 and "" (c has no zone label, which
    # the system defaults tolerate): ln(2 + 2) = 1.386, maxSkew 5.
    # a: 1.609 + 2 + 1.386 + 4 = 8.996 -> 9; b: 2 + 5.386 = 7.386 -> 7; c: 2 (hostname only).
    nodes = [zoned("a", "z1"), zoned("b", "z1"), zoned("c", None)]
    handle = FakeHandle(nodes, [web("1", "a")], stores={resources.REPLICASETS: [replica_set()]})
    plugin = pts.new({}, handle, {})
    p = owned("incoming")
    _, status = plugin.pre_filter(CycleState(), p, handle.snapshot.node_infos)
    assert status is not None and status.code is Code.SKIP  # the defaults are all ScheduleAnyway
    assert scores(plugin, handle, p) == ({"a": 9, "b": 7, "c": 2}, {"a": 22, "b": 44, "c": 100})


def test_system_defaults_need_a_workload_selecting_the_pod() -> None:
    handle = FakeHandle([node("a")], [web("1", "a")], stores={resources.REPLICASETS: [replica_set()]})
    status = pts.new({}, handle, {}).pre_score(CycleState(), web("x"), handle.snapshot.node_infos)
    assert status is not None and status.code is Code.SKIP  # matching labels but no controller, no Service


def test_a_services_selector_is_a_default_selector() -> None:
    # One node without a zone label, so only hostname counts: ln(1 + 2) * 1 pod + 2 = 3.10 -> 3.
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}}}
    handle = FakeHandle([node("a")], [web("1", "a")], stores={resources.SERVICES: [service]})
    assert scores(pts.new({}, handle, {}), handle, web("x"))[0] == {"a": 3}


def test_list_defaulting_uses_the_configured_constraints() -> None:
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}]}
    handle = FakeHandle(FOUR_NODES, [web("1", "a")], stores={resources.REPLICASETS: [replica_set()]})
    got = verdicts(pts.new(args, handle, {}), handle, owned("incoming"))
    assert got == {"a": UNSCHED, "b": UNSCHED, "c": None, "d": None}


@pytest.mark.parametrize("args,message", [
    pytest.param({"defaultingType": "Sometimes"}, 'Unsupported value: "Sometimes"', id="An unknown defaultingType is refused"),
    pytest.param({"defaultingType": "List", "defaultConstraints": [spread()]},
                 r"defaultConstraints\[0\].labelSelector: Forbidden: constraint must not define a selector",
                 id="A default constraint with its own selector is refused"),
    pytest.param({"defaultingType": "System", "defaultConstraints": [spread(selector={})]},
                 'when .defaultingType is "System"', id="System defaulting refuses listed constraints"),
    pytest.param({"defaultConstraints": [{"maxSkew": 0, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}]},
                 r"defaultConstraints\[0\].maxSkew: Invalid value: 0: must be greater than zero",
                 id="maxSkew must be positive"),
    pytest.param({"defaultConstraints": [{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "Maybe"}]},
                 r'whenUnsatisfiable: Unsupported value: "Maybe"', id="whenUnsatisfiable must be one of the two"),
    pytest.param({"defaultConstraints": [{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"},
                                         {"maxSkew": 2, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}]},
                 r"defaultConstraints\[1\]: Duplicate value", id="A key and action pair may appear once"),
])
def test_bad_args(args: Obj, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pts.new(args, FakeHandle(), {})


def test_default_args_are_upstreams() -> None:
    assert pts.DEFAULT_ARGS == {"defaultConstraints": [], "defaultingType": "System"}
    assert pts.defaulted_args(None) == pts.DEFAULT_ARGS
    listed = [{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}]
    assert pts.defaulted_args({"defaultConstraints": listed}) == {"defaultConstraints": listed, "defaultingType": "List"}


def assigned(name: str, labels: dict[str, str], namespace: str = "default") -> Obj:
    return pod(name, node_name="a", labels=labels, namespace=namespace)


HINT_CASES = [
    pytest.param(None, assigned("n", {"app": "web"}), QueueingHint.QUEUE, id="An assigned matching pod added queues"),
    pytest.param(None, assigned("n", {"app": "db"}), QueueingHint.SKIP, id="An assigned pod the selector ignores skips"),
    pytest.param(None, pod("n", labels={"app": "web"}), QueueingHint.SKIP, id="An unscheduled pod skips"),
    pytest.param(None, assigned("n", {"app": "web"}, "other"), QueueingHint.SKIP, id="A pod of another namespace skips"),
    pytest.param(assigned("n", {"app": "web"}), None, QueueingHint.QUEUE, id="A matching pod deleted queues"),
    pytest.param(assigned("n", {"app": "web"}), assigned("n", {"app": "db"}), QueueingHint.QUEUE,
                 id="A label change that leaves the selector queues"),
    pytest.param(assigned("n", {"app": "web"}), assigned("n", {"app": "web", "x": "y"}), QueueingHint.SKIP,
                 id="A label change the selector does not see skips"),
]


@pytest.mark.parametrize("old,new,want", HINT_CASES)
def test_pod_hint(old: Obj | None, new: Obj | None, want: QueueingHint) -> None:
    plugin = pts.new({}, FakeHandle(), {})
    pod_event = plugin.events_to_register()[0]
    assert pod_event.hint(incoming(spread()), old, new) is want


@pytest.mark.parametrize("old,new,want", [
    pytest.param(None, zoned("n", "z1"), QueueingHint.QUEUE, id="A node with the topology key added queues"),
    pytest.param(None, zoned("n", None), QueueingHint.SKIP, id="A node without the key added skips"),
    pytest.param(zoned("n", "z1"), zoned("n", "z2"), QueueingHint.QUEUE, id="A node moved to another zone queues"),
    pytest.param(zoned("n", "z1"), zoned("n", "z1", labels={"x": "y"}), QueueingHint.SKIP,
                 id="An unrelated label change skips"),
    pytest.param(zoned("n", "z1"), zoned("n", "z1", taints=[{"key": "k", "effect": "NoSchedule"}]), QueueingHint.QUEUE,
                 id="A taint change on a matching node queues"),
    pytest.param(zoned("n", None), None, QueueingHint.SKIP, id="A node without the key deleted skips"),
])
def test_node_hint(old: Obj | None, new: Obj | None, want: QueueingHint) -> None:
    plugin = pts.new({}, FakeHandle(), {})
    assert plugin.events_to_register()[1].hint(incoming(spread()), old, new) is want


def test_new_tolerations_of_the_pod_itself_queue_when_a_constraint_honors_taints() -> None:
    plugin = pts.new({}, FakeHandle(), {})
    hint = plugin.events_to_register()[0].hint
    before = incoming(spread(nodeTaintsPolicy="Honor"), spec={"nodeName": ""})
    after = incoming(spread(nodeTaintsPolicy="Honor"), spec={"tolerations": [{"key": "k", "operator": "Exists"}]})
    assert hint(before, before, after) is QueueingHint.QUEUE
    ignoring = incoming(spread())
    assert hint(ignoring, ignoring, {**ignoring, "spec": {**ignoring["spec"], "tolerations": [{"operator": "Exists"}]}}) \
        is QueueingHint.SKIP
