"""The Event printer, shared by core/v1 and events.k8s.io/v1 Events (upstream `printEvent`).

Upstream keeps one internal Event type for both APIs, so an events.k8s.io object is first read
through its own field names (regarding, note, deprecatedSource, deprecated*Timestamp, ...) into the
core/v1 shape. Owns LAST SEEN (series, then lastTimestamp, firstTimestamp, eventTime), OBJECT,
SOURCE and COUNT. Called through `apiserver/printers/__init__.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers import cells
from apiserver.printers.printer import Doc, Printer, col


def as_core_event(obj: dict[str, Any]) -> dict[str, Any]:
    """The core/v1 view of an Event from either API group."""
    if not str(obj.get("apiVersion", "")).startswith("events.k8s.io/") and "regarding" not in obj:
        return obj
    return {
        "metadata": obj.get("metadata") or {},
        "involvedObject": obj.get("regarding") or {},
        "reason": obj.get("reason", ""),
        "message": obj.get("note", ""),
        "type": obj.get("type", ""),
        "source": obj.get("deprecatedSource") or {},
        "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
        "lastTimestamp": obj.get("deprecatedLastTimestamp"),
        "count": obj.get("deprecatedCount"),
        "eventTime": obj.get("eventTime"),
        "series": obj.get("series"),
        "reportingComponent": obj.get("reportingController", ""),
        "reportingInstance": obj.get("reportingInstance", ""),
    }


def event_source(event: dict[str, Any]) -> str:
    """Upstream `formatEventSource`: component (or reporting controller), then `, host` if any."""
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return f"{component}, {instance}" if instance else component


def _event(obj: dict[str, Any], now: datetime) -> list[Any]:
    event = as_core_event(obj)
    if cells.parse_time(event.get("firstTimestamp")) is None:
        first_seen = cells.since(event.get("eventTime"), now)
    else:
        first_seen = cells.since(event["firstTimestamp"], now)
    last_seen = first_seen if cells.parse_time(event.get("lastTimestamp")) is None else cells.since(event["lastTimestamp"], now)
    count = cells.integer(event.get("count"))
    series = event.get("series")
    if series is not None:
        last_seen = cells.since(series.get("lastObservedTime"), now)
        count = cells.integer(series.get("count"))
    elif count == 0:
        # Singleton events of the new API carry no count.
        count = 1
    involved = event.get("involvedObject") or {}
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    return [
        last_seen, event.get("type", ""), event.get("reason", ""), target, involved.get("fieldPath", ""),
        event_source(event), str(event.get("message", "")).strip(), first_seen, count, cells.name(obj),
    ]


EVENT_COLUMNS = (
    col("Last Seen", Doc("core.v1.Event", "lastTimestamp")),
    col("Type", Doc("core.v1.Event", "type")),
    col("Reason", Doc("core.v1.Event", "reason")),
    col("Object", Doc("core.v1.Event", "involvedObject")),
    col("Subobject", Doc("core.v1.ObjectReference", "fieldPath"), priority=1),
    col("Source", Doc("core.v1.Event", "source"), priority=1),
    col("Message", Doc("core.v1.Event", "message")),
    col("First Seen", Doc("core.v1.Event", "firstTimestamp"), priority=1),
    col("Count", Doc("core.v1.Event", "count"), priority=1),
    col("Name", Doc("meta.v1.ObjectMeta", "name"), priority=1, format="name"),
)

PRINTERS = {
    ("", "events"): Printer(EVENT_COLUMNS, _event),
    ("events.k8s.io", "events"): Printer(EVENT_COLUMNS, _event),
}
