"""Which ResourceClaim a pod's `spec.resourceClaims[]` entry means, and whether it is the pod's.

What k8s.io/dynamic-resource-allocation/resourceclaim answers for kube-controller-manager: an entry
names a claim directly (`resourceClaimName`) or through a template, whose generated claim is
recorded in `status.resourceClaimStatuses` (a null name there means "not needed"); the scheduler's
claim for extended resources is in `status.extendedResourceClaimStatus`. A generated claim belongs
to its pod by a controller ownerReference. Read by `resource_claims.py` (the
ResourceClaim controller) and `device_taint_eviction.py`; neither writes through this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controllers import pod_group_claims

Obj = dict[str, Any]
# The annotation a generated claim carries: the pod's entry name it was made for.
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
# Put on claims by whoever allocates them (the scheduler); removed once the claim is deallocated.
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"
MAX_RESERVED_FOR = 256  # ResourceClaimReservedForMaxSize


class NotCreatedYet(Exception):
    """The entry uses a template and the pod status does not name the generated claim yet."""


class Unsupported(Exception):
    """The entry sets neither resourceClaimName nor resourceClaimTemplateName."""


@dataclass(frozen=True)
class ClaimName:
    name: str | None  # None: the claim is not needed (the status says so)
    check_owner: bool  # generated from a template: it must be owned by the pod


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def name_for(pod: Obj, entry: Obj) -> ClaimName:
    """resourceclaim.Name: the claim an entry refers to; raises NotCreatedYet or Unsupported."""
    if entry.get("resourceClaimName"):
        return ClaimName(entry["resourceClaimName"], False)
    if entry.get("resourceClaimTemplateName"):
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
            if status.get("name") == entry.get("name"):
                return ClaimName(status.get("resourceClaimName") or None, True)
        raise NotCreatedYet(f'pod "{_meta(pod).get("name")}": ResourceClaim not created yet')
    raise Unsupported(f'pod "{_meta(pod).get("name")}": unsupported PodResourceClaim {entry.get("name")!r}')


def claim_names(pod: Obj) -> list[tuple[Obj, ClaimName]]:
    """Every entry whose claim is known by name (entries not created yet or not needed are left out)."""
    found: list[tuple[Obj, ClaimName]] = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        try:
            named = name_for(pod, entry)
        except (NotCreatedYet, Unsupported):
            continue
        if named.name:
            found.append((entry, named))
    return found


def extended_claim(pod: Obj) -> str | None:
    """The claim the scheduler made for the pod's extended resources (KEP-5004), when it made one."""
    return ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName") or None


def used_claim_names(pod: Obj) -> list[ClaimName]:
    """Every claim the pod uses by name: its entries' and the extended-resource claim (owned by the pod)."""
    used = [named for _, named in claim_names(pod)]
    extended = extended_claim(pod)
    if extended:
        used.append(ClaimName(extended, True))
    return used


def uses_claims(pod: Obj) -> bool:
    return bool((pod.get("spec") or {}).get("resourceClaims") or extended_claim(pod))


def is_for_pod(pod: Obj, claim: Obj) -> str | None:
    """None when the pod owns the claim (or its PodGroup does: a claim for the whole group,
    `pod_group_claims.py`); else upstream's reason why it does not."""
    uid = _meta(pod).get("uid")
    if any(ref.get("uid") == uid for ref in _meta(claim).get("ownerReferences") or []):
        return None
    if pod_group_claims.owned_by_group_of(pod, claim):
        return None
    return f"ResourceClaim {_meta(claim).get('name')} was not created for pod {_meta(pod).get('name')} (pod is not owner)"


def is_reserved_for_pod(pod: Obj, claim: Obj) -> bool:
    uid = _meta(pod).get("uid")
    return any(ref.get("uid") == uid and ref.get("resource") == "pods" and not ref.get("apiGroup")
               for ref in (claim.get("status") or {}).get("reservedFor") or [])


def can_be_reserved(claim: Obj) -> bool:
    return len((claim.get("status") or {}).get("reservedFor") or []) < MAX_RESERVED_FOR


def owning_pod(claim: Obj) -> tuple[str, str] | None:
    """(name, uid) of the pod that is the claim's controller, if a pod is."""
    for ref in _meta(claim).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod":
            return ref.get("name") or "", ref.get("uid") or ""
    return None


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_done(pod: Obj) -> bool:
    """The pod will not run (again): terminal, or deleted before it was ever scheduled."""
    return is_terminal(pod) or bool(_meta(pod).get("deletionTimestamp") and not (pod.get("spec") or {}).get("nodeName"))


def claim_index(pod: Obj) -> list[str]:
    """Pods filed under `namespace/claim` for every claim they name (podResourceClaimIndexFunc)."""
    namespace = _meta(pod).get("namespace") or ""
    return [f"{namespace}/{named.name}" for named in used_claim_names(pod)]
