"""LIST of a collection: stored bytes concatenated into a List, or a Table when asked.

Selection (selectors, pagination, resourceVersion rules) is `listing.py`'s; this module only shapes
the response. A large unpaginated List is streamed in pages read at one revision, so the server
never holds the whole body (a List of 100k pods is 214 MB: built whole it peaked near 2 GB RSS).
Called by `app.py` for verb `list`.
"""

from __future__ import annotations

import dataclasses

from aiohttp import web

from apiserver import listing, responses, tables
from apiserver.context import Endpoint
from apiserver.crds import output as crd_output


STREAM_PAGE = 1000  # objects per page of a streamed List


async def handle(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    await listing.catch_up(ep, request.query)
    sel = listing.selection(ep, request.query)
    wanted = responses.wants(request)
    if wanted.form == "object" and not sel.limit and sel.shard is None:  # a shard is read whole (listing)
        first = listing.collect(ep, dataclasses.replace(sel, limit=STREAM_PAGE))
        if first.continue_token:
            return await _stream(ep, request, sel, first)
        page = crd_output.page(ep, first)
    else:
        # Metadata-only lists need no decoded objects unless a selector must look inside them.
        decode = wanted.form == "Table"
        page = crd_output.page(ep, listing.collect(ep, sel, decode=decode))
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
    items = [responses.partial_metadata(obj) for obj in page.objects] if page.objects is not None \
        else [responses.partial_metadata_of(record.value) for record in page.records]
    return responses.json_response({
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "items": items,
    })


async def _stream(ep: Endpoint, request: web.Request, sel: listing.Selection,
                  page: listing.Page) -> web.StreamResponse:
    """Write the List page by page; every page is read at the first page's revision."""
    meta: dict[str, object] = {"resourceVersion": str(page.revision)}
    if sel.shard is not None:
        meta["shardInfo"] = {"selector": str(sel.shard)}
    head = responses.list_body(ep.resource.list_kind, ep.resource.api_version, meta, [])
    response = web.StreamResponse(headers={"Content-Type": responses.JSON_TYPE})
    response.enable_chunked_encoding()
    await response.prepare(request)
    await response.write(head[:-2])  # everything up to and including `"items":[`
    separator = b""
    while True:
        values = [record.value for record in crd_output.page(ep, page).records]
        if values:
            await response.write(separator + b",".join(values))
            separator = b","
        if not page.continue_token:
            break
        page = listing.collect(ep, dataclasses.replace(sel, limit=STREAM_PAGE, revision=None,
                                                       continue_token=page.continue_token))
    await response.write(b"]}")
    await response.write_eof()
    return response
