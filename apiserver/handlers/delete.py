"""DELETE of one object, and DELETE of a collection (DeleteCollection).

The rules (preconditions, finalizers, grace periods, what the answer is) are `deletion.py`'s; this
module reads the options and the selection and shapes the response. DeleteCollection lists with
the request's selectors, deletes each listed object with the same options, and answers the List
it deleted from — the items as they were listed, whatever each delete did — as the generic
store's DeleteCollection does for every resource (its OpenAPI says Status; clients ignore the
body). Dry runs answer the same shapes. Called by `app.py` for verbs `delete` and
`deletecollection`.
"""

from __future__ import annotations

from aiohttp import web

from apiserver import conversion, deletion, errors, listing, responses
from apiserver.context import Endpoint


def _admit(ep: Endpoint, name: str) -> None:
    """A kind's own refusals of a DELETE, before anything is looked up (upstream runs mutating
    admission such as NamespaceLifecycle first): the strategy's `admit_delete`, where it has one."""
    admit = getattr(ep.strategy, "admit_delete", None)
    if admit is not None:
        admit(name)


async def handle(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    opts = await deletion.read_options(request)
    _admit(ep, ep.request_info.name)
    obj, gone = await deletion.delete(ep, ep.request_info.name, opts)
    obj = conversion.stored_object(ep, obj)  # the requested version (custom resources, events.k8s.io)
    body = deletion.result_body(ep, obj) if gone else obj
    return responses.json_response(body, status=deletion.status_code(opts, gone))


async def handle_collection(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    opts = await deletion.read_options(request)
    sel = listing.selection(ep, request.query)
    page = listing.collect(ep, sel, decode=True)
    for obj in page.objects or []:
        try:
            _admit(ep, obj["metadata"]["name"])
            await deletion.delete(ep, obj["metadata"]["name"], opts)
        except errors.APIError as exc:
            if exc.code != 404:  # already gone is fine: someone else finished it
                raise
    page = conversion.page(ep, page)  # the requested version (custom resources, events.k8s.io)
    body = responses.list_body(ep.resource.list_kind, ep.resource.api_version, listing.list_metadata(page),
                               [record.value for record in page.records])
    return responses.bytes_response(body)
