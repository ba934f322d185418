"""`CoreEventRecorder`: core/v1 Events about objects, through an `EventCorrelator`, as client-go's
tools/record broadcaster sends them for kube-controller-manager.

`await record(obj, type, reason, message)` builds the Event (`source.component` = the recorder's
component), correlates it, and then creates it, or patches the first occurrence's `count`,
`lastTimestamp` and message; a patch that finds the event gone creates it afresh, as upstream's
recordToSink does. Sends are serialized per recorder (upstream's sink is one goroutine), so a
repeat never races the create it counts on. Recording never raises: a lost event is logged.
`recorder_for(client, component)` shares one recorder per client and component (controllers/events.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from typing import Any

from client import errors
from client.event_correlator import EventCorrelator, rfc3339
from client.resources import EVENTS
from client.rest import RestClient

log = logging.getLogger("haru.client.events")
Obj = dict[str, Any]


def involved_object(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    involved = {"kind": obj.get("kind") or "Pod", "apiVersion": obj.get("apiVersion") or "v1",
                "namespace": meta.get("namespace"), "name": meta.get("name"), "uid": meta.get("uid")}
    if meta.get("resourceVersion"):
        involved["resourceVersion"] = meta["resourceVersion"]
    return involved


class CoreEventRecorder:
    def __init__(self, client: RestClient, component: str, correlator: EventCorrelator | None = None) -> None:
        self.client = client
        self.component = component
        self.correlator = correlator or EventCorrelator()
        self._sending = asyncio.Lock()

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> Obj:
        meta = obj.get("metadata") or {}
        now = rfc3339(self.correlator.clock())
        return {
            "apiVersion": "v1", "kind": "Event",
            # upstream's name: the object's name and the time in nanoseconds, in hex
            "metadata": {"name": f"{meta.get('name')}.{time.time_ns():x}",
                         "namespace": meta.get("namespace") or "default"},
            "involvedObject": involved_object(obj), "reason": reason, "message": message, "type": type_,
            "source": {"component": self.component}, "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "reportingComponent": self.component, "reportingInstance": "",
        }

    async def record(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        async with self._sending:
            correlated = self.correlator.correlate(self.event(obj, type_, reason, message))
            if correlated is None:
                log.debug("event %s about %s dropped by the spam filter", reason, (obj.get("metadata") or {}).get("name"))
                return
            event, namespace = correlated.event, correlated.event["metadata"]["namespace"]
            try:
                sent = await self._send(event, correlated.patch, namespace)
            except Exception as exc:  # noqa: BLE001 - events are best effort, as upstream's
                log.info("could not record event %s for %s/%s: %s", reason, namespace,
                         event["involvedObject"].get("name"), exc)
                return
            self.correlator.update_state(sent)

    async def _send(self, event: Obj, patch: Obj | None, namespace: str) -> Obj:
        if patch is not None:
            try:
                return await self.client.patch(EVENTS, event["metadata"]["name"], patch, namespace,
                                               patch_type="strategic")
            except errors.APIError as exc:
                if not errors.is_not_found(exc):
                    raise
        body = {**event, "metadata": {k: v for k, v in event["metadata"].items() if k != "resourceVersion"}}
        return await self.client.create(EVENTS, body, namespace)


_recorders: "weakref.WeakKeyDictionary[RestClient, dict[str, CoreEventRecorder]]" = weakref.WeakKeyDictionary()


def recorder_for(client: RestClient, component: str) -> CoreEventRecorder:
    """The one recorder (and correlator) of `component` on this client."""
    by_component = _recorders.setdefault(client, {})
    recorder = by_component.get(component)
    if recorder is None:
        recorder = by_component[component] = CoreEventRecorder(client, component)
    return recorder
