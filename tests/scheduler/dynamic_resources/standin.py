"""A stand-in for `scheduler.dra` with its API (`Inventory`, `AllocatedState.of`, `Allocator`), for
the plugin's tests only: first fit over the node's devices, each device used once, classes matched
by `spec.selectors[].cel.expression` of the one form `device.driver == "<driver>"`. It lets the
plugin's tests pin what the plugin does with an allocator's answers, not how allocation works."""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

Obj = dict[str, Any]
_DRIVER = re.compile(r'device\.driver == "([^"]+)"')


class Inventory:
    def __init__(self) -> None:
        self.slices: dict[str, Obj] = {}
        self.upserts = 0

    def upsert(self, slice_: Obj) -> None:
        self.upserts += 1
        self.slices[slice_["metadata"]["name"]] = slice_

    def remove(self, slice_: Obj) -> None:
        self.slices.pop(slice_["metadata"]["name"], None)


class AllocatedState:
    def __init__(self, taken: set[tuple[str, str, str]]) -> None:
        self.taken = taken

    @classmethod
    def of(cls, claims: list[Obj]) -> "AllocatedState":
        taken = set()
        for claim in claims:
            allocation = (claim.get("status") or {}).get("allocation") or {}
            for r in (allocation.get("devices") or {}).get("results") or []:
                taken.add((r["driver"], r["pool"], r["device"]))
        return cls(taken)


@dataclass
class Outcome:
    allocations: list[Obj] | None
    reason: str = ""


class Allocator:
    def __init__(self, *, inventory: Inventory, classes: dict[str, Obj], allocated: AllocatedState,
                 taint_rules: list[Obj], features: dict[str, bool]) -> None:
        self.inventory, self.classes, self.allocated = inventory, classes, allocated
        self.calls: list[tuple[str, list[str], bool]] = []

    def _driver(self, class_name: str) -> str | None:
        for sel in (self.classes[class_name].get("spec") or {}).get("selectors") or []:
            m = _DRIVER.search(sel["cel"]["expression"])
            if m:
                return m.group(1)
        return None

    def allocate(self, node: Obj, claims: list[Obj], admin_access_namespace: bool = False) -> Outcome:
        name = node["metadata"]["name"]
        self.calls.append((name, [c["metadata"]["name"] for c in claims], admin_access_namespace))
        taken = set(self.allocated.taken)
        results_per_claim = []
        for claim in claims:
            results = []
            for request in claim["spec"]["devices"]["requests"]:
                exact = request["exactly"]
                driver = self._driver(exact["deviceClassName"])
                for _ in range(exact.get("count", 1)):
                    device = self._pick(name, driver, taken)
                    if device is None:
                        return Outcome(None, f"request {request['name']}: no free device")
                    slice_, dev = device
                    taken.add((slice_["spec"]["driver"], slice_["spec"]["pool"]["name"], dev["name"]))
                    result = {"request": request["name"], "driver": slice_["spec"]["driver"],
                              "pool": slice_["spec"]["pool"]["name"], "device": dev["name"]}
                    for key in ("bindingConditions", "bindingFailureConditions"):
                        if dev.get(key):
                            result[key] = dev[key]
                    results.append(result)
            results_per_claim.append({
                "devices": {"results": results},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [name]}]}]}})
        return Outcome(results_per_claim)

    def _pick(self, node: str, driver: str | None, taken: set[tuple[str, str, str]]) -> tuple[Obj, Obj] | None:
        for slice_ in sorted(self.inventory.slices.values(), key=lambda s: s["metadata"]["name"]):
            spec = slice_["spec"]
            if spec.get("nodeName") != node or (driver and spec["driver"] != driver):
                continue
            for dev in spec.get("devices") or []:
                if (spec["driver"], spec["pool"]["name"], dev["name"]) not in taken:
                    return slice_, dev
        return None


MODULE = SimpleNamespace(AllocatedState=AllocatedState, Allocator=Allocator)


def gpu_slice(node: str, *devices: str, driver: str = "gpu.nvidia.com", rv: str = "1", **device_fields: Any) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-{driver}", "resourceVersion": rv},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": d, **device_fields} for d in devices]}}


def device_class(name: str, driver: str = "gpu.nvidia.com", extended_resource: str = "",
                 created: str = "2026-01-01T00:00:00Z") -> Obj:
    spec: Obj = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if extended_resource:
        spec["extendedResourceName"] = extended_resource
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


def claim(name: str, *, namespace: str = "default", class_name: str = "gpu", count: int = 1,
          owner_uid: str = "", status: Obj | None = None, requests: list[Obj] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"uid-claim-{name}", "resourceVersion": "5"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid,
                                    "controller": True, "blockOwnerDeletion": True}]
    body: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                 "spec": {"devices": {"requests": requests or [
                     {"name": "gpu", "exactly": {"deviceClassName": class_name, "count": count}}]}}}
    if status:
        body["status"] = status
    return body
