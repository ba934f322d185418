"""Device health per node: the faults set on the Node, the taints they put in the slices, and pod status.

A fault reaches the nodes process through the API, so it works across processes: the Node carries
the annotation `haru.dev/gpu-health`, a JSON object from device name to a fault, e.g.
`{"gpu-3": "Unhealthy"}` or `{"gpu-3": {"health": "Unhealthy", "effect": "NoExecute", "xid": 79}}`
(`fault.py` writes it; a device not listed is healthy). `publisher` watches the Node, keeps the
node's entry in `REGISTRY` and republishes; the taints follow the NVIDIA driver's keys
(`gpu.nvidia.com/gpu-lost`, `gpu.nvidia.com/xid` with the XID as value, `gpu.nvidia.com/unmonitored`
for Unknown, `device_health.go`; a NIC's is `nic.haru.dev/link-down`).
The kubelet calls `allocated_resources_status` for `containerStatuses[].allocatedResourcesStatus`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

from nodes.devices import claims as claims_mod
from nodes.devices import names

ANNOTATION = "haru.dev/gpu-health"
EFFECTS = ("NoSchedule", "NoExecute", "None")
HEALTH = ("Healthy", "Unhealthy", "Unknown")
# An unmonitored device is only marked (effect None, as the driver does); a lost one is avoided.
DEFAULT_EFFECT = {"Unhealthy": "NoSchedule", "Unknown": "None", "Healthy": "None"}
MESSAGE_LIMIT = 1024  # ResourceHealth.message is cut to 1024 characters (gate ResourceHealthStatusMessage)
# What NVIDIA's XID catalogue says the common fatal ones mean; the message names the XID either way.
XID_MEANINGS = {
    48: "double bit ECC error",
    63: "ECC page retirement or row remapping recording event",
    64: "ECC page retirement or row remapper recording failure",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained ECC error",
    95: "uncontained ECC error",
}


@dataclass(frozen=True)
class Fault:
    health: str = "Unhealthy"
    effect: str = "NoSchedule"
    xid: int | None = None
    message: str = ""

    def key(self, device: str) -> str:
        if names.is_nic(device):
            return names.TAINT_NIC_DOWN
        if self.health == "Unknown":
            return names.TAINT_UNMONITORED
        return names.TAINT_XID if self.xid is not None else names.TAINT_GPU_LOST

    def taint(self, device: str, time_added: str) -> dict[str, Any]:
        taint: dict[str, Any] = {"key": self.key(device)}
        if self.xid is not None and not names.is_nic(device):
            taint["value"] = str(self.xid)
        taint["effect"] = self.effect
        taint["timeAdded"] = time_added
        return taint

    def describe(self, device: str, uuid: str) -> str:
        if self.message:
            text = self.message
        elif self.xid is not None:
            meaning = XID_MEANINGS.get(self.xid)
            text = f"XID {self.xid}" + (f" ({meaning})" if meaning else "")
        elif self.health == "Unknown":
            text = "device health is not monitored"
        elif names.is_nic(device):
            text = "link is down"
        else:
            text = "GPU is lost"
        where = f"{device} ({uuid})" if uuid else device
        return f"{where}: {text}"[:MESSAGE_LIMIT]


class FaultError(ValueError):
    pass


def parse_fault(value: Any) -> Fault:
    if isinstance(value, str):
        if value not in HEALTH:
            raise FaultError(f"health must be one of {', '.join(HEALTH)}, not {value!r}")
        return Fault(health=value, effect=DEFAULT_EFFECT[value])
    if not isinstance(value, dict):
        raise FaultError(f"a fault is a health string or an object, not {type(value).__name__}")
    unknown = set(value) - {"health", "effect", "xid", "message"}
    if unknown:
        raise FaultError(f"unknown fault fields: {', '.join(sorted(unknown))}")
    health = value.get("health", "Unhealthy")
    if health not in HEALTH:
        raise FaultError(f"health must be one of {', '.join(HEALTH)}, not {health!r}")
    effect = value.get("effect", DEFAULT_EFFECT[health])
    xid = value.get("xid")
    message = value.get("message", "")
    if effect not in EFFECTS:
        raise FaultError(f"effect must be one of {', '.join(EFFECTS)}, not {effect!r}")
    if xid is not None and (isinstance(xid, bool) or not isinstance(xid, int) or xid < 0):
        raise FaultError(f"xid must be a non-negative integer, not {xid!r}")
    if not isinstance(message, str):
        raise FaultError("message must be a string")
    return Fault(health=health, effect=effect, xid=xid, message=message)


def parse_annotation(text: str | None) -> dict[str, Fault]:
    """The faults a Node's annotation lists; raises FaultError on a malformed one (nothing applied)."""
    if not text:
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise FaultError(f"{ANNOTATION} is not JSON: {err}") from None
    if not isinstance(raw, dict):
        raise FaultError(f"{ANNOTATION} must be a JSON object from device name to fault")
    faults = {str(device): parse_fault(value) for device, value in raw.items()}
    return {d: f for d, f in faults.items() if f.health != "Healthy"}


