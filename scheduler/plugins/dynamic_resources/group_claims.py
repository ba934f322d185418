"""Claims shared by a whole PodGroup (KEP-5729, gate DRAWorkloadResourceClaims), for DynamicResources.

A pod of a PodGroup (`spec.schedulingGroup.podGroupName`) whose `resourceClaims[]` entry has the
same name and the same claim or template reference as one of the group's `spec.resourceClaims`
uses the group's claim: it is owned by the PodGroup, not the pod; it is allocated once, by the
first pod of the group to reach Reserve (its siblings in the same cycle read that in-flight
allocation); and `reservedFor` gets one entry for the PodGroup (apiGroup scheduling.k8s.io,
resource podgroups, name, uid) instead of one per pod. `plugin.py` asks these questions.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
GROUP, RESOURCE = "scheduling.k8s.io", "podgroups"


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def group_name(pod: Obj) -> str | None:
    return ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") or None


def _reference(entry: Obj) -> tuple[str, str]:
    if entry.get("resourceClaimName"):
        return "claim", entry["resourceClaimName"]
    return "template", entry.get("resourceClaimTemplateName") or ""


def shared_entries(pod: Obj, group: Obj | None) -> set[str]:
    """The pod's entry names that stand for one of the group's claims."""
    if group is None:
        return set()
    ours = {(e.get("name"), _reference(e)) for e in (group.get("spec") or {}).get("resourceClaims") or []}
    return {e.get("name", "") for e in (pod.get("spec") or {}).get("resourceClaims") or []
            if (e.get("name"), _reference(e)) in ours}


def owned_by_group_of(pod: Obj, claim: Obj) -> bool:
    """The claim's controller is the pod's PodGroup (a claim the ResourceClaim controller made for it)."""
    name = group_name(pod)
    return bool(name) and any(r.get("controller") and r.get("kind") == "PodGroup" and r.get("name") == name
                              for r in _meta(claim).get("ownerReferences") or [])


def consumer(group: Obj) -> Obj:
    """The `reservedFor` entry of a PodGroup."""
    meta = _meta(group)
    return {"apiGroup": GROUP, "resource": RESOURCE, "name": meta.get("name", ""), "uid": meta.get("uid", "")}


def is_reserved_for_group(claim: Obj, name: str | None) -> bool:
    return bool(name) and any(r.get("apiGroup") == GROUP and r.get("resource") == RESOURCE and r.get("name") == name
                              for r in (claim.get("status") or {}).get("reservedFor") or [])
