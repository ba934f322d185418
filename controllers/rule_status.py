"""The `EvictionInProgress` condition of a DeviceTaintRule, worded as kube-controller-manager words it.

`condition(rule, counts)` builds the condition (type, status, reason, message, observedGeneration)
from what `device_taint_eviction.py` counted: pods pending eviction and their namespaces, pods
evicted since the controller started, and for the `None` effect the devices the rule selects and
the pods a NoExecute taint would evict. The caller adds lastTransitionTime and writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TYPE = "EvictionInProgress"
PERIOD = 10.0  # ruleStatusPeriod: the shortest time between two status updates of one rule
Obj = dict[str, Any]


@dataclass
class Counts:
    pending_pods: int = 0
    pending_namespaces: int = 0
    evicted: int = 0
    published_devices: int = 0
    allocated_devices: int = 0


def current(rule: Obj) -> Obj | None:
    return next((c for c in (rule.get("status") or {}).get("conditions") or [] if c.get("type") == TYPE), None)


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else f"{n} {many}"


def condition(rule: Obj, counts: Counts) -> Obj:
    effect = ((rule.get("spec") or {}).get("taint") or {}).get("effect") or ""
    status, reason, message = "False", f"Effect{effect}", ""
    if effect == "NoExecute":
        if counts.pending_pods > 0:
            status, reason = "True", "PodsPendingEviction"
            message = (_plural(counts.pending_pods, "1 pod needs", "pods need") + " to be evicted in "
                       + _plural(counts.pending_namespaces, "1 namespace", "different namespaces") + ".")
        elif counts.evicted > 0:
            reason = "Completed"
        else:
            reason = "NotStarted"
    elif effect == "None":
        reason = "NoEffect"
        message = (_plural(counts.published_devices, "1 published device", "published devices") + " selected. "
                   + _plural(counts.allocated_devices, "1 allocated device", "allocated devices") + " selected. "
                   + _plural(counts.pending_pods, "1 pod would", "pods would") + " be evicted in "
                   + _plural(counts.pending_namespaces, "1 namespace", "different namespaces")
                   + " if the effect was NoExecute. This information will not be updated again. "
                   + "Recreate the DeviceTaintRule to trigger an update.")
    else:
        reason = "OtherEffect"
        message = "Eviction only happens for the NoExecute effect."
    if counts.evicted > 0:
        message += (" " if message else "") + _plural(counts.evicted, "1 pod", "pods") + " evicted since starting the controller."
    return {"type": TYPE, "status": status, "reason": reason, "message": message,
            "observedGeneration": (rule.get("metadata") or {}).get("generation")}
