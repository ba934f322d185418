"""Custom resources on the way out: the stored object in the requested version, defaults applied.

Conversion strategy `None` changes only `apiVersion`, so an object stored through any served
version is shown in the version the client asked for; defaults of that version's schema are
applied on every read, as upstream does when it decodes from storage, so objects stored before a
default existed gain it. Built-in kinds pass through untouched (bytes are served as stored).
The verb handlers call these one-line hooks: `stored_bytes` (get, create, update, patch),
`stored_object` (delete, patch's current object, watch frames) and `page` (list).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from apiserver.crds import defaulting, served

if TYPE_CHECKING:
    from apiserver.context import Endpoint
    from apiserver.listing import Page


def _target(ep: "Endpoint") -> Any:
    """The CRD version the request names, or None when nothing needs doing."""
    if ep.resource.builtin:
        return None
    definition = served.lookup(ep.resource.group, ep.resource.resource)
    if definition is None:
        return None
    version = definition.version(ep.resource.version)
    if version is None:
        return None
    if len(definition.versions) == 1 and not version.has_defaults:
        return None  # one version, nothing to default: the stored bytes are already the answer
    return version


def _convert(obj: dict[str, Any], api_version: str, version: Any) -> bool:
    changed = False
    if obj.get("apiVersion") != api_version:
        obj["apiVersion"] = api_version
        changed = True
    if version.has_defaults:
        changed = defaulting.apply(obj, version.schema) or changed
    return changed


def stored_object(ep: "Endpoint", obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` (decoded from storage) as the request's version; converted in place and returned."""
    version = _target(ep)
    if version is not None and isinstance(obj, dict):
        _convert(obj, ep.resource.api_version, version)
    return obj


def stored_bytes(ep: "Endpoint", raw: bytes) -> bytes:
    version = _target(ep)
    if version is None or not raw:
        return raw
    obj = msgspec.json.decode(raw)
    if not _convert(obj, ep.resource.api_version, version):
        return raw
    return msgspec.json.encode(obj)


def page(ep: "Endpoint", result: "Page") -> "Page":
    """A LIST page with every record (and decoded object) in the request's version."""
    version = _target(ep)
    if version is None:
        return result
    result.records = [r._replace(value=stored_bytes(ep, r.value)) for r in result.records]
    if result.objects is not None:
        for obj in result.objects:
            _convert(obj, ep.resource.api_version, version)
    return result
