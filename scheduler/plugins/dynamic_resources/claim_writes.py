"""What the DynamicResources plugin writes to the API server, each write with upstream's error text.

PreBind: `reserve` (the finalizer by update, then allocation, allocationTimestamp and the pod in
`reservedFor` through `resourceclaims/status`, re-reading the claim after a conflict),
`create_extended` and `map_extended` for the special claim of extended resources. Unreserve:
`unreserve` (take the pod out of `reservedFor`) and `delete`. PostFilter: `deallocate` and
`delete`. The plugin (`plugin.py`) keeps its claim tracker up to date with what these return.
"""

from __future__ import annotations

import copy
from typing import Any

from client import errors
from client import resources as kinds
from client.rest import RestClient
from scheduler.plugins.dynamic_resources import binding_conditions, pod_claims

Obj = dict[str, Any]
FINALIZER = "resource.kubernetes.io/delete-protection"
CONFLICT_RETRIES = 5  # client-go's retry.DefaultRetry steps


class WriteError(Exception):
    """A write that failed for good; the message is the one upstream's PreBind returns."""


def api_message(e: errors.APIError) -> str:
    """Go's StatusError prints only its message."""
    return e.message or str(e)


def _same_allocation(a: Obj, b: Obj) -> bool:
    return all(a.get(k) == b.get(k) for k in ("devices", "nodeSelector"))


