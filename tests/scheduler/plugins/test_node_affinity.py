"""NodeAffinity: nodeSelector, required and preferred terms, addedAffinity, PreFilter narrowing, hints."""

from __future__ import annotations

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, QueueingHint
from scheduler.framework.interfaces import NodeScore
from scheduler.framework.status import Code
from scheduler.plugins import node_affinity
from tests.scheduler import fakes

POD_REASON = "node(s) didn't match Pod's node affinity/selector"


def expr(key: str, operator: str, *values: str) -> dict:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


def required(*terms: dict) -> dict:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}}


FILTER_CASES = [
    ("A nodeSelector matching the labels fits", {"nodeSelector": {"zone": "a"}}, {"zone": "a"}, None),
    ("A nodeSelector with a missing label is rejected", {"nodeSelector": {"zone": "a"}}, {}, POD_REASON),
    ("Every nodeSelector pair must match", {"nodeSelector": {"zone": "a", "disk": "ssd"}}, {"zone": "a"}, POD_REASON),
    ("In matches a listed value", required({"matchExpressions": [expr("zone", "In", "a", "b")]}), {"zone": "b"}, None),
    ("In rejects an unlisted value", required({"matchExpressions": [expr("zone", "In", "a")]}), {"zone": "c"}, POD_REASON),
    ("NotIn matches a node without the label", required({"matchExpressions": [expr("zone", "NotIn", "a")]}), {}, None),
    ("NotIn rejects a listed value", required({"matchExpressions": [expr("zone", "NotIn", "a")]}), {"zone": "a"},
     POD_REASON),
    ("Exists needs the key", required({"matchExpressions": [expr("gpu", "Exists")]}), {"gpu": ""}, None),
    ("DoesNotExist rejects a node with the key", required({"matchExpressions": [expr("gpu", "DoesNotExist")]}),
     {"gpu": "1"}, POD_REASON),
    ("Gt compares integers", required({"matchExpressions": [expr("cores", "Gt", "8")]}), {"cores": "16"}, None),
    ("Gt is false for an equal value", required({"matchExpressions": [expr("cores", "Gt", "8")]}), {"cores": "8"},
     POD_REASON),
    ("Lt on a label that is not an integer does not match", required({"matchExpressions": [expr("cores", "Lt", "8")]}),
     {"cores": "many"}, POD_REASON),
    ("Expressions in one term are ANDed", required({"matchExpressions": [expr("zone", "In", "a"), expr("gpu", "Exists")]}),
     {"zone": "a"}, POD_REASON),
    ("Terms are ORed", required({"matchExpressions": [expr("zone", "In", "x")]}, {"matchExpressions": [expr("zone", "In", "a")]}),
     {"zone": "a"}, None),
    ("An empty term matches no node", required({}), {"zone": "a"}, POD_REASON),
    ("A term that does not parse is ignored and the others still count",
     required({"matchExpressions": [expr("cores", "Gt", "1", "2")]}, {"matchExpressions": [expr("zone", "Exists")]}),
     {"zone": "a", "cores": "4"}, None),
    ("matchFields on metadata.name matches the node's name",
     required({"matchFields": [expr("metadata.name", "In", "n1")]}), {}, None),
    ("matchFields NotIn the node's name rejects it",
     required({"matchFields": [expr("metadata.name", "NotIn", "n1")]}), {}, POD_REASON),
    ("The nodeSelector and the required terms must both match",
     {"nodeSelector": {"disk": "ssd"}, **required({"matchExpressions": [expr("zone", "In", "a")]})}, {"zone": "a"},
     POD_REASON),
]


@pytest.mark.parametrize("case, spec, labels, reason", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(case: str, spec: dict, labels: dict, reason: str | None) -> None:
    handle = fakes.FakeHandle([fakes.node("n1", labels=labels)])
    plugin = node_affinity.new({}, handle, {})
    pod, state = fakes.pod("p", spec=spec), CycleState()
    _, pre = plugin.pre_filter(state, pod, handle.snapshot.node_infos)
    assert pre is None or pre.code is not Code.SKIP
    status = plugin.filter(state, pod, handle.snapshot.get("n1"))
    if reason is None:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.reasons == [reason]


def test_pre_filter_skips_a_pod_without_any_node_constraint() -> None:
    _, status = node_affinity.new({}, fakes.FakeHandle(), {}).pre_filter(CycleState(), fakes.pod("p"), [])
    assert status is not None and status.code is Code.SKIP


NARROWING_CASES = [
    ("One term pinning names narrows to them",
     [{"matchFields": [expr("metadata.name", "In", "n1")]}], {"n1"}, None),
    ("Names from ORed terms are united",
     [{"matchFields": [expr("metadata.name", "In", "n1")]}, {"matchFields": [expr("metadata.name", "In", "n2")]}],
     {"n1", "n2"}, None),
    ("Names ANDed in one term are intersected",
     [{"matchFields": [expr("metadata.name", "In", "n1"), expr("metadata.name", "In", "n2")]}], None,
     "pod affinity terms conflict"),
    ("A term without a name pin leaves every node in play",
     [{"matchFields": [expr("metadata.name", "In", "n1")]}, {"matchExpressions": [expr("zone", "Exists")]}], None, None),
]


@pytest.mark.parametrize("case, terms, names, reason", NARROWING_CASES, ids=[c[0] for c in NARROWING_CASES])
def test_pre_filter_narrows_to_pinned_node_names(case: str, terms: list, names: set | None, reason: str | None) -> None:
    plugin = node_affinity.new({}, fakes.FakeHandle(), {})
    result, status = plugin.pre_filter(CycleState(), fakes.pod("p", spec=required(*terms)), [])
    if reason is not None:
        assert result is None and status is not None
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.reasons == [reason]
    else:
        assert status is None
        assert (result.node_names if result else None) == names


ADDED = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [expr("pool", "In", "batch")]}]}}}


