"""The pure rules of the DRA controllers: generated claim names (`resource_claims.generate_name`),
which device tolerations tolerate which taints (`device_taint_eviction.tolerates`), which devices a
DeviceTaintRule selects, and how the `EvictionInProgress` condition is worded (`rule_status`)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers import rule_status
from controllers.device_taint_eviction import rule_selects, tolerates
from controllers.resource_claims import generate_name


@pytest.mark.parametrize(("pod", "entry", "expected"), [
    ("web", "gpu", "web-gpu-"),
    ("p" * 40, "e" * 20, "p" * 36 + "-" + "e" * 18),
    ("p" * 60, "gpu", "p" * 52 + "-gp"),
], ids=["a short base is kept with its trailing hyphen",
        "a long base is cut in proportion and loses the trailing hyphen, as upstream's does",
        "a long pod name still leaves the entry its share"])
def test_generate_name(pod: str, entry: str, expected: str) -> None:
    assert generate_name(pod, entry) == expected
    assert len(generate_name(pod, entry)) <= 57


TAINT = {"key": "gpu.nvidia.com/unhealthy", "value": "xid", "effect": "NoExecute"}


@pytest.mark.parametrize(("toleration", "expected"), [
    ({"key": "gpu.nvidia.com/unhealthy", "value": "xid", "effect": "NoExecute"}, True),
    ({"key": "gpu.nvidia.com/unhealthy", "value": "other"}, False),
    ({"key": "gpu.nvidia.com/unhealthy", "operator": "Exists"}, True),
    ({"operator": "Exists"}, True),
    ({"operator": "Exists", "effect": "NoSchedule"}, False),
    ({"key": "another", "operator": "Exists"}, False),
    ({"key": "gpu.nvidia.com/unhealthy", "operator": "Lt", "value": "xid"}, False),
], ids=["equal key, value and effect", "another value", "exists for the key", "exists for every key",
        "another effect", "another key", "an unknown operator"])
def test_tolerates(toleration: dict[str, Any], expected: bool) -> None:
    assert tolerates(toleration, TAINT) is expected


@pytest.mark.parametrize(("selector", "expected"), [
    (None, False), ({}, True), ({"driver": "gpu.nvidia.com"}, True), ({"driver": "gpu.nvidia.com", "device": "gpu-1"}, False),
    ({"pool": "gpu-0", "device": "gpu-0"}, True),
], ids=["no selector selects nothing", "an empty selector selects every device", "the driver matches",
        "the device differs", "pool and device match"])
def test_rule_selects(selector: dict[str, str] | None, expected: bool) -> None:
    rule = {"spec": {"taint": TAINT, **({} if selector is None else {"deviceSelector": selector})}}
    assert rule_selects(rule, "gpu.nvidia.com", "gpu-0", "gpu-0") is expected


def _rule(effect: str) -> dict[str, Any]:
    return {"metadata": {"name": "r", "generation": 3}, "spec": {"taint": {"key": "k", "effect": effect}}}


@pytest.mark.parametrize(("effect", "counts", "status", "reason", "message"), [
    ("NoExecute", rule_status.Counts(pending_pods=1, pending_namespaces=1), "True", "PodsPendingEviction",
     "1 pod needs to be evicted in 1 namespace."),
    ("NoExecute", rule_status.Counts(pending_pods=3, pending_namespaces=2, evicted=1), "True", "PodsPendingEviction",
     "3 pods need to be evicted in 2 different namespaces. 1 pod evicted since starting the controller."),
    ("NoExecute", rule_status.Counts(evicted=4), "False", "Completed", "4 pods evicted since starting the controller."),
    ("NoExecute", rule_status.Counts(), "False", "NotStarted", ""),
    ("NoSchedule", rule_status.Counts(), "False", "OtherEffect", "Eviction only happens for the NoExecute effect."),
    ("None", rule_status.Counts(published_devices=2, allocated_devices=1, pending_pods=1, pending_namespaces=1),
     "False", "NoEffect", "2 published devices selected. 1 allocated device selected. 1 pod would be evicted in "
     "1 namespace if the effect was NoExecute. This information will not be updated again. "
     "Recreate the DeviceTaintRule to trigger an update."),
], ids=["one pod pending", "several pending and some evicted", "all evicted", "nothing to evict yet",
        "an effect that never evicts", "None previews NoExecute"])
def test_the_eviction_in_progress_condition(effect: str, counts: rule_status.Counts, status: str, reason: str,
                                            message: str) -> None:
    assert rule_status.condition(_rule(effect), counts) == {
        "type": "EvictionInProgress", "status": status, "reason": reason, "message": message, "observedGeneration": 3}
