"""The pure rules under node lifecycle, taint eviction and PodGC: which taint the Ready condition
calls for, how tolerations match and when a pod must go, which terminated pods go first."""

from __future__ import annotations

import time

from controllers.node_lifecycle import NOT_READY, UNREACHABLE, lifecycle_taints, wanted_taint_key
from controllers.pod_gc import oldest_first, terminated
from controllers.taint_eviction import TaintEvictionController, tolerates


def _node(ready: str | None, taints: list[dict] | None = None) -> dict:
    conditions = [] if ready is None else [{"type": "Ready", "status": ready}]
    return {"metadata": {"name": "n"}, "spec": {"taints": taints or []}, "status": {"conditions": conditions}}


def test_the_ready_condition_picks_the_taint():
    assert wanted_taint_key(_node("True")) is None
    assert wanted_taint_key(_node("False")) == NOT_READY
    assert wanted_taint_key(_node("Unknown")) == UNREACHABLE
    assert wanted_taint_key(_node(None)) is None  # nothing posted yet: no verdict


def test_lifecycle_taints_swap_keys_keep_others_and_keep_time_added():
    other = {"key": "example.com/x", "effect": "NoSchedule"}
    first = lifecycle_taints([other], UNREACHABLE, "2026-01-01T00:00:00Z")
    assert first == [other, {"key": UNREACHABLE, "effect": "NoSchedule"},
                     {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}]
    assert lifecycle_taints(first, UNREACHABLE, "2027-01-01T00:00:00Z") == first
    swapped = lifecycle_taints(first, NOT_READY, "2027-01-01T00:00:00Z")
    assert [t["key"] for t in swapped] == ["example.com/x", NOT_READY, NOT_READY]
    assert lifecycle_taints(swapped, None, "2027-01-01T00:00:00Z") == [other]


def test_toleration_matching():
    taint = {"key": "k", "value": "v", "effect": "NoExecute"}
    assert tolerates({"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"}, taint)
    assert tolerates({"key": "k", "value": "v"}, taint)  # Equal by default, any effect
    assert tolerates({"operator": "Exists"}, taint)  # empty key with Exists: everything
    assert not tolerates({"key": "k", "value": "w"}, taint)
    assert not tolerates({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, taint)


def _pod(tolerations: list[dict]) -> dict:
    return {"metadata": {"name": "p", "namespace": "d"}, "spec": {"nodeName": "n", "tolerations": tolerations}}


def test_the_deadline_is_the_smallest_toleration_after_the_taint_was_added():
    controller = TaintEvictionController(client=None)  # type: ignore[arg-type] - no API calls here
    added = "2026-01-01T00:00:00Z"
    node = _node("Unknown", [{"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": added}])
    base = controller._added("n", node["spec"]["taints"][0])
    tolerations = [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                   {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]
    assert controller.deadline(_pod(tolerations), node) == base + 30
    assert controller.deadline(_pod([{"operator": "Exists"}]), node) is None  # for ever
    assert controller.deadline(_pod([]), node) <= time.time()  # not tolerated: now
    assert controller.deadline(_pod([]), _node("True")) is None  # no NoExecute taint


def test_terminated_pods_go_evicted_first_then_oldest_names_breaking_ties():
    def pod(name: str, created: str, phase: str = "Succeeded", reason: str = "") -> dict:
        return {"metadata": {"name": name, "creationTimestamp": created}, "status": {"phase": phase, "reason": reason}}

    pods = [pod("b", "2026-01-02T00:00:00Z"), pod("a", "2026-01-02T00:00:00Z"), pod("old", "2026-01-01T00:00:00Z"),
            pod("ev", "2026-01-03T00:00:00Z", "Failed", "Evicted")]
    assert [p["metadata"]["name"] for p in oldest_first(pods)] == ["ev", "old", "a", "b"]
    assert terminated(pods[0]) and not terminated({"status": {"phase": "Running"}}) and not terminated({})
