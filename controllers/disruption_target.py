"""Evicting a pod as the eviction controllers do: the DisruptionTarget condition, then the delete.

`evict(client, pod, condition)` writes `condition` (type DisruptionTarget, with its reason and
message) through pods/status unless the pod already carries exactly that, keeping the transition
time when the status does not change, then deletes the pod with its uid as a precondition, so a
new pod of the same name is never hit. It answers False when the pod is already gone. Used by
`taint_eviction.py` and `device_taint_eviction.py`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from client import errors
from client.resources import PODS
from client.rest import RestClient

Obj = dict[str, Any]


def _condition_patch(pod: Obj, condition: Obj) -> Obj | None:
    """The status patch that sets `condition`, or None when the pod already has it."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    current = next((c for c in conditions if c.get("type") == condition["type"]), None)
    if current is not None and all(current.get(k) == v for k, v in condition.items()):
        return None
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    since = current.get("lastTransitionTime") if current and current.get("status") == condition["status"] else None
    return {"metadata": {"uid": pod["metadata"]["uid"]},
            "status": {"conditions": [{**condition, "lastTransitionTime": since or now}]}}


async def evict(client: RestClient, pod: Obj, condition: Obj) -> bool:
    meta = pod["metadata"]
    name, namespace = meta["name"], meta.get("namespace")
    try:
        patch = _condition_patch(pod, condition)
        if patch is not None:
            await client.patch(PODS, name, patch, namespace, patch_type="strategic", subresource="status")
        await client.delete(PODS, name, namespace, uid=meta["uid"])
    except errors.APIError as exc:
        if errors.is_not_found(exc):
            return False
        raise
    return True
