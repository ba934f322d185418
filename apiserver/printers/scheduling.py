"""Printers for scheduling and device kinds: PriorityClass, PodGroup, Workload and DRA.

Owns PriorityClass, the scheduling.k8s.io/v1alpha2 PodGroup and Workload rows, and the
resource.k8s.io kinds (ResourceClaim STATE, ResourceClaimTemplate, ResourceSlice, DeviceClass,
DeviceTaintRule, ResourcePoolStatusRequest). PodGroup, DeviceTaintRule and
ResourcePoolStatusRequest cells are a best reading of post-1.36 printers (resources.md flags them
uncertain); the columns themselves follow resources-1.36.json. Called through
`apiserver/printers/__init__.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers import cells
from apiserver.printers.printer import AGE, NAME, Doc, Printer, col


def _priority_class(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [
        cells.name(obj), cells.integer(obj.get("value")), bool(obj.get("globalDefault")), cells.age(obj, now),
        obj.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


def podgroup_policy(obj: dict[str, Any]) -> str:
    policy = cells.dig(obj, "spec", "schedulingPolicy") or {}
    if "gang" in policy:
        return f"Gang(minCount={cells.integer(cells.dig(policy, 'gang', 'minCount'))})"
    if "basic" in policy:
        return "Basic"
    return "<unknown>"


def podgroup_status(obj: dict[str, Any]) -> str:
    conditions = cells.dig(obj, "status", "conditions")
    scheduled = cells.condition(conditions, "PodGroupScheduled") or cells.condition(conditions, "PodGroupInitiallyScheduled")
    if scheduled is None:
        return "Pending"
    if scheduled.get("status") == "True":
        return "Scheduled"
    return scheduled.get("reason") or "Pending"


def _pod_group(obj: dict[str, Any], now: datetime) -> list[Any]:
    workload = cells.dig(obj, "spec", "podGroupTemplateRef", "workload", "workloadName") or "<none>"
    return [cells.name(obj), podgroup_policy(obj), workload, podgroup_status(obj), cells.age(obj, now)]


def claim_state(obj: dict[str, Any]) -> str:
    """Upstream `resourceClaimState`: deleted, pending or allocated, then reserved."""
    states = []
    deleting = cells.meta(obj).get("deletionTimestamp") is not None
    if deleting:
        states.append("deleted")
    status = obj.get("status") or {}
    if status.get("allocation") is None:
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _device_taint_rule(obj: dict[str, Any], now: datetime) -> list[Any]:
    taint = cells.dig(obj, "spec", "taint") or {}
    added = taint.get("timeAdded")
    return [
        cells.name(obj), taint.get("key", ""), taint.get("value", ""), taint.get("effect", ""),
        "<unset>" if added is None else cells.since(added, now), cells.age(obj, now),
    ]


def _pool_status_request(obj: dict[str, Any], now: datetime) -> list[Any]:
    pools = cells.dig(obj, "status", "pools") or []

    def total(field: str) -> str:
        return str(sum(cells.integer(p.get(field)) for p in pools)) if pools else "<none>"

    errors = sum(1 for p in pools if p.get("validationError"))
    complete = cells.condition(cells.dig(obj, "status", "conditions"), "Complete")
    failed = cells.condition(cells.dig(obj, "status", "conditions"), "Failed")
    if failed is not None and failed.get("status") == "True":
        status = "Failed"
    elif complete is not None and complete.get("status") == "True":
        status = "Complete"
    else:
        status = "Pending"
    completed = "<none>" if complete is None else cells.since(complete.get("lastTransitionTime"), now)
    return [
        cells.name(obj), cells.dig(obj, "spec", "driver") or "", total("totalDevices"), total("availableDevices"),
        total("allocatedDevices"), total("unavailableDevices"), str(errors), cells.integer(cells.dig(obj, "status", "poolCount")),
        status, completed,
    ]


_STATE = col("State", "A summary of the current state (allocated, pending, reserved, etc.).")

PRINTERS = {
    ("scheduling.k8s.io", "priorityclasses"): Printer(
        (NAME, col("Value", Doc("scheduling.v1.PriorityClass", "value"), type="integer"),
         col("Global-Default", Doc("scheduling.v1.PriorityClass", "globalDefault"), type="boolean"), AGE,
         col("PreemptionPolicy", Doc("scheduling.v1.PriorityClass", "preemptionPolicy"))),
        _priority_class,
    ),
    ("scheduling.k8s.io", "podgroups"): Printer(
        (NAME, col("Policy", Doc("scheduling.v1alpha2.PodGroupSpec", "schedulingPolicy")),
         col("Workload", Doc("scheduling.v1alpha2.PodGroupSpec", "podGroupTemplateRef")),
         col("Status", "Whether the pod group has been scheduled."), AGE),
        _pod_group,
    ),
    ("scheduling.k8s.io", "workloads"): Printer((NAME, AGE), lambda o, now: [cells.name(o), cells.age(o, now)]),
    ("resource.k8s.io", "deviceclasses"): Printer((NAME, AGE), lambda o, now: [cells.name(o), cells.age(o, now)]),
    ("resource.k8s.io", "resourceclaims"): Printer(
        (NAME, _STATE, AGE), lambda o, now: [cells.name(o), claim_state(o), cells.age(o, now)],
    ),
    ("resource.k8s.io", "resourceclaimtemplates"): Printer((NAME, AGE), lambda o, now: [cells.name(o), cells.age(o, now)]),
    ("resource.k8s.io", "resourceslices"): Printer(
        (NAME, col("Node", Doc("resource.v1.ResourceSliceSpec", "nodeName")), col("Driver", Doc("resource.v1.ResourceSliceSpec", "driver")),
         col("Pool", Doc("resource.v1.ResourcePool", "name")), AGE),
        lambda o, now: [
            cells.name(o), cells.dig(o, "spec", "nodeName") or "", cells.dig(o, "spec", "driver") or "",
            cells.dig(o, "spec", "pool", "name") or "", cells.age(o, now),
        ],
    ),
    ("resource.k8s.io", "devicetaintrules"): Printer(
        (NAME, col("Key", Doc("resource.v1alpha3.DeviceTaint", "key")), col("Value", Doc("resource.v1alpha3.DeviceTaint", "value")),
         col("Effect", Doc("resource.v1alpha3.DeviceTaint", "effect")), col("TimeAdded", Doc("resource.v1alpha3.DeviceTaint", "timeAdded")), AGE),
        _device_taint_rule,
    ),
    ("resource.k8s.io", "resourcepoolstatusrequests"): Printer(
        (NAME, col("Driver", Doc("resource.v1alpha3.ResourcePoolStatusRequestSpec", "driver")),
         col("Total", Doc("resource.v1alpha3.PoolStatus", "totalDevices")),
         col("Available", Doc("resource.v1alpha3.PoolStatus", "availableDevices")),
         col("Allocated", Doc("resource.v1alpha3.PoolStatus", "allocatedDevices")),
         col("Unavailable", Doc("resource.v1alpha3.PoolStatus", "unavailableDevices")),
         col("Errors", "The number of pools with a validation error."),
         col("Pools", Doc("resource.v1alpha3.ResourcePoolStatusRequestStatus", "poolCount"), type="integer"),
         col("Status", "The state of the request."), col("Completed", "How long ago the request completed.")),
        _pool_status_request,
    ),
}
