"""PUT of one object (or of its status and other whole-object subresources).

The client's object replaces the stored one through `store.guaranteed_update`, after
`writing.prepare_update` ran the strategy's update hooks against the current object. A
`metadata.resourceVersion` in the body is a precondition (409 Conflict when stale); without one the
update is unconditional, as for every built-in kind. A few kinds may be created by PUT (leases,
events, endpoints: kube's AllowCreateOnUpdate). Called by `app.py` for verb `update`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import msgspec
from aiohttp import web

from apiserver import allocations, bodies, conversion, deletion, errors, responses, writing
from apiserver.context import Endpoint
from apiserver.strategy import Strategy
from storage import errors as storage_errors

CREATE_ON_UPDATE = frozenset({
    ("", "events"), ("events.k8s.io", "events"), ("coordination.k8s.io", "leases"), ("", "endpoints"),
})


class DryRunResult(Exception):
    """Stops a guaranteed update before it writes, carrying the object it would have written."""

    def __init__(self, obj: dict[str, Any], created: bool = False) -> None:
        self.obj = obj
        self.created = created


def check_name(ep: Endpoint, obj: dict[str, Any]) -> None:
    name = ep.request_info.name
    meta = obj.setdefault("metadata", {})
    if meta.get("name") and meta["name"] != name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
    meta["name"] = name


def copy(obj: dict[str, Any]) -> dict[str, Any]:
    return msgspec.json.decode(msgspec.json.encode(obj))


async def handle(ep: Endpoint, request: web.Request, *, strategy: Strategy | None = None,
                 subresource: str = "") -> web.StreamResponse:
    new = await bodies.read_object(request, ep.resource.kind)
    check_name(ep, new)
    return await replace(ep, request, new, strategy=strategy, subresource=subresource)


async def replace(ep: Endpoint, request: web.Request, new: dict[str, Any], *, strategy: Strategy | None = None,
                  subresource: str = "") -> web.StreamResponse:
    """Write `new` over the stored object (shared with the scale subresource)."""
    name = ep.request_info.name
    expected = writing.expected_revision(new)
    dry_run = writing.dry_run(request.query)
    agent = request.headers.get("User-Agent", "")
    allow_create = not subresource and (ep.resource.group, ep.resource.resource) in CREATE_ON_UPDATE
    outcome = Outcome()

    def try_update(current: dict[str, Any] | None) -> dict[str, Any]:
        candidate = copy(new)
        if current is None:
            if not allow_create:
                raise ep.not_found(name)
            outcome.warnings = writing.prepare_create(ep, candidate, request.query, agent)
            outcome.created = True
        else:
            if expected is not None and str(expected) != current["metadata"].get("resourceVersion"):
                raise errors.conflict(ep.resource.resource, ep.resource.group, name, errors.MODIFIED)
            outcome.warnings = writing.prepare_update(ep, candidate, current, request.query, agent,
                                                      strategy=strategy, subresource=subresource)
            outcome.created = False
        if dry_run:
            raise DryRunResult(candidate, outcome.created)
        return candidate

    return await write(ep, name, try_update, outcome, allow_create=allow_create)


@dataclass
class Outcome:
    """What a `try_update` learned while it ran: the warnings to send and whether it created."""

    warnings: list[str] = field(default_factory=list)
    created: bool = False


async def write(ep: Endpoint, name: str, try_update: Callable[[dict[str, Any] | None], dict[str, Any]],
                outcome: Outcome, *, allow_create: bool) -> web.StreamResponse:
    """Run `try_update` inside the store's retrying update and answer as kube does (PUT and PATCH).

    `try_update` sees and returns objects in the request's version; storage keeps its own."""

    def stored(current: dict[str, Any] | None) -> dict[str, Any]:
        shown = conversion.requested_object(ep, current) if current is not None else None
        return conversion.to_storage(ep, try_update(shown))

    try:
        record = await ep.server.store.guaranteed_update(ep.key(name), stored, allow_create=allow_create)
    except DryRunResult as result:
        return responses.json_response(result.obj, status=201 if result.created else 200,
                                       warnings=outcome.warnings)
    except storage_errors.StorageError as exc:
        raise errors.from_storage(exc, ep.resource.resource, ep.resource.group, name) from None
    finally:
        allocations.release(ep, name)
    await deletion.finish_if_finalized(ep, record)
    return responses.bytes_response(conversion.stored_bytes(ep, record.value), status=201 if outcome.created else 200,
                                    warnings=outcome.warnings)
