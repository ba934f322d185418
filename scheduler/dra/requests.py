"""A claim's requests, checked and prepared once for every node an allocation is tried on.

`prepare(claim, classes, features, admin_access_namespace)` turns `spec.devices.requests` into,
per request, its alternatives in order (one for `exactly`, the subrequests for
`firstAvailable`), each a `Request` with its class, selectors, mode, count, tolerations and
parsed capacity requests. It raises `ClaimError` with upstream's texts for what makes a claim
unallocatable anywhere (unknown class, a gate that is off, admin access outside an admin
namespace). Called by `allocator.py`, which keeps the result per claim for one Allocator.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from scheduler.dra import capacity

ALLOCATION_RESULTS_MAX_SIZE = 32
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


class ClaimError(Exception):
    """The claim cannot be allocated on any node; the text is upstream's."""


def claim_ref(claim: dict[str, Any]) -> str:
    """klog.KObj: `namespace/name`."""
    meta = claim.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    return f"{namespace}/{meta.get('name', '')}" if namespace else meta.get("name", "")


class Request:
    """One request, or one subrequest of a firstAvailable request."""

    __slots__ = ("base", "sub", "name", "spec", "class_name", "device_class", "class_selectors", "selectors",
                 "all", "count", "admin", "tolerations", "capacity", "owner", "class_owner", "selection")

    def __init__(self, base: str, sub: str, spec: dict[str, Any], device_class: dict[str, Any], owner: str):
        self.base = base
        self.sub = sub
        self.name = f"{base}/{sub}" if sub else base
        self.spec = spec
        self.class_name: str = spec.get("deviceClassName", "")
        self.device_class = device_class
        self.class_selectors: list[dict[str, Any]] = list((device_class.get("spec") or {}).get("selectors") or [])
        self.selectors: list[dict[str, Any]] = list(spec.get("selectors") or [])
        self.all = (spec.get("allocationMode") or "ExactCount") == "All"
        self.count = int(spec.get("count") or 1)
        self.admin = bool(spec.get("adminAccess")) if not sub else False
        self.tolerations: list[dict[str, Any]] = list(spec.get("tolerations") or [])
        self.capacity: dict[str, Decimal] = capacity.parse_requests(spec.get("capacity"))
        self.owner = owner
        self.class_owner = f"class {self.class_name}"
        # The key under which a device remembers whether it passes all of this request's selectors
        # (the class's, then the request's): one lookup per device instead of one per expression.
        self.selection = (tuple(((sel or {}).get("cel") or {}).get("expression") for sel in self.class_selectors),
                          tuple(((sel or {}).get("cel") or {}).get("expression") for sel in self.selectors))


class Claim:
    """A claim's prepared requests: `requests[i]` lists request i's alternatives in order."""

    __slots__ = ("obj", "ref", "requests", "constraints", "min_devices")

    def __init__(self, obj: dict[str, Any], requests: list[list[Request]], min_devices: int):
        devices = (obj.get("spec") or {}).get("devices") or {}
        self.obj = obj
        self.ref = claim_ref(obj)
        self.requests = requests
        self.constraints: list[dict[str, Any]] = list(devices.get("constraints") or [])
        self.min_devices = min_devices


def _one(claim_text: str, base: str, sub: str, spec: dict[str, Any], classes: dict[str, dict[str, Any]],
         features: dict[str, bool], admin_namespace: bool) -> Request:
    name = sub or base
    for index, selector in enumerate(spec.get("selectors") or []):
        if not (selector or {}).get("cel"):
            raise ClaimError(f"claim {claim_text}, request {name}, selector #{index}: "
                             "CEL expression empty (unsupported selector type?)")
    if spec.get("adminAccess") is not None and not features["DRAAdminAccess"]:
        raise ClaimError(f"claim {claim_text}, request {name}: admin access is requested, but the feature is disabled")
    if spec.get("adminAccess") and not admin_namespace:
        # The API server's wording for the same rule (it refuses such claims at create time).
        raise ClaimError(f"claim {claim_text}, request {name}: admin access to devices requires the "
                         f"`{ADMIN_ACCESS_LABEL}: true` label on the containing namespace")
    class_name = spec.get("deviceClassName") or ""
    if not class_name:
        raise ClaimError(f"claim {claim_text}, request {name}: missing device class name (unsupported request type?)")
    device_class = classes.get(class_name)
    if device_class is None:
        raise ClaimError(f"claim {claim_text}, request {name}: could not retrieve device class {class_name}: "
                         f'deviceclass.resource.k8s.io "{class_name}" not found')
    mode = spec.get("allocationMode") or "ExactCount"
    if mode not in ("ExactCount", "All"):
        raise ClaimError(f"claim {claim_text}, request {name}: unsupported count mode {mode}")
    try:
        return Request(base, sub, spec, device_class, f"claim {claim_text}")
    except capacity.quantities.ParseError as err:
        raise ClaimError(f"claim {claim_text}, request {name}: {err}") from None


def prepare(obj: dict[str, Any], classes: dict[str, dict[str, Any]], features: dict[str, bool],
            admin_namespace: bool) -> Claim:
    claim_text = claim_ref(obj)
    devices = (obj.get("spec") or {}).get("devices") or {}
    prepared: list[list[Request]] = []
    min_devices = 0
    for request in devices.get("requests") or []:
        base = request.get("name", "")
        subrequests = request.get("firstAvailable") or []
        if subrequests and not features["DRAPrioritizedList"]:
            raise ClaimError(f"claim {claim_text}, request {base}: has subrequests, but the DRAPrioritizedList "
                             "feature is disabled")
        if not features["DRAConsumableCapacity"]:
            if (request.get("exactly") or {}).get("capacity") is not None:
                raise ClaimError(f"claim {claim_text}, request {base}: has capacity requests, but the "
                                 "DRAConsumableCapacity feature is disabled")
            for sub in subrequests:
                if sub.get("capacity") is not None:
                    raise ClaimError(f"claim {claim_text}, subrequest {sub.get('name', '')}: has capacity "
                                     "requests, but the DRAConsumableCapacity feature is disabled")
        if subrequests:
            alternatives = [_one(claim_text, base, sub.get("name", ""), sub, classes, features, admin_namespace)
                            for sub in subrequests]
        elif request.get("exactly") is not None:
            alternatives = [_one(claim_text, base, "", request["exactly"], classes, features, admin_namespace)]
        else:
            raise ClaimError(f"claim {claim_text}, request {base}: missing device class name "
                             "(unsupported request type?)")
        prepared.append(alternatives)
        min_devices += min((0 if r.all else r.count) for r in alternatives)
    if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
        raise ClaimError(f"claim {claim_text}: number of requested devices {min_devices} exceeds the claim "
                         f"limit of {ALLOCATION_RESULTS_MAX_SIZE}")
    for index, constraint in enumerate(devices.get("constraints") or []):
        if constraint.get("matchAttribute") is None and constraint.get("distinctAttribute") is None:
            raise ClaimError(f"claim {claim_text}, constraint #{index}: empty constraint (unsupported constraint type?)")
    return Claim(obj, prepared, min_devices)
