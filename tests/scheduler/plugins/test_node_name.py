"""NodeName: Filter against spec.nodeName, and the hint on an added node."""

from __future__ import annotations

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, QueueingHint, Resource
from scheduler.framework.status import Code
from scheduler.plugins import node_name
from tests.scheduler import fakes

FILTER_CASES = [
    ("A pod without a node name fits any node", "", "n1", None),
    ("A pod naming this node fits it", "n1", "n1", None),
    ("A pod naming another node is rejected for good", "n2", "n1", Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
]


@pytest.mark.parametrize("case, wanted, node, code", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(case: str, wanted: str, node: str, code: Code | None) -> None:
    handle = fakes.FakeHandle([fakes.node(node)])
    plugin = node_name.new({}, handle, {})
    pod = fakes.pod("p", spec={"nodeName": wanted} if wanted else None)
    status = plugin.filter(CycleState(), pod, handle.snapshot.get(node))
    if code is None:
        assert status is None
    else:
        assert status is not None and status.code is code
        assert status.reasons == ["node(s) didn't match the requested node name"]


HINT_CASES = [
    ("Adding the named node queues the pod", "n1", "n1", QueueingHint.QUEUE),
    ("Adding another node skips the pod", "n1", "n2", QueueingHint.SKIP),
    ("A pod without a node name is queued by any added node", "", "n2", QueueingHint.QUEUE),
]


@pytest.mark.parametrize("case, wanted, added, hint", HINT_CASES, ids=[c[0] for c in HINT_CASES])
def test_node_add_hint(case: str, wanted: str, added: str, hint: QueueingHint) -> None:
    plugin = node_name.new({}, fakes.FakeHandle(), {})
    [event] = plugin.events_to_register()
    assert event.event.resource is Resource.NODE and event.event.action == ActionType.ADD
    pod = fakes.pod("p", spec={"nodeName": wanted} if wanted else None)
    assert event.hint is not None and event.hint(pod, None, fakes.node(added)) is hint


def test_without_queueing_hints_label_and_taint_updates_are_registered_too() -> None:
    [event] = node_name.new({}, fakes.FakeHandle(), {"SchedulerQueueingHints": False}).events_to_register()
    assert event.event.action == ActionType.ADD | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
