"""TaintToleration: Filter on NoSchedule/NoExecute, Score on PreferNoSchedule, and the hints."""

from __future__ import annotations

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, QueueingHint, Resource
from scheduler.framework.interfaces import NodeScore
from scheduler.framework.status import Code
from scheduler.plugins import taint_toleration
from tests.scheduler import fakes


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict:
    return {"key": key, "value": value, "effect": effect}


FILTER_CASES = [
    ("A node without taints takes a pod without tolerations", [], [], None),
    ("An untolerated NoSchedule taint is named in the reason", [taint("dedicated", "gpu")], [],
     "node(s) had untolerated taint(s)"),
    ("An untolerated taint with no value shows an empty value", [taint("node-role.kubernetes.io/control-plane")], [],
     "node(s) had untolerated taint(s)"),
    ("An untolerated NoExecute taint rejects too", [taint("broken", "yes", "NoExecute")], [],
     "node(s) had untolerated taint(s)"),
    ("A PreferNoSchedule taint never rejects", [taint("soft", "x", "PreferNoSchedule")], [], None),
    ("An Equal toleration with the same value tolerates the taint", [taint("dedicated", "gpu")],
     [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}], None),
    ("An Equal toleration with another value does not", [taint("dedicated", "gpu")],
     [{"key": "dedicated", "value": "cpu"}], "node(s) had untolerated taint(s)"),
    ("An Exists toleration with no effect tolerates every effect of the key", [taint("dedicated", "gpu", "NoExecute")],
     [{"key": "dedicated", "operator": "Exists"}], None),
    ("A toleration for another effect does not tolerate the taint", [taint("dedicated", "gpu")],
     [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}],
     "node(s) had untolerated taint(s)"),
    ("The first untolerated taint is the one reported", [taint("a", "1"), taint("b", "2")],
     [{"key": "a", "operator": "Exists"}], "node(s) had untolerated taint(s)"),
]


@pytest.mark.parametrize("case, taints, tolerations, reason", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(case: str, taints: list, tolerations: list, reason: str | None) -> None:
    handle = fakes.FakeHandle([fakes.node("n1", taints=taints)])
    plugin = taint_toleration.new({}, handle, {})
    status = plugin.filter(CycleState(), fakes.pod("p", spec={"tolerations": tolerations}), handle.snapshot.get("n1"))
    if reason is None:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.reasons == [reason]


SCORE_CASES = [
    # Upstream's DefaultNormalizeScore(100, reverse=True): 100 - 100*count/max.
    ("The more intolerable PreferNoSchedule taints, the lower the score",
     [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}],
     {"n1": [], "n2": [taint("foo", "bar", "PreferNoSchedule"), taint("cpu", "arm", "PreferNoSchedule")],
      "n3": [taint("cpu", "arm", "PreferNoSchedule"), taint("disk", "hdd", "PreferNoSchedule")]},
     {"n1": 100, "n2": 50, "n3": 0}),
    ("Only PreferNoSchedule taints are counted",
     [], {"n1": [taint("hard", "x", "NoSchedule")], "n2": [taint("soft", "x", "PreferNoSchedule")]},
     {"n1": 100, "n2": 0}),
    ("A NoSchedule toleration does not tolerate a PreferNoSchedule taint",
     [{"key": "soft", "operator": "Exists", "effect": "NoSchedule"}],
     {"n1": [taint("soft", "x", "PreferNoSchedule")], "n2": []}, {"n1": 0, "n2": 100}),
    ("When no node has an intolerable taint every node scores 100",
     [{"operator": "Exists"}], {"n1": [taint("soft", "x", "PreferNoSchedule")], "n2": []}, {"n1": 100, "n2": 100}),
]


@pytest.mark.parametrize("case, tolerations, taints, want", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_score(case: str, tolerations: list, taints: dict, want: dict) -> None:
    handle = fakes.FakeHandle([fakes.node(n, taints=t) for n, t in taints.items()])
    plugin = taint_toleration.new({}, handle, {})
    pod, state = fakes.pod("p", spec={"tolerations": tolerations}), CycleState()
    assert plugin.pre_score(state, pod, handle.snapshot.node_infos) is None
    scores = []
    for info in handle.snapshot:
        value, status = plugin.score(state, pod, info)
        assert status is None
        scores.append(NodeScore(info.name, value))
    assert plugin.normalize_score(state, pod, scores) is None
    assert {s.name: s.score for s in scores} == want


NODE_HINT_CASES = [
    ("Removing the untolerated taint queues the pod", [taint("a", "1")], [], QueueingHint.QUEUE),
    ("Changing to another untolerated taint skips the pod", [taint("a", "1")], [taint("b", "1")], QueueingHint.SKIP),
    ("Adding a taint to a node that took the pod skips it", [], [taint("a", "1")], QueueingHint.SKIP),
    ("Adding an untainted node queues the pod", None, [], QueueingHint.QUEUE),
    ("Adding a node with an untolerated taint skips the pod", None, [taint("a", "1")], QueueingHint.SKIP),
    ("A PreferNoSchedule taint does not stop the pod from being queued", None,
     [taint("a", "1", "PreferNoSchedule")], QueueingHint.QUEUE),
]


@pytest.mark.parametrize("case, old, new, hint", NODE_HINT_CASES, ids=[c[0] for c in NODE_HINT_CASES])
def test_node_hint(case: str, old: list | None, new: list, hint: QueueingHint) -> None:
    node_event, _ = taint_toleration.new({}, fakes.FakeHandle(), {}).events_to_register()
    assert node_event.event.resource is Resource.NODE
    assert node_event.event.action == ActionType.ADD | ActionType.UPDATE_NODE_TAINT
    before = None if old is None else fakes.node("n1", taints=old)
    assert node_event.hint(fakes.pod("p"), before, fakes.node("n1", taints=new)) is hint


def test_a_change_to_the_pods_own_tolerations_queues_it() -> None:
    _, pod_event = taint_toleration.new({}, fakes.FakeHandle(), {}).events_to_register()
    assert pod_event.event.resource is Resource.UNSCHEDULED_POD
    pod = fakes.pod("p")
    tolerating = fakes.pod("p", spec={"tolerations": [{"key": "a", "operator": "Exists"}]})
    assert pod_event.hint(pod, pod, tolerating) is QueueingHint.QUEUE
    assert pod_event.hint(pod, fakes.pod("q"), fakes.pod("q", spec=tolerating["spec"])) is QueueingHint.SKIP
