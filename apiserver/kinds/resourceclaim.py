"""ResourceClaims and ResourceClaimTemplates (resource.k8s.io/v1): admin access at create, a spec fixed after it.

Create: each request is `exactly` or `firstAvailable` (validateDeviceRequest's union), the
namespace must allow admin access when a request asks for it (`admin_access.py`), then the
generic metadata rules. Update: metadata rules and `spec` unchanged, reported as
apimachinery's ValidateImmutableField does (`spec: Invalid value: <new spec>: field is immutable`;
the claim's +k8s:immutable tag is alpha in 1.36, so the handwritten error is the one returned).
A claim's status write may newly grant admin access only in such a namespace, and may not change
a populated allocation or reserve a claim that has none. Upstream:
pkg/registry/resource/resourceclaim{,template}/strategy.go, pkg/apis/resource/validation.
"""

from __future__ import annotations

from apiserver import validation as v
from apiserver.kinds import admin_access, fixed_fields
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

_SPEC = (fixed_fields.Fixed("spec"),)


class NamespaceReading(DefaultingStrategy):
    """A strategy that looks at the namespace of what it validates; `kinds.strategy_for` sets the lookup."""

    namespaces: admin_access.NamespaceLookup | None = None

    def namespace_of(self, obj: Obj) -> str:
        return (obj.get("metadata") or {}).get("namespace") or ""


_ONE_KIND = "exactly one of `exactly` or `firstAvailable` is required"


def request_kinds(requests: object, path: str) -> Causes:
    """validateDeviceRequest's union: each request is `exactly` or `firstAvailable`, never both or neither."""
    causes: Causes = []
    for i, request in enumerate(requests if isinstance(requests, list) else []):
        if not isinstance(request, dict):
            continue
        kinds = (request.get("exactly") is not None) + bool(request.get("firstAvailable"))
        if kinds == 0:
            causes.append(v.required(f"{path}[{i}]", _ONE_KIND))
        elif kinds > 1:
            causes.append(v.invalid(f"{path}[{i}]", None, _ONE_KIND + ", but multiple fields are set"))
    return causes


class ResourceClaimStrategy(NamespaceReading):
    def validate(self, obj: Obj) -> Causes:
        requests = (((obj.get("spec") or {}).get("devices") or {}).get("requests"))
        causes = request_kinds(requests, "spec.devices.requests")
        causes += admin_access.for_requests(requests, self.namespace_of(obj), self.namespaces)
        return causes + super().validate(obj)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return _fixed_spec(self, new, old)

    def validate_status_update(self, new: Obj, old: Obj) -> Causes:
        def results(claim: Obj) -> object:
            allocation = (claim.get("status") or {}).get("allocation") or {}
            return (allocation.get("devices") or {}).get("results")

        causes = admin_access.for_results(results(new), results(old), self.namespace_of(new), self.namespaces)
        causes += v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + _status_update(new, old)


def _status_update(new: Obj, old: Obj) -> Causes:
    """validateResourceClaimStatusUpdate's invariants: reservations need an allocation, a deleted claim
    gains no reservations, and a populated allocation is fixed until it is removed."""
    status, old_status = new.get("status") or {}, old.get("status") or {}
    allocation, old_allocation = status.get("allocation"), old_status.get("allocation")
    reserved = status.get("reservedFor") or []
    causes: Causes = []
    if reserved:
        if allocation is None:
            causes.append(v.forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
        elif (new.get("metadata") or {}).get("deletionTimestamp"):
            before = {fixed_fields.json_key(entry) for entry in old_status.get("reservedFor") or []}
            if any(fixed_fields.json_key(entry) not in before for entry in reserved):
                causes.append(v.forbidden("status.reservedFor", "new entries may not be added while "
                                                                "`deallocationRequested` or `deletionTimestamp` are set"))
    if allocation is not None and old_allocation is not None and not fixed_fields.same(allocation, old_allocation):
        causes.append(v.invalid("status.allocation", allocation, v.FIELD_IMMUTABLE))
    return causes


class ResourceClaimTemplateStrategy(NamespaceReading):
    def validate(self, obj: Obj) -> Causes:
        claim_spec = ((obj.get("spec") or {}).get("spec") or {})
        requests = (claim_spec.get("devices") or {}).get("requests")
        causes = request_kinds(requests, "spec.spec.devices.requests")
        causes += admin_access.for_requests(requests, self.namespace_of(obj), self.namespaces)
        return causes + super().validate(obj)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return _fixed_spec(self, new, old)


def _fixed_spec(strategy: NamespaceReading, new: Obj, old: Obj) -> Causes:
    """Update rules of both kinds: metadata (no admin-access check: the spec cannot have changed)."""
    causes = DefaultingStrategy.validate(strategy, new)
    causes += v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
    return causes + fixed_fields.changes(_SPEC, new, old)
