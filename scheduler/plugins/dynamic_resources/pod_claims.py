"""Which ResourceClaims a pod uses, and whether it may use them: upstream's `resourceclaim` helpers.

`spec.resourceClaims[]` names a claim directly (`resourceClaimName`) or through a template, in which
case the ResourceClaim controller writes the generated name into `status.resourceClaimStatuses`
and owns the claim. `claims_of(pod, lookup)` walks the entries as upstream's
`foreachPodResourceClaim` does and raises `NotUsable` with upstream's message when a claim is
missing, being deleted or not the pod's own; PreEnqueue, PreFilter and the queueing hints call it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler.plugins.dynamic_resources import group_claims

Obj = dict[str, Any]
RESERVED_FOR_MAX_SIZE = 256  # resourceapi.ResourceClaimReservedForMaxSize


class NotUsable(Exception):
    """The pod cannot be scheduled with its claims as they are now (an event may change that)."""


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def claim_name(pod: Obj, entry: Obj) -> tuple[str | None, bool]:
    """(the claim's name or None when none is needed, whether the pod must own it)."""
    meta = _meta(pod)
    if entry.get("resourceClaimName"):
        return entry["resourceClaimName"], False
    if entry.get("resourceClaimTemplateName"):
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
            if status.get("name") == entry.get("name"):
                # An entry without a name: the controller decided no claim was needed.
                return status.get("resourceClaimName") or None, True
        raise NotUsable(f'pod "{meta.get("namespace", "")}/{meta.get("name", "")}": ResourceClaim not created yet')
    raise NotUsable(f'pod "{meta.get("namespace", "")}/{meta.get("name", "")}", spec.resourceClaim '
                    f'"{entry.get("name", "")}": none of the supported fields are set')


def may_use(pod: Obj, claim: Obj) -> bool:
    """Could `claim` be one the pod names (directly or through its generated-claim statuses)?
    A cheap test for the queueing hints, which run for every pending pod on every claim event."""
    meta = _meta(claim)
    if meta.get("namespace") != _meta(pod).get("namespace"):
        return False
    name = meta.get("name")
    if any(entry.get("resourceClaimName") == name for entry in (pod.get("spec") or {}).get("resourceClaims") or []):
        return True
    return any(status.get("resourceClaimName") == name
               for status in (pod.get("status") or {}).get("resourceClaimStatuses") or [])


def claim_keys(pod: Obj) -> list[str]:
    """`namespace/name` of every claim `may_use` would say the pod names: an index function for
    the pod store, so a claim event finds the pods that name it without asking each pending pod."""
    namespace = _meta(pod).get("namespace", "")
    names = [entry.get("resourceClaimName") for entry in (pod.get("spec") or {}).get("resourceClaims") or []]
    names += [status.get("resourceClaimName") for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []]
    return [f"{namespace}/{name}" for name in names if name]


def is_for_pod(pod: Obj, claim: Obj) -> bool:
    """The pod controls the claim, or its PodGroup does (a claim for the whole group, KEP-5729)."""
    pod_meta, claim_meta = _meta(pod), _meta(claim)
    if claim_meta.get("namespace") != pod_meta.get("namespace"):
        return False
    return any(ref.get("controller") and ref.get("uid") == pod_meta.get("uid")
               for ref in claim_meta.get("ownerReferences") or []) or group_claims.owned_by_group_of(pod, claim)


def claims_of(pod: Obj, lookup: Callable[[str, str], Obj | None]) -> list[tuple[str, Obj]]:
    """(pod claim entry name, claim) for every claim the pod needs, in spec order."""
    namespace = _meta(pod).get("namespace", "")
    found = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        name, must_own = claim_name(pod, entry)
        if name is None:
            continue
        claim = lookup(namespace, name)
        if claim is None:
            raise NotUsable(f'resourceclaim.resource.k8s.io "{name}" not found')
        if _meta(claim).get("deletionTimestamp"):
            raise NotUsable(f'resourceclaim "{name}" is being deleted')
        if must_own and not is_for_pod(pod, claim):
            pod_meta = _meta(pod)
            raise NotUsable(f"ResourceClaim {namespace}/{name} was not created for pod "
                            f"{pod_meta.get('namespace', '')}/{pod_meta.get('name', '')} (pod is not owner)")
        found.append((entry.get("name", ""), claim))
    return found


def reserved_for(claim: Obj) -> list[Obj]:
    return list((claim.get("status") or {}).get("reservedFor") or [])


def is_reserved_for_pod(pod: Obj, claim: Obj) -> bool:
    uid = _meta(pod).get("uid")
    return any(ref.get("resource") == "pods" and not ref.get("apiGroup") and ref.get("uid") == uid
               for ref in reserved_for(claim))


def can_be_reserved(claim: Obj) -> bool:
    return len(reserved_for(claim)) < RESERVED_FOR_MAX_SIZE


def allocation(claim: Obj) -> Obj | None:
    return (claim.get("status") or {}).get("allocation")


def key(claim: Obj) -> str:
    """`namespace/name`, how upstream's klog.KObj prints a claim in messages."""
    meta = _meta(claim)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
