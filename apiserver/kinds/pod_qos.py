"""A pod's QoS class (BestEffort, Burstable, Guaranteed) by the upstream rules.

ComputePodQOS: only cpu and memory count; pod-level resources, when set, decide alone;
otherwise every regular and init container must have cpu and memory limits and requests equal
to them for Guaranteed. Callers: `pod.py` (status.qosClass on create) and
`pod_subresources.py` (a resize may not change the class).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from apiserver import validation

_QOS_RESOURCES = ("cpu", "memory")


def _add(total: dict[str, Decimal], values: dict[str, Any]) -> set[str]:
    """Sum the positive cpu/memory quantities into `total`; return the names that were positive."""
    found = set()
    for name, quantity in (values or {}).items():
        amount = validation.parse_quantity(quantity)
        if name in _QOS_RESOURCES and amount is not None and amount > 0:
            total[name] = total.get(name, Decimal(0)) + amount
            found.add(name)
    return found


def compute(spec: dict[str, Any]) -> str:
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    pod_level = spec.get("resources")
    if isinstance(pod_level, dict) and (pod_level.get("requests") or pod_level.get("limits")):
        _add(requests, pod_level.get("requests") or {})
        if not pod_level.get("limits") or not set(_QOS_RESOURCES) <= _add(limits, pod_level["limits"]):
            guaranteed = False
    else:
        for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            resources = c.get("resources") or {}
            _add(requests, resources.get("requests") or {})
            if not set(_QOS_RESOURCES) <= _add(limits, resources.get("limits") or {}):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == amount for name, amount in requests.items()) \
            and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