def encode_annotation(faults: dict[str, Any]) -> str:
    return json.dumps(faults, sort_keys=True, separators=(",", ":"))


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class NodeHealth:
    """The faults of one node, each with the time it was first seen (the taint's timeAdded)."""

    def __init__(self) -> None:
        self.faults: dict[str, Fault] = {}
        self.since: dict[str, str] = {}
        self.listeners: list[Callable[[], None]] = []  # the kubelet: pods' allocatedResourcesStatus is stale

    def replace(self, faults: dict[str, Fault], at: str | None = None) -> bool:
        """Take the annotation's faults; True when anything changed (and then tell the listeners)."""
        if faults == self.faults:
            return False
        stamp = at or now()
        self.since = {d: (self.since.get(d, stamp) if self.faults.get(d) == f else stamp) for d, f in faults.items()}
        self.faults = dict(faults)
        for listener in list(self.listeners):
            listener()
        return True

    def fault_for(self, device: str, parent: str | None = None) -> Fault | None:
        """A device's own fault, else its physical GPU's (a lost GPU takes its MIG devices with it)."""
        return self.faults.get(device) or (self.faults.get(parent) if parent else None)

    def taints_for(self, device: str, parent: str | None = None) -> list[dict[str, Any]]:
        fault = self.fault_for(device, parent)
        if fault is None or fault.health == "Healthy":
            return []
        owner = device if device in self.faults else (parent or device)
        return [fault.taint(device, self.since.get(owner) or now())]


class HealthRegistry:
    """Per-node health, shared by the publisher (writer) and the kubelet (reader) in one process."""

    def __init__(self) -> None:
        self._nodes: dict[str, NodeHealth] = {}

    def node(self, name: str) -> NodeHealth:
        health = self._nodes.get(name)
        if health is None:
            health = self._nodes[name] = NodeHealth()
        return health

    def forget(self, name: str) -> None:
        self._nodes.pop(name, None)


REGISTRY = HealthRegistry()


def allocated_resources_status(container: dict[str, Any], pod: dict[str, Any], claims: dict[str, dict[str, Any]],
                               node: NodeHealth, uuids: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """`allocatedResourcesStatus` for one container, as the kubelet's DRA manager reports it.

    `claims` maps a ResourceClaim's name to the (allocated) object. Entries are named
    `claim:<pod claim name>[/<request>]` as the container declares them; each device is
    `{resourceID: "<driver>/<pool>/<device>", health, message?}`. Only this driver's devices
    appear (the GPUs and the NICs); `uuids` (device name → UUID, `container.uuids`) puts the UUIDs in the messages.
    """
    grouped: dict[str, list[dict[str, Any]]] = {}
    for held in claims_mod.container_results(container, pod, claims):
        result = held.result
        driver = result.get("driver")
        if driver not in names.DRIVERS:
            continue
        device = str(result.get("device", ""))
        parent = device.split("-mig-")[0] if "-mig-" in device else None
        fault = node.fault_for(device, parent)
        entry: dict[str, Any] = {"resourceID": f"{driver}/{result.get('pool', '')}/{device}",
                                 "health": fault.health if fault else "Healthy"}
        if fault is not None:
            entry["message"] = fault.describe(device, (uuids or {}).get(device, ""))
        grouped.setdefault(held.status_name, []).append(entry)
    return [{"name": name, "resources": resources} for name, resources in grouped.items()]
