"""Stored objects in the version a request names, and request objects in the version they are stored.

Two cases need it: custom resources served in several versions (`crds/output.py`), and built-in
resources kept in another resource's storage (`registry.COHABITING`: events.k8s.io Events are
stored as core/v1 Events, `kinds/event_shapes.py`). Everything else passes through as stored bytes.
The verb handlers call `stored_bytes` (get, create, update, patch), `stored_object` (delete,
watch frames), `page` (list) on the way out; `update.write` wraps every write with
`requested_object` (the current object a PUT or PATCH works on) and `to_storage`; create uses
`to_storage` too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import msgspec

from apiserver.crds import output as crd_output
from apiserver.kinds import event_shapes

if TYPE_CHECKING:
    from apiserver.context import Endpoint
    from apiserver.listing import Page

Convert = Callable[[dict[str, Any]], dict[str, Any]]

# (group, resource) of a cohabiting row → (its shape → storage shape, storage shape → its shape).
_COHABITING: dict[tuple[str, str], tuple[Convert, Convert]] = {
    ("events.k8s.io", "events"): (event_shapes.to_core, event_shapes.to_events_v1),
}


def _converters(ep: "Endpoint") -> tuple[Convert, Convert] | None:
    if ep.resource.stored_as is None:
        return None
    return _COHABITING[(ep.resource.group, ep.resource.resource)]


def to_storage(ep: "Endpoint", obj: dict[str, Any]) -> dict[str, Any]:
    """A request's object (in the request's version) as it is stored."""
    converters = _converters(ep)
    return converters[0](obj) if converters is not None else obj


def requested_object(ep: "Endpoint", obj: dict[str, Any]) -> dict[str, Any]:
    """A stored built-in object in the request's version (custom resources: see `stored_object`)."""
    converters = _converters(ep)
    return converters[1](obj) if converters is not None and isinstance(obj, dict) else obj


def stored_object(ep: "Endpoint", obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` (decoded from storage) as the request's version."""
    return crd_output.stored_object(ep, requested_object(ep, obj))


def stored_bytes(ep: "Endpoint", raw: bytes) -> bytes:
    converters = _converters(ep)
    if converters is None or not raw:
        return crd_output.stored_bytes(ep, raw)
    return msgspec.json.encode(converters[1](msgspec.json.decode(raw)))


def page(ep: "Endpoint", result: "Page") -> "Page":
    """A LIST page with every record (and decoded object) in the request's version."""
    converters = _converters(ep)
    if converters is None:
        return crd_output.page(ep, result)
    result.records = [r._replace(value=stored_bytes(ep, r.value)) for r in result.records]
    if result.objects is not None:
        result.objects = [converters[1](obj) for obj in result.objects]
    return result