async def reserve(client: RestClient, claim: Obj, allocation: Obj | None, pod: Obj, *, stamp: bool,
                  consumer: Obj | None = None) -> Obj:
    """Record `allocation` (when Reserve chose one) and the reservation; the stored claim.

    `consumer` is the `reservedFor` entry when it is not the pod: a PodGroup sharing the claim
    (`group_claims.py`), whose pods all write the same allocation and the same single entry.
    """
    key = pod_claims.key(claim)
    meta = claim["metadata"]
    current = copy.deepcopy(claim)
    for attempt in range(CONFLICT_RETRIES):
        if attempt:
            try:
                current = await client.get(kinds.RESOURCECLAIMS, meta["name"], meta["namespace"])
            except errors.APIError as e:
                raise WriteError(f"get updated claim {key} after conflict: {api_message(e)}") from None
        if current["metadata"].get("deletionTimestamp"):
            raise WriteError(f"claim {key} got deleted in the meantime")
        status = current.setdefault("status", {})
        try:
            if allocation is not None:
                existing = status.get("allocation")
                if existing and not (consumer is not None and _same_allocation(existing, allocation)):
                    raise WriteError(f"claim {key} got allocated elsewhere in the meantime")
                finalizers = current["metadata"].setdefault("finalizers", [])
                if FINALIZER not in finalizers:
                    # Finalizers are metadata: a normal update, before the status one.
                    finalizers.append(FINALIZER)
                    try:
                        current = await client.update(kinds.RESOURCECLAIMS, current)
                    except errors.APIError as e:
                        if errors.is_conflict(e):
                            raise
                        raise WriteError(f"add finalizer to claim {key}: {api_message(e)}") from None
                    status = current.setdefault("status", {})
                if not status.get("allocation"):
                    status["allocation"] = copy.deepcopy(allocation)
            reserved = list(status.get("reservedFor") or [])
            ref = consumer or {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"].get("uid", "")}
            if not any(r.get("uid") == ref["uid"] for r in reserved):
                reserved.append(ref)
            status["reservedFor"] = reserved
            if stamp and status.get("allocation") and not status["allocation"].get("allocationTimestamp"):
                status["allocation"]["allocationTimestamp"] = binding_conditions.timestamp()
            return await client.update(kinds.RESOURCECLAIMS, current, subresource="status")
        except errors.APIError as e:
            if errors.is_conflict(e) and attempt < CONFLICT_RETRIES - 1:
                continue
            what = "add allocation and reservation to" if allocation is not None else "add reservation to"
            raise WriteError(f"{what} claim {key}: {api_message(e)}") from None
    raise WriteError(f"claim {key}: still conflicting after {CONFLICT_RETRIES} attempts")


async def create_extended(client: RestClient, template: Obj) -> Obj:
    """Create the special claim from its in-memory form (the server names it from generateName)."""
    body = copy.deepcopy(template)
    for field in ("name", "uid"):
        body["metadata"].pop(field, None)
    body.pop("status", None)
    try:
        return await client.create(kinds.RESOURCECLAIMS, body)
    except errors.APIError as e:
        raise WriteError(f"create claim for extended resources {body['metadata'].get('namespace', '')}/: "
                         f"{api_message(e)}") from None


async def map_extended(client: RestClient, pod: Obj, claim: Obj, mappings: list[Obj]) -> None:
    """Tell the kubelet which request of the special claim serves which container's resource."""
    meta = pod["metadata"]
    patch = {"status": {"extendedResourceClaimStatus": {"requestMappings": mappings,
                                                        "resourceClaimName": claim["metadata"]["name"]}}}
    try:
        await client.patch(kinds.PODS, meta["name"], patch, meta.get("namespace"), subresource="status")
    except errors.APIError as e:
        raise WriteError(f"update pod {meta.get('namespace', '')}/{meta['name']} "
                         f"ExtendedResourceClaimStatus: {api_message(e)}") from None


async def unreserve(client: RestClient, claim: Obj, pod_uid: str) -> Obj | None:
    """Take the pod out of `reservedFor`; the stored claim, or None when there was nothing to do.

    Upstream sends a strategic merge patch with `$patch: delete`; a read-modify-write retried on
    conflict changes the same entry and needs nothing of the server's patch machinery."""
    meta = claim["metadata"]
    current = claim
    for attempt in range(CONFLICT_RETRIES):
        if attempt:
            current = await client.get(kinds.RESOURCECLAIMS, meta["name"], meta["namespace"])
        if current["metadata"].get("uid") != meta.get("uid"):
            return None  # deleted and made anew: not the claim we reserved
        before = pod_claims.reserved_for(current)
        kept = [r for r in before if r.get("uid") != pod_uid]
        if len(kept) == len(before):
            return None
        body = copy.deepcopy(current)
        body["status"]["reservedFor"] = kept
        try:
            return await client.update(kinds.RESOURCECLAIMS, body, subresource="status")
        except errors.APIError as e:
            if not errors.is_conflict(e) or attempt == CONFLICT_RETRIES - 1:
                raise
    return None


async def deallocate(client: RestClient, claim: Obj) -> Obj:
    """Clear allocation, reservations and device status (PostFilter freeing a claim)."""
    body = copy.deepcopy(claim)
    status = body.setdefault("status", {})
    for name in ("reservedFor", "allocation", "devices"):
        status.pop(name, None)
    return await client.update(kinds.RESOURCECLAIMS, body, subresource="status")


async def delete(client: RestClient, claim: Obj) -> None:
    """Drop our finalizer, then delete (upstream's deleteClaim); a claim already gone is fine."""
    meta = claim["metadata"]
    current = claim
    for attempt in range(CONFLICT_RETRIES):
        if attempt:
            current = await client.get(kinds.RESOURCECLAIMS, meta["name"], meta["namespace"])
        finalizers = list((current.get("metadata") or {}).get("finalizers") or [])
        if FINALIZER not in finalizers:
            break
        body = copy.deepcopy(current)
        body["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
        try:
            await client.update(kinds.RESOURCECLAIMS, body)
            break
        except errors.APIError as e:
            if errors.is_not_found(e):
                return
            if not errors.is_conflict(e) or attempt == CONFLICT_RETRIES - 1:
                raise
    try:
        await client.delete(kinds.RESOURCECLAIMS, meta["name"], meta["namespace"])
    except errors.APIError as e:
        if not errors.is_not_found(e):
            raise
