"""ComponentStatus (v1, deprecated since 1.19): what this API server depends on, probed on every read.

Upstream probes the scheduler's and controller-manager's `/healthz` on fixed local ports and asks
each etcd. haru reports what it really has instead: `etcd-0` is its LMDB store (the same read as
`/livez/etcd`), and every co-process `haru up` runs registers a probe under the name upstream
gives that component (`controller-manager` for haru's controllers; a scheduler, once haru has
one, as `scheduler`). Nothing is listed that haru does not run. Each probe answers a condition
status (`True`, `False`, `Unknown`), a message and an error, as upstream's `DoServerCheck` does.
`app.py` sends GETs of `componentstatuses` here; `cluster/cli.py` registers the co-processes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from apiserver import errors, health, listing, responses, tables
from apiserver.context import Endpoint, Server

# (condition status, message, error) of one component right now.
Probe = Callable[[], Awaitable[tuple[str, str, str]]]
_PROBES = "componentstatus_probes"
STORE = "etcd-0"


def register(server: Server, name: str, probe: Probe) -> None:
    """Report `name` from now on, as `probe()` finds it."""
    server.extra.setdefault(_PROBES, {})[name] = probe


def unregister(server: Server, name: str) -> None:
    server.extra.get(_PROBES, {}).pop(name, None)


def _probes(server: Server) -> dict[str, Probe]:
    async def store() -> tuple[str, str, str]:
        reason = health.store_answers(server)
        return ("True", "ok", "") if reason is None else ("False", "", reason)
    return {STORE: store, **server.extra.get(_PROBES, {})}


async def _status(name: str, probe: Probe) -> dict[str, Any]:
    try:
        status, message, error = await probe()
    except Exception as exc:  # noqa: BLE001 - a probe that cannot answer says nothing of health
        status, message, error = "Unknown", "", f"{type(exc).__name__}: {exc}"
    condition = {"type": "Healthy", "status": status}
    if message:
        condition["message"] = message
    if error:
        condition["error"] = error
    return {"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": name}, "conditions": [condition]}


async def get(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    name = ep.request_info.name
    probe = _probes(ep.server).get(name)
    if probe is None:
        # Upstream's REST storage returns a plain error here, which the server sends as a 500
        # with no reason.
        raise errors.APIError(500, "", f"Component not found: {name}")
    return _respond(ep, request, await _status(name, probe), single=True)


async def list_(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    sel = listing.selection(ep, {k: v for k, v in request.query.items() if k in ("labelSelector", "fieldSelector")})
    probes = _probes(ep.server)
    found = await asyncio.gather(*(_status(name, probe) for name, probe in probes.items()))
    # Items of a typed list carry no kind or apiVersion of their own on upstream's wire.
    items = [{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")} for obj in found if sel.matches(obj)]
    return _respond(ep, request, {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items})


def _respond(ep: Endpoint, request: web.Request, body: dict[str, Any], *, single: bool = False) -> web.StreamResponse:
    warnings = [ep.resource.deprecation_warning] if ep.resource.deprecation_warning else []
    wanted = responses.wants(request)
    objects = [body] if single else body["items"]
    if wanted.form == "Table":
        body = tables.render(ep.resource.group, ep.resource.resource, objects, include_object=wanted.include_object)
    elif wanted.form != "object":
        items = [responses.partial_metadata(obj) for obj in objects]
        body = items[0] if single else {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                                        "metadata": {}, "items": items}
    return responses.json_response(body, warnings=warnings)
