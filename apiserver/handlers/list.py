"""LIST of a collection: stored bytes concatenated into a List, or a Table when asked.

Selection (selectors, pagination, resourceVersion rules) is `listing.py`'s; this module only shapes
the response. Called by `app.py` for verb `list`.
"""

from __future__ import annotations

from aiohttp import web

from apiserver import listing, responses, tables
from apiserver.context import Endpoint
from apiserver.crds import output as crd_output


async def handle(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    sel = listing.selection(ep, request.query)
    wanted = responses.wants(request)
    page = crd_output.page(ep, listing.collect(ep, sel, decode=wanted.form != "object"))
    meta = listing.list_metadata(page)
    if sel.shard is not None:
        meta["shardInfo"] = {"selector": str(sel.shard)}
    if wanted.form == "object":
        body = responses.list_body(ep.resource.list_kind, ep.resource.api_version, meta,
                                   [r.value for r in page.records])
        return responses.bytes_response(body)
    objects = page.objects or []
    if wanted.form == "Table":
        table = tables.render(ep.resource.group, ep.resource.resource, objects,
                              include_object=wanted.include_object, list_meta=meta)
        return responses.json_response(table)
    return responses.json_response({
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "items": [responses.partial_metadata(obj) for obj in objects],
    })
