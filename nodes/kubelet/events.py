"""Events a hollow kubelet records about a pod (core/v1, source kubelet), as the kubelet's recorder.

Only the ones a user needs to see why a pod does not run: a rejection (OutOfcpu, NodeAffinity…),
BackOff on a crash loop, FailedCreatePodSandBox. Recording never fails the caller: a lost event is
logged. Called by `kubelet.py` and `pod_worker.py`.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timezone
from typing import Any

from client.resources import EVENTS
from client.rest import RestClient
from nodes.runtime.records import rfc3339

log = logging.getLogger("haru.nodes.events")


async def record(client: RestClient, node: str, pod: dict[str, Any], kind: str, reason: str, message: str,
                 field_path: str = "") -> None:
    meta = pod.get("metadata") or {}
    now = datetime.now(timezone.utc)
    involved = {"kind": "Pod", "namespace": meta.get("namespace"), "name": meta.get("name"), "uid": meta.get("uid"),
                "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion")}
    if field_path:
        involved["fieldPath"] = field_path
    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{meta.get('name')}.{secrets.token_hex(8)}", "namespace": meta.get("namespace")},
        "involvedObject": involved, "reason": reason, "message": message,
        "source": {"component": "kubelet", "host": node},
        "firstTimestamp": rfc3339(now), "lastTimestamp": rfc3339(now), "count": 1, "type": kind,
        "eventTime": None, "reportingComponent": "kubelet", "reportingInstance": node,
    }
    try:
        await client.create(EVENTS, event, meta.get("namespace"))
    except Exception as exc:  # noqa: BLE001 - events are best effort, as the kubelet's recorder
        log.info("could not record event %s for %s/%s: %s", reason, meta.get("namespace"), meta.get("name"), exc)
