"""Events the controllers record (core/v1, as client-go's recorder writes them for kube-controller-manager).

`record(client, component, obj, type, reason, message)` creates one Event about `obj` with
`source.component` set to the controller's component name. Recording never fails the caller: a
lost event is logged, as with client-go's broadcaster. Used by `resource_claims.py`,
`device_taint_eviction.py`, `job.py` and `cron_job.py`.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timezone
from typing import Any

from client.resources import EVENTS
from client.rest import RestClient

log = logging.getLogger("haru.controllers.events")


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


async def record(client: RestClient, component: str, obj: dict[str, Any], kind: str, reason: str,
                 message: str) -> None:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    involved = {"kind": obj.get("kind") or "Pod", "apiVersion": obj.get("apiVersion") or "v1",
                "namespace": meta.get("namespace"), "name": meta.get("name"), "uid": meta.get("uid")}
    if meta.get("resourceVersion"):
        involved["resourceVersion"] = meta["resourceVersion"]
    now = _now()
    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{meta.get('name')}.{secrets.token_hex(8)}", "namespace": namespace},
        "involvedObject": involved, "reason": reason, "message": message, "type": kind,
        "source": {"component": component}, "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        "reportingComponent": component, "reportingInstance": "",
    }
    try:
        await client.create(EVENTS, event, namespace)
    except Exception as exc:  # noqa: BLE001 - events are best effort
        log.info("could not record event %s for %s/%s: %s", reason, meta.get("namespace"), meta.get("name"), exc)
