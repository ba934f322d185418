"""The HPA's replica calculation (upstream's replica_calculator.go), pure over pods and metric values.

Every function answers a proposal for one metric: ceil(ready pods × usage/target), or the current
count when the ratio is within the tolerance (0.1 either way, or behavior's) of 1. Pod metrics (Resource, ContainerResource,
Pods) group the pods first: deleted and failed pods are ignored, pending ones (and, for cpu, ones
not yet ready within their start-up period) are unready, pods without a value are missing; missing
pods count as at target on a scale-down and at zero on a scale-up, unready ones at zero on a
scale-up, and a proposal that would turn direction keeps the current count. Object and External
values scale by ready pods, or from zero by the ratio itself. Used by `hpa_metrics.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from controllers import quantities, timestamps



@dataclass(frozen=True)
class Tolerance:
    """How far from 1 the usage ratio may be before the count changes: `down` below, `up` above
    (behavior.scaleDown/scaleUp.tolerance, HPAConfigurableTolerance; else the controller's 0.1)."""

    down: float = 0.1
    up: float = 0.1

    def within(self, ratio: float) -> bool:
        return 1.0 - self.down <= ratio <= 1.0 + self.up


TOLERANCE = Tolerance()
CPU_INITIALIZATION_PERIOD = 300.0
INITIAL_READINESS_DELAY = 30.0
Pod = dict[str, Any]


class CalculationError(Exception):
    pass


@dataclass(frozen=True)
class PodValue:
    value: int  # milli-units
    timestamp: float = 0.0  # epoch seconds
    window: float = 0.0  # seconds


def _ready_condition(pod: Pod) -> dict[str, Any] | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)


def is_ready(pod: Pod) -> bool:
    condition = _ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def ready_pod_count(pods: list[Pod]) -> int:
    if not pods:
        raise CalculationError("no pods returned by selector while calculating replica count")
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running" and is_ready(p))


def group_pods(pods: list[Pod], values: dict[str, PodValue], resource: str, now: float
               ) -> tuple[int, set[str], set[str], set[str]]:
    """(ready count, unready, missing, ignored) as upstream's groupPods."""
    ready, unready, missing, ignored = 0, set(), set(), set()
    for pod in pods:
        name, status = pod["metadata"]["name"], pod.get("status") or {}
        if (pod.get("metadata") or {}).get("deletionTimestamp") or status.get("phase") == "Failed":
            ignored.add(name)
            continue
        if status.get("phase", "Pending") == "Pending":
            unready.add(name)
            continue
        value = values.get(name)
        if value is None:
            missing.add(name)
            continue
        if resource == "cpu":
            condition = _ready_condition(pod)
            started = timestamps.parse(status.get("startTime"))
            if condition is None or started is None:
                not_ready = True
            else:
                changed = timestamps.parse(condition.get("lastTransitionTime")) or 0.0
                if started + CPU_INITIALIZATION_PERIOD > now:
                    # Still starting: skip unready pods and samples from before the last change.
                    not_ready = condition.get("status") == "False" or value.timestamp < changed + value.window
                else:
                    # Past it: skip a pod that has never been ready.
                    not_ready = condition.get("status") == "False" and started + INITIAL_READINESS_DELAY > changed
            if not_ready:
                unready.add(name)
                continue
        ready += 1
    return ready, unready, missing, ignored


def pod_requests(pods: list[Pod], container: str, resource: str) -> dict[str, int]:
    """Each pod's request (milli) of `resource`, over all containers or the one named."""
    found: dict[str, int] = {}
    for pod in pods:
        total = 0
        for c in (pod.get("spec") or {}).get("containers") or []:
            if container and c.get("name") != container:
                continue
            request = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if request is None:
                if container:
                    continue
                raise CalculationError(f"missing request for {resource} in container {c.get('name')} of "
                                       f"Pod {pod['metadata']['name']}")
            total += quantities.milli(request)
        if container and total == 0 and not any(c.get("name") == container for c in
                                                (pod.get("spec") or {}).get("containers") or []):
            raise CalculationError(f"container {container} not present in pod {pod['metadata']['name']}")
        found[pod["metadata"]["name"]] = total
    return found


