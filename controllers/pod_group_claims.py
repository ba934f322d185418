"""Claims for a whole PodGroup (KEP-5729, gate DRAWorkloadResourceClaims): which they are, pure.

A PodGroup's `spec.resourceClaims[]` entry with a template gets one claim for the whole group
(generateName `<podgroup>-<entry>-`, the `pod-claim-name` annotation, a controlling owner reference
to the PodGroup), recorded in `status.resourceClaimStatuses`. A pod of the group whose own entry
has the same name and the same claim or template reference uses that claim instead of one of its
own. `resource_claims.py` (the ResourceClaim controller) makes and records them with these.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
API_VERSION = "scheduling.k8s.io/v1alpha2"
GROUP_INDEX = "pod-by-podgroup"  # pods filed under `namespace/podGroupName`
RESERVED_INDEX = "claim-by-reserving-podgroup"  # claims filed under each `namespace/podgroup` in reservedFor
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def group_of(pod: Obj) -> str | None:
    return ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") or None


def group_index(pod: Obj) -> list[str]:
    name = group_of(pod)
    return [f"{_meta(pod).get('namespace')}/{name}"] if name else []


def _reference(entry: Obj) -> tuple[str, str]:
    if entry.get("resourceClaimName"):
        return "claim", entry["resourceClaimName"]
    return "template", entry.get("resourceClaimTemplateName") or ""


def shared_entry(group: Obj | None, entry: Obj) -> Obj | None:
    """The group's entry a pod's entry stands for: same name, same claim or template."""
    for candidate in (group or {}).get("spec", {}).get("resourceClaims") or []:
        if candidate.get("name") == entry.get("name") and _reference(candidate) == _reference(entry):
            return candidate  # type: ignore[no-any-return]
    return None


def recorded(group: Obj, entry_name: str) -> str | None:
    """The claim the group's status names for an entry, if it names one."""
    for status in (group.get("status") or {}).get("resourceClaimStatuses") or []:
        if status.get("name") == entry_name and status.get("resourceClaimName"):
            return str(status["resourceClaimName"])
    return None


def generated(group: Obj, entry_name: str, owned: list[Obj]) -> Obj | None:
    """Among claims the group owns, the one made for this entry (a status write may be lost)."""
    uid = _meta(group).get("uid")
    for claim in owned:
        refs = _meta(claim).get("ownerReferences") or []
        if any(r.get("controller") and r.get("uid") == uid for r in refs) and \
                (_meta(claim).get("annotations") or {}).get(POD_CLAIM_NAME) == entry_name:
            return claim
    return None


def owner_reference(group: Obj) -> Obj:
    meta = _meta(group)
    return {"apiVersion": API_VERSION, "kind": "PodGroup", "name": meta.get("name"), "uid": meta.get("uid"),
            "controller": True, "blockOwnerDeletion": True}


def owned_by_group_of(pod: Obj, claim: Obj) -> bool:
    """The claim's controller is the PodGroup the pod belongs to (the pod knows it by name only)."""
    name = group_of(pod)
    return bool(name) and any(
        r.get("controller") and r.get("kind") == "PodGroup" and r.get("apiVersion", "").startswith("scheduling.k8s.io/")
        and r.get("name") == name for r in _meta(claim).get("ownerReferences") or [])


def reserved_for_group(claim: Obj, name: str | None) -> bool:
    return bool(name) and any(
        r.get("apiGroup") == "scheduling.k8s.io" and r.get("resource") == "podgroups" and r.get("name") == name
        for r in (claim.get("status") or {}).get("reservedFor") or [])


def reserved_index(claim: Obj) -> list[str]:
    namespace = _meta(claim).get("namespace")
    return [f"{namespace}/{r.get('name')}" for r in (claim.get("status") or {}).get("reservedFor") or []
            if r.get("apiGroup") == "scheduling.k8s.io" and r.get("resource") == "podgroups"]
