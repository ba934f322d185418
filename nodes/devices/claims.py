"""Which allocated devices a container holds: its `resources.claims` resolved through the pod.

`container_results(container, pod, claims)` follows each entry `{name, request?}` to the pod's
`spec.resourceClaims` (a claim by name, or a template's claim named in
`status.resourceClaimStatuses`) and yields the matching `status.allocation.devices.results`, plus
the devices of extended resources served through DRA (KEP-5004: the scheduler's special claim, its
requests mapped to containers in `status.extendedResourceClaimStatus`).
`health` (allocatedResourcesStatus) and `container` (env, nvidia-smi) both start here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Held:
    pod_claim: str  # the container's claim entry name (pod-level claim name)
    request: str  # "" when the entry names no request
    result: dict[str, Any]  # one DeviceRequestAllocationResult

    @property
    def status_name(self) -> str:
        """`claim:<name>[/<request>]`, the allocatedResourcesStatus entry name."""
        return f"claim:{self.pod_claim}" + (f"/{self.request}" if self.request else "")


def claim_name(pod: dict[str, Any], pod_claim: str) -> str | None:
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        if entry.get("name") != pod_claim:
            continue
        if entry.get("resourceClaimName"):
            return entry["resourceClaimName"]
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
            if status.get("name") == pod_claim:
                return status.get("resourceClaimName")
    return None


def results_of(claim: dict[str, Any]) -> list[dict[str, Any]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or [])


def _wanted(result: dict[str, Any], request: str) -> bool:
    """A bare request name covers its subrequests (`<request>/<subrequest>` in results)."""
    got = str(result.get("request", ""))
    return not request or got == request or got.startswith(request + "/")


def container_results(container: dict[str, Any], pod: dict[str, Any],
                      claims: dict[str, dict[str, Any]]) -> list[Held]:
    """`claims` maps ResourceClaim names to the (allocated) objects the kubelet has fetched."""
    out: list[Held] = []
    for ref in (container.get("resources") or {}).get("claims") or []:
        pod_claim = ref.get("name", "")
        request = ref.get("request", "") or ""
        claim = claims.get(claim_name(pod, pod_claim) or "")
        if claim is None:
            continue
        out.extend(Held(pod_claim, request, r) for r in results_of(claim) if _wanted(r, request))
    extended = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    claim = claims.get(extended.get("resourceClaimName") or "")
    if claim is not None:
        for mapping in extended.get("requestMappings") or []:
            if mapping.get("containerName") != container.get("name"):
                continue
            request = mapping.get("requestName", "")
            out.extend(Held(claim["metadata"]["name"], request, r) for r in results_of(claim)
                       if r.get("request") == request)
    return out
