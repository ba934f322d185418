"""Events, core/v1 and events.k8s.io/v1: the legacy checks for both, the strict ones for v1.

Upstream validates the one internal Event for both APIs, so causes name internal fields
(`involvedObject`, `message`, `source`, …) even for events.k8s.io requests, whose fields are
mapped first (regarding→involvedObject, note→message, deprecated*→…). Core events only need a
path-segment name; events.k8s.io/v1 ones a DNS subdomain, eventTime, a Normal/Warning type, and
unchanging fields on update. Upstream: pkg/apis/core/validation/events.go.
"""

from __future__ import annotations

from typing import Any

from apiserver import validation as v
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

_V1_TO_INTERNAL = {"regarding": "involvedObject", "note": "message", "deprecatedSource": "source",
                   "deprecatedFirstTimestamp": "firstTimestamp", "deprecatedLastTimestamp": "lastTimestamp",
                   "deprecatedCount": "count"}
# core/v1 serializes the internal ReportingController as `reportingComponent`.
_CORE_TO_INTERNAL = {"reportingComponent": "reportingController"}
_UPDATE_IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count",
                     "reason", "type", "eventTime", "action", "related", "reportingController", "reportingInstance")
_LIMITS = (("reportingInstance", 128), ("action", 128), ("reason", 128))


def internal(event: Obj, *, from_v1: bool) -> dict[str, Any]:
    """The event with internal field names (core/v1's, but reportingController as in Go)."""
    names = _V1_TO_INTERNAL if from_v1 else _CORE_TO_INTERNAL
    return {names.get(k, k): val for k, val in event.items()}


def legacy(event: Obj) -> Causes:
    causes: Causes = []
    namespace = (event.get("metadata") or {}).get("namespace") or ""
    involved_namespace = (event.get("involvedObject") or {}).get("namespace") or ""
    mismatch = v.invalid("involvedObject.namespace", involved_namespace, "does not match event.namespace")
    if not event.get("eventTime"):
        if not involved_namespace:
            if namespace not in ("", "default"):
                causes.append(mismatch)
        elif namespace != involved_namespace:
            causes.append(mismatch)
    else:
        if not involved_namespace and namespace not in ("default", "kube-system"):
            causes.append(mismatch)
        controller = event.get("reportingController") or ""
        if not controller:
            causes.append(v.required("reportingController"))
        causes += [v.invalid("reportingController", controller, m) for m in v.qualified_name(controller)]
        for key, limit in _LIMITS:
            if not event.get(key):
                causes.append(v.required(key))
            if len(event.get(key) or "") > limit:
                causes.append(v.invalid(key, "", f"can have at most {limit} characters"))
        if len(event.get("message") or "") > 1024:
            causes.append(v.invalid("message", "", "can have at most 1024 characters"))
    causes += [v.invalid("namespace", namespace, m) for m in v.dns1123_subdomain(namespace)]
    return causes


def _series(event: Obj) -> Causes:
    series = event.get("series")
    if series is None:
        return []
    causes: Causes = []
    if (series.get("count") or 0) < 2:
        causes.append(v.invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        causes.append(v.required("series.lastObservedTime"))
    return causes


class CoreEventStrategy(DefaultingStrategy):
    """core/v1 events: generic metadata rules with a path-segment name, then the legacy checks."""

    def validate(self, obj: Obj) -> Causes:
        return super().validate(obj) + legacy(internal(obj, from_v1=False))

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {}) + self.validate(new)


class EventsV1Strategy(DefaultingStrategy):
    """events.k8s.io/v1: strict validation on create and update."""

    def validate(self, obj: Obj) -> Causes:
        event = internal(obj, from_v1=True)
        causes = legacy(event) + super().validate(obj) + _series(event)
        if not event.get("eventTime"):
            causes.append(v.required("eventTime"))
        if event.get("type") not in ("Normal", "Warning"):
            causes.append(v.invalid("type", "", f"has invalid value: {event.get('type') or ''}"))
        for key in ("firstTimestamp", "lastTimestamp", "count"):
            if event.get(key):
                causes.append(v.invalid(key, "", "needs to be unset"))
        source = event.get("source") or {}
        if source.get("component") or source.get("host"):
            causes.append(v.invalid("source", "", "needs to be unset"))
        return causes

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        event, old_event = internal(new, from_v1=True), internal(old, from_v1=True)
        causes = legacy(event) + v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        if event.get("series") != old_event.get("series"):
            causes += _series(event)
        for key in _UPDATE_IMMUTABLE:
            causes += v.immutable(key, event.get(key), old_event.get(key))
        return causes
