"""ResourceSlice, DeviceClass and ResourceClaim dicts for the allocator tests, shaped as the API serves them."""

from __future__ import annotations

from typing import Any

from scheduler.dra import allocator, inventory

Obj = dict[str, Any]
DRIVER = "gpu.example.com"


def device(name: str, **fields: Any) -> Obj:
    """A device; `attrs` gives attributes as plain values (str, int, bool), `capacity` as quantity text."""
    out: Obj = {"name": name}
    attrs = fields.pop("attrs", None)
    if attrs:
        out["attributes"] = {k: ({"bool": v} if isinstance(v, bool) else {"int": v} if isinstance(v, int)
                                 else {"string": v}) for k, v in attrs.items()}
    cap = fields.pop("capacity", None)
    if cap:
        out["capacity"] = {k: (v if isinstance(v, dict) else {"value": v}) for k, v in cap.items()}
    out.update(fields)
    return out


def slice_(name: str, devices: list[Obj] | None = None, *, driver: str = DRIVER, pool: str | None = None,
           node: str | None = None, generation: int = 1, count: int = 1, rv: str = "", **spec: Any) -> Obj:
    body: Obj = {"driver": driver, "pool": {"name": pool or node or name, "generation": generation,
                                            "resourceSliceCount": count}}
    if node is not None:
        body["nodeName"] = node
    if devices is not None:
        body["devices"] = devices
    body.update(spec)
    meta: Obj = {"name": name}
    if rv:
        meta["resourceVersion"] = rv
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": meta, "spec": body}


def device_class(name: str, *expressions: str, config: list[Obj] | None = None) -> Obj:
    spec: Obj = {"selectors": [{"cel": {"expression": e}} for e in expressions]}
    if config:
        spec["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def exact(name: str, cls: str = "gpu", *expressions: str, **fields: Any) -> Obj:
    body: Obj = {"deviceClassName": cls, **fields}
    if expressions:
        body["selectors"] = [{"cel": {"expression": e}} for e in expressions]
    return {"name": name, "exactly": body}


def first_available(name: str, *subs: Obj) -> Obj:
    return {"name": name, "firstAvailable": list(subs)}


def sub(name: str, cls: str = "gpu", *expressions: str, **fields: Any) -> Obj:
    body: Obj = {"name": name, "deviceClassName": cls, **fields}
    if expressions:
        body["selectors"] = [{"cel": {"expression": e}} for e in expressions]
    return body


def claim(name: str, *requests: Obj, constraints: list[Obj] | None = None, config: list[Obj] | None = None,
          namespace: str = "default", allocation: Obj | None = None) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    out: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                             "resourceVersion": "1"},
                "spec": {"devices": devices}}
    if allocation is not None:
        out["status"] = {"allocation": allocation}
    return out


def allocated(name: str, *devices: tuple[str, str], driver: str = DRIVER, **result: Any) -> Obj:
    """A claim already allocated (pool, device) pairs; extra result fields apply to each."""
    results = [{"request": "r", "driver": driver, "pool": p, "device": d, **result} for p, d in devices]
    return claim(name, exact("r"), allocation={"devices": {"results": results}})


def node(name: str, **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


GPU_CLASS = device_class("gpu", f'device.driver == "{DRIVER}"')


def run(slices: list[Obj], claims: list[Obj], *, node_obj: Obj | None = None, classes: list[Obj] | None = None,
        held: list[Obj] | None = None, rules: list[Obj] | None = None, features: dict[str, bool] | None = None,
        admin: bool = False) -> allocator.Outcome:
    inv = inventory.Inventory()
    for s in slices:
        inv.upsert(s)
    a = allocator.Allocator(inventory=inv, classes={c["metadata"]["name"]: c for c in (classes or [GPU_CLASS])},
                            allocated=allocator.AllocatedState.of(held or []), taint_rules=rules or [],
                            features=features or {})
    return a.allocate(node_obj or node("n1"), claims, admin_access_namespace=admin)


def picked(outcome: allocator.Outcome) -> list[list[tuple[str, str]]] | str:
    """Per claim, (request, pool/device) of each result; or the reason when nothing was allocated."""
    if outcome.allocations is None:
        return outcome.reason
    return [[(r["request"], f'{r["pool"]}/{r["device"]}') for r in a["devices"]["results"]]
            for a in outcome.allocations]