def test_added_affinity_rejects_nodes_outside_it_with_its_own_reason() -> None:
    handle = fakes.FakeHandle([fakes.node("n1", labels={"pool": "web"}), fakes.node("n2", labels={"pool": "batch"})])
    plugin = node_affinity.new(ADDED, handle, {})
    pod, state = fakes.pod("p"), CycleState()
    _, pre = plugin.pre_filter(state, pod, handle.snapshot.node_infos)
    assert pre is None  # the added affinity alone is work to do
    status = plugin.filter(state, pod, handle.snapshot.get("n1"))
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ["node(s) didn't match scheduler-enforced node affinity"]
    assert plugin.filter(state, pod, handle.snapshot.get("n2")) is None


def test_an_added_affinity_that_does_not_parse_is_a_config_error() -> None:
    bad = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expr("x", "Gt", "a")]}]}}}
    with pytest.raises(ValueError, match="parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"):
        node_affinity.new(bad, fakes.FakeHandle(), {})


def preferred(*weighted: tuple[int, dict]) -> dict:
    return {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "preference": t} for w, t in weighted]}}}


SCORE_CASES = [
    # Raw score = sum of matched weights; DefaultNormalizeScore(100, reverse=False): 100*raw/max.
    ("Matched weights are summed and scaled to the best node",
     {}, preferred((2, {"matchExpressions": [expr("zone", "In", "a")]}), (5, {"matchExpressions": [expr("disk", "Exists")]})),
     {"n1": {"zone": "a"}, "n2": {"disk": "ssd"}, "n3": {"zone": "a", "disk": "ssd"}},
     {"n1": 28, "n2": 71, "n3": 100}),
    ("The added preferred terms count with the pod's",
     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 3, "preference": {"matchExpressions": [expr("pool", "In", "batch")]}}]}},
     preferred((1, {"matchExpressions": [expr("zone", "In", "a")]})),
     {"n1": {"zone": "a"}, "n2": {"pool": "batch"}, "n3": {}}, {"n1": 33, "n2": 100, "n3": 0}),
    ("When nothing matches every node scores 0", {}, preferred((4, {"matchExpressions": [expr("zone", "In", "z")]})),
     {"n1": {}, "n2": {"zone": "a"}}, {"n1": 0, "n2": 0}),
]


@pytest.mark.parametrize("case, args, spec, labels, want", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_score(case: str, args: dict, spec: dict, labels: dict, want: dict) -> None:
    handle = fakes.FakeHandle([fakes.node(n, labels=l) for n, l in labels.items()])
    plugin = node_affinity.new(args, handle, {})
    pod, state = fakes.pod("p", spec=spec), CycleState()
    assert plugin.pre_score(state, pod, handle.snapshot.node_infos) is None
    scores = [NodeScore(i.name, plugin.score(state, pod, i)[0]) for i in handle.snapshot]
    plugin.normalize_score(state, pod, scores)
    assert {s.name: s.score for s in scores} == want


def test_pre_score_skips_a_pod_without_preferred_terms() -> None:
    status = node_affinity.new({}, fakes.FakeHandle(), {}).pre_score(CycleState(), fakes.pod("p"), [])
    assert status is not None and status.code is Code.SKIP


HINT_CASES = [
    ("Labelling a node so it matches queues the pod", {}, {"zone": "a"}, QueueingHint.QUEUE),
    ("A relabel that still does not match skips the pod", {}, {"zone": "b"}, QueueingHint.SKIP),
    ("An update of a node that matched already skips the pod", {"zone": "a"}, {"zone": "a", "x": "y"}, QueueingHint.SKIP),
    ("Adding a matching node queues the pod", None, {"zone": "a"}, QueueingHint.QUEUE),
    ("Adding a node that does not match skips the pod", None, {}, QueueingHint.SKIP),
]


@pytest.mark.parametrize("case, old, new, hint", HINT_CASES, ids=[c[0] for c in HINT_CASES])
def test_node_hint(case: str, old: dict | None, new: dict, hint: QueueingHint) -> None:
    [event] = node_affinity.new({}, fakes.FakeHandle(), {}).events_to_register()
    assert event.event.action == ActionType.ADD | ActionType.UPDATE_NODE_LABEL
    pod = fakes.pod("p", spec={"nodeSelector": {"zone": "a"}})
    before = None if old is None else fakes.node("n1", labels=old)
    assert event.hint(pod, before, fakes.node("n1", labels=new)) is hint


def test_the_hint_skips_nodes_outside_the_added_affinity() -> None:
    [event] = node_affinity.new(ADDED, fakes.FakeHandle(), {}).events_to_register()
    assert event.hint(fakes.pod("p"), None, fakes.node("n1", labels={"pool": "web"})) is QueueingHint.SKIP
    assert event.hint(fakes.pod("p"), None, fakes.node("n1", labels={"pool": "batch"})) is QueueingHint.QUEUE
