"""GET of one object: the stored bytes as they are, or a Table / PartialObjectMetadata when asked.

Called by `app.py` for verb `get` (also `status` and other plain subresources that show the whole
object). Next step for writes: `handlers/update.py`.
"""

from __future__ import annotations

from aiohttp import web

from apiserver import conversion, responses, tables
from apiserver.context import Endpoint


async def handle(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    name = ep.request_info.name
    record = ep.stored(name)
    wanted = responses.wants(request)
    value = conversion.stored_bytes(ep, record.value)  # the requested version (custom resources, events.k8s.io)
    if wanted.form == "object":
        return responses.bytes_response(value)
    obj = responses.decode(value)
    if wanted.form == "Table":
        table = tables.render(ep.resource.group, ep.resource.resource, [obj], include_object=wanted.include_object,
                              list_meta={"resourceVersion": obj["metadata"].get("resourceVersion", "")})
        return responses.json_response(table)
    return responses.json_response(responses.partial_metadata(obj))