def utilization_ratio(values: dict[str, PodValue], requests: dict[str, int], target: int) -> tuple[float, int, int]:
    """(usage ratio, utilization %, raw average usage) over the pods with a request."""
    usage = requested = counted = 0
    for name, value in values.items():
        if name in requests:
            usage += value.value
            requested += requests[name]
            counted += 1
    if requested == 0:
        raise CalculationError("no metrics returned matched known pods")
    utilization = usage * 100 // requested
    return utilization / target, utilization, usage // counted


def usage_ratio(values: dict[str, PodValue], target: int) -> tuple[float, int]:
    average = sum(v.value for v in values.values()) // len(values)
    return average / target, average


def _rebalanced(values: dict[str, PodValue], current: int, ratio: float, new_ratio: float, tolerance: Tolerance) -> int:
    if tolerance.within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current  # too small a change, or it would turn the direction around
    proposed = math.ceil(new_ratio * len(values))
    if (new_ratio < 1.0 and proposed > current) or (new_ratio > 1.0 and proposed < current):
        return current
    return proposed


def resource_utilization_replicas(current: int, target: int, pods: list[Pod], found: dict[str, PodValue],
                                  resource: str, container: str, now: float, tolerance: Tolerance = TOLERANCE
                                  ) -> tuple[int, int, int]:
    """(replicas, utilization %, raw average usage) for a Utilization target."""
    if not pods:
        raise CalculationError("no pods returned by selector while calculating replica count")
    values = dict(found)
    ready, unready, missing, ignored = group_pods(pods, values, resource, now)
    for name in ignored | unready:
        values.pop(name, None)
    if not values:
        raise CalculationError("did not receive metrics for targeted pods (pods might be unready)")
    requests = pod_requests(pods, container, resource)
    ratio, utilization, raw = utilization_ratio(values, requests, target)
    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if tolerance.within(ratio):
            return current, utilization, raw
        return math.ceil(ratio * ready), utilization, raw
    if missing:
        fallback = max(100, target)
        for name in missing:
            values[name] = PodValue(requests.get(name, 0) * fallback // 100 if ratio < 1.0 else 0)
    if scale_up_with_unready:
        for name in unready:
            values[name] = PodValue(0)
    new_ratio, _, _ = utilization_ratio(values, requests, target)
    return _rebalanced(values, current, ratio, new_ratio, tolerance), utilization, raw


def plain_metric_replicas(current: int, target: int, pods: list[Pod], found: dict[str, PodValue], resource: str,
                          now: float, tolerance: Tolerance = TOLERANCE) -> tuple[int, int]:
    """(replicas, average usage) for an AverageValue target over pods (Resource, Pods metrics)."""
    if not pods:
        raise CalculationError("no pods returned by selector while calculating replica count")
    values = dict(found)
    ready, unready, missing, ignored = group_pods(pods, values, resource, now)
    for name in ignored | unready:
        values.pop(name, None)
    if not values:
        raise CalculationError("did not receive metrics for targeted pods (pods might be unready)")
    ratio, usage = usage_ratio(values, target)
    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if tolerance.within(ratio):
            return current, usage
        return math.ceil(ratio * ready), usage
    for name in missing:
        values[name] = PodValue(target if ratio < 1.0 else 0)
    if scale_up_with_unready:
        for name in unready:
            values[name] = PodValue(0)
    new_ratio, _ = usage_ratio(values, target)
    return _rebalanced(values, current, ratio, new_ratio, tolerance), usage


def usage_ratio_replicas(current: int, ratio: float, pods: list[Pod] | None, tolerance: Tolerance = TOLERANCE) -> int:
    """Object and External `Value` targets: by ready pods, or straight from the ratio at zero."""
    if current == 0:
        return math.ceil(ratio)
    if tolerance.within(ratio):
        return current
    return math.ceil(ratio * ready_pod_count(pods or []))


def per_pod_replicas(current: int, usage: int, target_average: int, tolerance: Tolerance = TOLERANCE) -> tuple[int, int]:
    """Object and External `AverageValue` targets: (replicas, usage per current replica)."""
    if current == 0:
        return math.ceil(usage / target_average), usage
    replicas = current
    ratio = usage / (target_average * current)
    if not tolerance.within(ratio):
        replicas = math.ceil(usage / target_average)
    return replicas, math.ceil(usage / current)
