"""POST to a collection: admit the object, store it, answer 201 with what was stored.

Order (kube's rest.BeforeCreate + admission): decode → `writing.prepare_create` (namespace
lifecycle, admission, strategy, managedFields) → store.create (or nothing, for dryRun=All).
Names from `generateName` are retried on a collision, as 1.36 does. Called by `app.py` for verb
`create` on a stored resource.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from apiserver import allocations, bodies, conversion, errors, responses, writing
from apiserver.context import Endpoint
from storage import errors as storage_errors

_NAME_RETRIES = 7


async def handle(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    obj = await bodies.read_object(request, ep.resource.kind)
    dry_run = writing.dry_run(request.query)
    try:
        warnings = writing.prepare_create(ep, obj, request.query, request.headers.get("User-Agent", ""))
        if dry_run:
            return responses.json_response(obj, status=201, warnings=warnings)
        return await _store(ep, obj, warnings)
    finally:
        allocations.release(ep, (obj.get("metadata") or {}).get("name", ""))


async def _store(ep: Endpoint, obj: dict[str, Any], warnings: list[str]) -> web.StreamResponse:
    """Create, drawing a new generated name on a collision when the name came from generateName."""
    meta = obj["metadata"]
    generate = bool(meta.get("generateName")) and meta["name"].startswith(meta["generateName"])
    for attempt in range(_NAME_RETRIES + 1):
        try:
            record = await ep.server.store.create(ep.key(meta["name"]), conversion.to_storage(ep, obj))
            return responses.bytes_response(conversion.stored_bytes(ep, record.value), status=201, warnings=warnings)
        except storage_errors.KeyExists as exc:
            if not generate or attempt == _NAME_RETRIES:
                raise errors.from_storage(exc, ep.resource.resource, ep.resource.group, meta["name"]) from None
            meta["name"] = writing.generated_name(meta["generateName"])
        except storage_errors.StorageError as exc:
            raise errors.from_storage(exc, ep.resource.resource, ep.resource.group, meta["name"]) from None
    raise AssertionError("unreachable")
