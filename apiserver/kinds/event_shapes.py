"""The two shapes of one Event: core/v1 (how every Event is stored) and events.k8s.io/v1.

kube-apiserver keeps both APIs' Events as one set of objects (/registry/events/<ns>/<name>,
core/v1 is the storage version) and converts through its internal Event on every read and write
(pkg/apis/events/v1 conversion). These two pure functions are that conversion, field by field,
and fill the fields Go always serializes (structs and timestamps without omitempty: `{}`, `null`,
core's reportingComponent/reportingInstance strings). Called by `apiserver/conversion.py`.
"""

from __future__ import annotations

from typing import Any

CORE_API_VERSION = "v1"
EVENTS_API_VERSION = "events.k8s.io/v1"

# events.k8s.io/v1 name → core/v1 name; fields not listed (metadata, reason, type, eventTime,
# series, action, related, reportingInstance) keep their names.
_TO_CORE = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_TO_EVENTS = {core: events for events, core in _TO_CORE.items()}

# Fields Go writes even when empty, with the value it writes (no omitempty, or a struct).
_CORE_ALWAYS = {"involvedObject": {}, "source": {}, "firstTimestamp": None, "lastTimestamp": None,
                "eventTime": None, "reportingComponent": "", "reportingInstance": ""}
_EVENTS_ALWAYS = {"regarding": {}, "deprecatedSource": {}, "deprecatedFirstTimestamp": None,
                  "deprecatedLastTimestamp": None, "eventTime": None}


def _renamed(obj: dict[str, Any], names: dict[str, str], api_version: str,
             always: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "Event", "apiVersion": api_version}
    for key, value in obj.items():
        if key in ("kind", "apiVersion"):
            continue
        name = names.get(key, key)
        if value in ("", 0, None) and name not in always and name != "metadata":
            continue  # omitempty in the target type
        out[name] = value
    for key, empty in always.items():
        out.setdefault(key, {} if isinstance(empty, dict) else empty)
    return out


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as the core/v1 Event it is stored as (a new dict)."""
    if event.get("apiVersion") == CORE_API_VERSION:
        return event
    return _renamed(event, _TO_CORE, CORE_API_VERSION, _CORE_ALWAYS)


def to_events_v1(event: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 shows it (a new dict)."""
    if event.get("apiVersion") == EVENTS_API_VERSION:
        return event
    out = _renamed(event, _TO_EVENTS, EVENTS_API_VERSION, _EVENTS_ALWAYS)
    for key in ("reportingController", "reportingInstance"):
        if out.get(key) == "":
            del out[key]  # omitempty in events.k8s.io/v1, plain strings in core/v1
    return out
