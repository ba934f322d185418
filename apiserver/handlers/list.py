"""LIST of a collection: stored bytes concatenated into a List, or a Table when asked.

Selection (selectors, pagination, resourceVersion rules) is `listing.py`'s; this module only shapes
the response. A large unpaginated List, or a large whole shard, is streamed in pages read at one
revision, so the server never holds the whole body (a List of 100k pods is 214 MB: built whole it
peaked near 2 GB RSS) and the client reads while the server reads LMDB.
Called by `app.py` for verb `list`.
"""

from __future__ import annotations

import asyncio

import dataclasses
from typing import Iterator

from aiohttp import web

from apiserver import conversion, listing, responses, tables
from apiserver.context import Endpoint


STREAM_PAGE = 1000  # objects per page of a streamed List


async def handle(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    await listing.catch_up(ep, request.query)
    sel = listing.selection(ep, request.query)
    wanted = responses.wants(request)
    plan = listing.shard_plan(ep, sel) if wanted.form == "object" else None
    if plan is not None:
        if len(plan.members) > STREAM_PAGE:
            steps = range(0, len(plan.members), STREAM_PAGE)
            return await _stream(ep, request, sel, plan.revision, (
                listing.shard_page(ep, sel, plan.members[i:i + STREAM_PAGE], plan.revision) for i in steps))
        page = conversion.page(ep, listing.shard_page(ep, sel, plan.members, plan.revision))
    elif wanted.form == "object" and not sel.limit and sel.shard is None:
        first = listing.collect(ep, dataclasses.replace(sel, limit=STREAM_PAGE))
        if first.continue_token:
            return await _stream(ep, request, sel, first.revision, _pages_from(ep, sel, first))
        page = conversion.page(ep, first)
    else:
        # Metadata-only lists need no decoded objects unless a selector must look inside them.
        decode = wanted.form == "Table"
        page = conversion.page(ep, listing.collect(ep, sel, decode=decode))
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


def _pages_from(ep: Endpoint, sel: listing.Selection, first: listing.Page) -> Iterator[listing.Page]:
    """The first page, then each next one through its continue token (so at the first's revision)."""
    page = first
    yield page
    while page.continue_token:
        page = listing.collect(ep, dataclasses.replace(sel, limit=STREAM_PAGE, revision=None,
                                                       continue_token=page.continue_token))
        yield page


async def _stream(ep: Endpoint, request: web.Request, sel: listing.Selection, revision: int,
                  pages: Iterator[listing.Page]) -> web.StreamResponse:
    """Write the List page by page; every page is read at `revision`, when it is asked for."""
    meta: dict[str, object] = {"resourceVersion": str(revision)}
    if sel.shard is not None:
        meta["shardInfo"] = {"selector": str(sel.shard)}
    head = responses.list_body(ep.resource.list_kind, ep.resource.api_version, meta, [])
    response = web.StreamResponse(headers={"Content-Type": responses.JSON_TYPE})
    response.enable_chunked_encoding()
    await response.prepare(request)
    await response.write(head[:-len(responses.LIST_END)])  # everything up to and including `"items":[`
    separator = b""
    for index, page in enumerate(pages):
        if index:
            # A write below the buffer's high-water mark does not yield: without this the whole
            # List would run in one loop step, ahead of everything queued behind it (a lease
            # renewal too), and API Priority and Fairness could not spread a LIST flood's pages.
            await asyncio.sleep(0)
        values = [record.value for record in conversion.page(ep, page).records]
        if values:
            await response.write(separator + b",".join(values))
            separator = b","
    await response.write(responses.LIST_END)
    await response.write_eof()
    return response
