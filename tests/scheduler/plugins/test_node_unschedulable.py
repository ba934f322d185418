"""NodeUnschedulable: cordoned nodes, the unschedulable toleration, and the hints."""

from __future__ import annotations

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, QueueingHint, Resource
from scheduler.framework.status import Code
from scheduler.plugins import node_unschedulable
from tests.scheduler import fakes

TOLERATE_CORDON = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]

FILTER_CASES = [
    ("A schedulable node takes any pod", False, [], None),
    ("A cordoned node rejects a pod without the toleration", True, [], "node(s) were unschedulable"),
    ("A cordoned node takes a pod tolerating the unschedulable taint", True, TOLERATE_CORDON, None),
    ("A toleration of everything also tolerates the cordon", True, [{"operator": "Exists"}], None),
    ("A toleration of another taint does not help", True,
     [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}], "node(s) were unschedulable"),
    ("A NoExecute toleration of the key does not tolerate the NoSchedule taint", True,
     [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}],
     "node(s) were unschedulable"),
]


@pytest.mark.parametrize("case, cordoned, tolerations, reason", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(case: str, cordoned: bool, tolerations: list, reason: str | None) -> None:
    handle = fakes.FakeHandle([fakes.node("n1", unschedulable=cordoned)])
    plugin = node_unschedulable.new({}, handle, {})
    status = plugin.filter(CycleState(), fakes.pod("p", spec={"tolerations": tolerations}), handle.snapshot.get("n1"))
    if reason is None:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.reasons == [reason]


NODE_HINT_CASES = [
    ("Uncordoning a node queues the pod", True, False, QueueingHint.QUEUE),
    ("Cordoning a node skips the pod", False, True, QueueingHint.SKIP),
    ("A node that stays cordoned skips the pod", True, True, QueueingHint.SKIP),
    ("Adding a schedulable node queues the pod", None, False, QueueingHint.QUEUE),
    ("Adding a cordoned node skips the pod", None, True, QueueingHint.SKIP),
]


@pytest.mark.parametrize("case, old, new, hint", NODE_HINT_CASES, ids=[c[0] for c in NODE_HINT_CASES])
def test_node_hint(case: str, old: bool | None, new: bool, hint: QueueingHint) -> None:
    node_event, _ = node_unschedulable.new({}, fakes.FakeHandle(), {}).events_to_register()
    assert node_event.event.action == ActionType.ADD | ActionType.UPDATE_NODE_TAINT
    before = None if old is None else fakes.node("n1", unschedulable=old)
    assert node_event.hint(fakes.pod("p"), before, fakes.node("n1", unschedulable=new)) is hint


def test_the_pod_gaining_the_toleration_is_queued_and_other_pods_are_not() -> None:
    _, pod_event = node_unschedulable.new({}, fakes.FakeHandle(), {}).events_to_register()
    assert pod_event.event.resource is Resource.UNSCHEDULED_POD
    assert pod_event.event.action == ActionType.UPDATE_POD_TOLERATIONS
    pod = fakes.pod("p")
    tolerating = fakes.pod("p", spec={"tolerations": TOLERATE_CORDON})
    assert pod_event.hint(pod, pod, tolerating) is QueueingHint.QUEUE
    assert pod_event.hint(pod, pod, fakes.pod("p", spec={"tolerations": [{"key": "x", "operator": "Exists"}]})) \
        is QueueingHint.SKIP
    assert pod_event.hint(pod, fakes.pod("other"), fakes.pod("other", spec={"tolerations": TOLERATE_CORDON})) \
        is QueueingHint.SKIP
