"""`EventRecorder`: events.k8s.io/v1 Events about pods, sent in the background, as kube-scheduler's.

`event(pod, "Warning", "FailedScheduling", message, "Scheduling")` creates an Event with
`reportingController` set to the profile's scheduler name (`default-scheduler`) and
`reportingInstance` `<controller>-<hostname>`; the same event again (same object, reason, action
and note) within 30 minutes becomes a `series` update of the first one instead of a new object, as
client-go's events broadcaster does. Failures to send are logged, never raised: an event is
informational. Used by the scheduler's failure handler and binding cycle, and by plugins through
`Handle.events`.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from datetime import datetime, timezone
from typing import Any

from client.resources import EVENTS_V1
from client.rest import RestClient

log = logging.getLogger("haru.scheduler.events")
Obj = dict[str, Any]
SERIES_WINDOW = 30 * 60.0
NOTE_LIMIT = 1024  # upstream's NoteLengthLimit


def micro_time(now: float | None = None) -> str:
    stamp = datetime.fromtimestamp(time.time() if now is None else now, tz=timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def truncate(message: str) -> str:
    if len(message) <= NOTE_LIMIT:
        return message
    return message[:NOTE_LIMIT - 4] + " ..."


class EventRecorder:
    def __init__(self, client: RestClient | None, controller: str = "default-scheduler") -> None:
        self.client = client
        self.controller = controller
        self.instance = f"{controller}-{socket.gethostname()}"
        self._series: dict[tuple[str, ...], list[Any]] = {}  # key -> [name, namespace, count, first seen]
        self._tasks: set[asyncio.Task[None]] = set()

    def event(self, regarding: Obj, type_: str, reason: str, message: str, action: str = "") -> None:
        meta = regarding.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        note = truncate(message)
        key = (meta.get("uid", ""), namespace, meta.get("name", ""), type_, reason, action, note)
        now = time.time()
        seen = self._series.get(key)
        if seen is not None and now - seen[3] < SERIES_WINDOW:
            seen[2] += 1
            patch = {"series": {"count": seen[2], "lastObservedTime": micro_time(now)}}
            self._send(self._patch(seen[0], seen[1], patch))
            return
        name = f"{meta.get('name', 'unknown')}.{time.time_ns():x}"
        self._series.pop(key, None)  # re-seen after the window: to the end, where the newest are
        self._series[key] = [name, namespace, 1, now]
        if len(self._series) > 4096:
            self._forget_old(now)
        body = {
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "eventTime": micro_time(now),
            "reportingController": self.controller, "reportingInstance": self.instance,
            "action": action, "reason": reason, "type": type_, "note": note,
            "regarding": {"kind": regarding.get("kind", "Pod"), "apiVersion": regarding.get("apiVersion", "v1"),
                          "namespace": meta.get("namespace", ""), "name": meta.get("name", ""),
                          "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")},
        }
        self._send(self._create(body))

    async def flush(self) -> None:
        """Wait for the events under way (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _forget_old(self, now: float) -> None:
        # Entries are kept in the order they were first seen, oldest first: stop at the first one
        # still in the window instead of scanning them all on every event past the 4096th.
        series = self._series
        while series:
            key, value = next(iter(series.items()))
            if now - value[3] < SERIES_WINDOW:
                break
            del series[key]

    def _send(self, coro: Any) -> None:
        if self.client is None:
            coro.close()
            return
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _create(self, body: Obj) -> None:
        try:
            assert self.client is not None
            await self.client.create(EVENTS_V1, body, namespace=body["metadata"]["namespace"])
        except Exception as exc:  # noqa: BLE001 - events are best effort, as upstream's
            log.warning("could not record event %s/%s: %s", body["metadata"]["namespace"], body["reason"], exc)

    async def _patch(self, name: str, namespace: str, patch: Obj) -> None:
        try:
            assert self.client is not None
            await self.client.patch(EVENTS_V1, name, patch, namespace=namespace)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not update event %s/%s: %s", namespace, name, exc)
