"""DRA admin access: a claim may ask for it only in a namespace labelled for it (upstream's AuthorizedForAdmin).

A ResourceClaim or ResourceClaimTemplate whose `exactly` request sets `adminAccess: true` is refused
at create unless its namespace carries `resource.kubernetes.io/admin-access: "true"`; updates need
no check because the spec is immutable. A status write that newly grants admin access in an
allocation result is checked the same way. Subrequests (`firstAvailable`) have no adminAccess in
v1. DRAAdminAccess is GA and locked on in 1.36, so the rule always applies. Called by
`resourceclaim.py`; the namespace lookup is the server's namespace cache, given to the strategy by
`kinds.strategy_for`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver import validation as v
from apiserver.errors import field_error
from apiserver.strategy import Causes

LABEL = "resource.kubernetes.io/admin-access"
REFUSED = f"admin access to devices requires the `{LABEL}: true` label on the containing namespace"

# name → the stored namespace (decoded) or None; None instead of a lookup: not known here.
NamespaceLookup = Callable[[str], "dict[str, Any] | None"]


def _requested(requests: Any) -> int | None:
    """Index of the first request asking for admin access; only `exactly` requests can."""
    for i, request in enumerate(requests if isinstance(requests, list) else []):
        exact = request.get("exactly") if isinstance(request, dict) else None
        if isinstance(exact, dict) and exact.get("adminAccess") is True:
            return i
    return None


def _granted(results: Any) -> int | None:
    for i, result in enumerate(results if isinstance(results, list) else []):
        if isinstance(result, dict) and result.get("adminAccess") is True:
            return i
    return None


def _check(path: str, namespace: str, namespaces: NamespaceLookup | None) -> Causes:
    found = namespaces(namespace) if namespaces is not None else None
    if found is None:
        # Upstream's namespace client failed to get it: an InternalError cause on the same path.
        why = f'namespaces "{namespace}" not found'
        return [field_error("InternalError", path,
                            f"Internal error: could not retrieve namespace to verify admin access: {why}")]
    labels = (found.get("metadata") or {}).get("labels") or {}
    if labels.get(LABEL) != "true":
        return [v.forbidden(path, REFUSED)]
    return []


def for_requests(requests: Any, namespace: str, namespaces: NamespaceLookup | None) -> Causes:
    """The create check of a claim's (or a template's claim's) `devices.requests`.

    Upstream reports `spec.devices.requests[i].adminAccess` for templates too (one shared helper)."""
    index = _requested(requests)
    if index is None:
        return []
    return _check(f"spec.devices.requests[{index}].adminAccess", namespace, namespaces)


def for_results(new_results: Any, old_results: Any, namespace: str, namespaces: NamespaceLookup | None) -> Causes:
    """The status check: only an allocation that newly grants admin access needs the label."""
    if _granted(old_results) is not None:
        return []
    index = _granted(new_results)
    if index is None:
        return []
    return _check(f"status.allocation.devices.results[{index}].adminAccess", namespace, namespaces)
