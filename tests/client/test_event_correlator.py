"""`client/event_correlator.py`: counting, aggregation and the spam filter, on a fake clock."""

from __future__ import annotations

from typing import Any

from client.event_correlator import AGGREGATE_PREFIX, EventCorrelator


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def _event(message: str, name: str = "web", reason: str = "SuccessfulCreate", n: int = 0) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.{n:x}", "namespace": "default"},
            "involvedObject": {"kind": "ReplicaSet", "apiVersion": "apps/v1", "namespace": "default", "name": name,
                               "uid": f"uid-{name}"},
            "reason": reason, "message": message, "type": "Normal", "source": {"component": "replicaset-controller"},
            "count": 1, "firstTimestamp": "", "lastTimestamp": ""}


def _sent(correlated: Any, rv: str) -> dict[str, Any]:
    """The server's answer: the event as sent, with a resourceVersion."""
    return {**correlated.event, "metadata": {**correlated.event["metadata"], "resourceVersion": rv}}


def test_a_repeated_event_patches_the_first_with_a_count() -> None:
    clock = Clock()
    c = EventCorrelator(clock)
    first = c.correlate(_event("Back-off restarting", n=1))
    assert first is not None and first.patch is None
    c.update_state(_sent(first, "5"))
    clock.now += 30
    second = c.correlate(_event("Back-off restarting", n=2))
    assert second is not None
    assert second.event["metadata"]["name"] == first.event["metadata"]["name"]
    assert second.patch == {"count": 2, "lastTimestamp": "2023-11-14T22:13:50Z", "message": "Back-off restarting"}
    third = c.correlate(_event("Back-off restarting", n=3))
    assert third is not None and third.patch is not None and third.patch["count"] == 3


def test_ten_messages_of_one_reason_become_one_combined_event() -> None:
    clock = Clock()
    c = EventCorrelator(clock)
    results = [c.correlate(_event(f"Created pod: web-{i}", n=i)) for i in range(12)]
    assert all(r is not None for r in results)
    singles = [r for r in results[:9] if r is not None]
    assert [r.patch for r in singles] == [None] * 9
    assert [r.event["message"] for r in singles] == [f"Created pod: web-{i}" for i in range(9)]
    tenth, eleventh, twelfth = results[9], results[10], results[11]
    assert tenth is not None and tenth.patch is None
    assert tenth.event["message"] == AGGREGATE_PREFIX + "Created pod: web-9"
    assert eleventh is not None and eleventh.event["metadata"]["name"] == tenth.event["metadata"]["name"]
    assert eleventh.patch == {"count": 2, "lastTimestamp": eleventh.event["lastTimestamp"],
                              "message": AGGREGATE_PREFIX + "Created pod: web-10"}
    assert twelfth is not None and twelfth.patch is not None and twelfth.patch["count"] == 3


def test_other_objects_and_reasons_are_counted_apart() -> None:
    c = EventCorrelator(Clock())
    for i in range(9):
        assert c.correlate(_event(f"Created pod: a-{i}", name="a", n=i)) is not None
    other_reason = c.correlate(_event("Deleted pod: a-0", name="a", reason="SuccessfulDelete"))
    other_object = c.correlate(_event("Created pod: b-0", name="b"))
    assert other_reason is not None and other_reason.event["message"] == "Deleted pod: a-0"
    assert other_object is not None and other_object.event["message"] == "Created pod: b-0"


def test_aggregation_starts_over_after_ten_quiet_minutes() -> None:
    clock = Clock()
    c = EventCorrelator(clock)
    for i in range(9):
        c.correlate(_event(f"Created pod: web-{i}", n=i))
    clock.now += 601
    fresh = c.correlate(_event("Created pod: web-99"))
    assert fresh is not None and fresh.event["message"] == "Created pod: web-99"


def test_the_spam_filter_allows_a_burst_of_25_then_one_per_five_minutes() -> None:
    clock = Clock()
    c = EventCorrelator(clock)
    sent = [c.correlate(_event("same", n=i)) for i in range(30)]
    assert sum(1 for r in sent if r is not None) == 25
    assert sent[25:] == [None] * 5
    clock.now += 300
    assert c.correlate(_event("same")) is not None
    assert c.correlate(_event("same")) is None
    # Another object has its own bucket.
    assert c.correlate(_event("same", name="other")) is not None
