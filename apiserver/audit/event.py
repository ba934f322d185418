"""One audit.k8s.io/v1 Event as kube-apiserver writes it: keys in the Go struct's order, empty
fields left out, MicroTime timestamps (`2006-01-02T15:04:05.000000Z`). Called by `recorder.py`."""

from __future__ import annotations

import datetime
from typing import Any

from apiserver.requestinfo import RequestInfo


_second: list[Any] = [-1, ""]  # the last whole second formatted, and its text: most events share it


def micro_time(at: float) -> str:
    second = int(at)
    if second != _second[0]:
        _second[0] = second
        _second[1] = datetime.datetime.fromtimestamp(second, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{_second[1]}.{int((at - second) * 1e6):06d}Z"


def object_ref(info: RequestInfo) -> dict[str, Any] | None:
    """ObjectReference: resource, namespace, name, uid, apiGroup, apiVersion, resourceVersion,
    subresource (omitempty each); none for a non-resource request."""
    if not info.is_resource:
        return None
    ref: dict[str, Any] = {}
    for key, value in (("resource", info.resource), ("namespace", info.namespace), ("name", info.name),
                       ("apiGroup", info.group), ("apiVersion", info.version), ("subresource", info.subresource)):
        if value:
            ref[key] = value
    return ref


def fill_ref_from_object(ref: dict[str, Any] | None, obj: Any) -> None:
    """upstream's LogRequestObject: a create names its object only in the body."""
    if ref is None or not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return
    meta = obj["metadata"]
    for key in ("namespace", "name", "uid", "resourceVersion"):
        if not ref.get(key) and isinstance(meta.get(key), str) and meta[key]:
            ref[key] = meta[key]
    if list(ref) != _REF_ORDER:  # keep Go's field order after additions
        ordered = {key: ref[key] for key in _REF_ORDER if key in ref}
        ref.clear()
        ref.update(ordered)


_REF_ORDER = ["resource", "namespace", "name", "uid", "apiGroup", "apiVersion", "resourceVersion", "subresource"]


def response_status(code: int, status: dict[str, Any] | None = None) -> dict[str, Any]:
    """The bounded copy of a Status upstream keeps (status, message, reason, details, code); a
    success is only its code."""
    if status is None:
        return {"metadata": {}, "code": code}
    kept: dict[str, Any] = {"metadata": {}}
    for key in ("status", "message", "reason", "details"):
        if status.get(key):
            kept[key] = status[key]
    kept["code"] = code
    return kept


def without_managed_fields(obj: Any) -> Any:
    """omitManagedFields: metadata.managedFields left out of an object and of a list's items."""
    if not isinstance(obj, dict):
        return obj
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    items = obj.get("items")
    if isinstance(items, list):
        obj = {**obj, "items": [without_managed_fields(item) for item in items]}
    return obj
