"""PATCH of one object, in the four media types kube accepts.

json-patch (RFC 6902), merge-patch (RFC 7386), strategic-merge-patch (built-in kinds only: merge
keys and directives from the schema) and apply-patch (server-side apply: create or merge under a
fieldManager). The patch is applied to the current object inside `store.guaranteed_update`, so a
concurrent write makes it re-apply rather than fail; then the result goes through the same update
steps as a PUT (`writing.prepare_update`). The patch algorithms themselves are `apiserver/patching/`.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from apiserver import bodies, conversion, errors, query_flags, writing
from apiserver.context import Endpoint
from apiserver.handlers import update
from apiserver.handlers.update import DryRunResult, copy
from apiserver.patching import PatchError, apply_merge, json_patch, merge_patch, strategic_merge
from apiserver.ssa import apply as ssa_apply
from apiserver.strategy import Strategy


def _parse(media: str, body: bytes) -> Any:
    try:
        if media == bodies.JSON_PATCH:
            return json_patch.parse(body)
        if media == bodies.MERGE_PATCH:
            return merge_patch.parse(body)
        if media == bodies.STRATEGIC_MERGE_PATCH:
            return strategic_merge.parse(body)
    except PatchError as exc:
        raise from_patch_error(exc) from None
    patch = bodies.decode_yaml(body)  # apply-patch+yaml: kubectl sends JSON, which is YAML too
    if not isinstance(patch, dict):
        raise errors.bad_request("error decoding YAML: the body of an apply patch must be an object")
    return patch


def from_patch_error(exc: PatchError) -> errors.APIError:
    """The Status kube answers for a patch that cannot be parsed or applied (see PatchError)."""
    return errors.APIError(exc.code, exc.reason, exc.status_message, exc.details)


def _accepted(ep: Endpoint) -> tuple[str, ...]:
    if not ep.resource.builtin:  # custom resources: no strategic merge (kube answers 415)
        return (bodies.JSON_PATCH, bodies.MERGE_PATCH, bodies.APPLY_PATCH)
    return (bodies.JSON_PATCH, bodies.MERGE_PATCH, bodies.STRATEGIC_MERGE_PATCH, bodies.APPLY_PATCH)


def _apply(ep: Endpoint, media: str, patch: Any, current: dict[str, Any]) -> dict[str, Any]:
    try:
        if media == bodies.JSON_PATCH:
            return json_patch.apply(current, patch)
        if media == bodies.MERGE_PATCH:
            return merge_patch.apply(current, patch)
        if media == bodies.STRATEGIC_MERGE_PATCH:
            return strategic_merge.apply(current, patch, ep.resource.schema or {})
        return apply_merge.apply(current, patch, ep.resource.schema)
    except PatchError as exc:
        raise from_patch_error(exc) from None


def _server_side_apply(ep: Endpoint, current: dict[str, Any] | None, config: dict[str, Any],
                       query: Any, subresource: str) -> dict[str, Any]:
    """Merge with field ownership (apiserver/ssa); the result carries its managedFields."""
    return ssa_apply.apply(current, config, query["fieldManager"], force=query_flags.enabled(query, "force"),
                           schema=ep.resource.schema, api_version=ep.resource.api_version,
                           subresource=subresource, track_status="status" not in ep.resource.subresources)


async def handle(ep: Endpoint, request: web.Request, *, strategy: Strategy | None = None,
                 subresource: str = "") -> web.StreamResponse:
    media = bodies.media_type(request)
    if media not in _accepted(ep):
        raise errors.unsupported_media_type(media, _accepted(ep))
    patch = _parse(media, await bodies.read(request))
    name = ep.request_info.name
    query = request.query
    agent = request.headers.get("User-Agent", "")
    applying = media == bodies.APPLY_PATCH
    if applying:
        if not query.get("fieldManager"):
            raise errors.APIError(422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: "
                                  "Required value: is required for apply patch")
    elif query_flags.flag(query, "force") is not None:
        raise errors.invalid("PatchOptions", "meta.k8s.io", "", [errors.field_error(
            "FieldValueForbidden", "force", "Forbidden: may not be specified for non-apply patch")])
    operation = "Apply" if applying else "Update"
    dry_run = writing.dry_run(query)
    outcome = update.Outcome()

    def try_update(current: dict[str, Any] | None) -> dict[str, Any]:
        if current is None:
            if not applying or subresource:
                raise ep.not_found(name)
            obj = copy(patch)
            obj.setdefault("metadata", {})
            if obj["metadata"].get("name", name) != name:
                raise errors.bad_request(
                    f"the name of the object ({obj['metadata']['name']}) does not match the name on the URL ({name})")
            obj["metadata"]["name"] = name
            obj = _server_side_apply(ep, None, obj, query, subresource)
            owners = obj["metadata"].get("managedFields")
            outcome.warnings = writing.prepare_create(ep, obj, query, agent, operation=operation)
            if owners:  # prepare_create drops what a client sent; these are the apply's own
                obj["metadata"]["managedFields"] = owners
            outcome.created = True
        else:
            current = conversion.stored_object(ep, current)  # patch the requested version (custom resources, events.k8s.io)
            before_rv = current["metadata"].get("resourceVersion")
            # Every patch algorithm works on its own copy of `current` (which prepare_update reads
            # as the old object afterwards): no copy of ours on top.
            obj = _server_side_apply(ep, current, patch, query, subresource) if applying \
                else _apply(ep, media, patch, current)
            owners = obj.get("metadata", {}).get("managedFields") if applying and isinstance(obj, dict) else None
            if not isinstance(obj, dict):
                raise errors.APIError(422, "Invalid", "the patched object is not a JSON object")
            meta = obj.setdefault("metadata", {})
            if meta.get("resourceVersion") and meta["resourceVersion"] != before_rv:
                raise errors.conflict(ep.resource.resource, ep.resource.group, name, errors.MODIFIED)
            outcome.warnings = writing.prepare_update(ep, obj, current, query, agent, strategy=strategy,
                                              subresource=subresource, operation=operation)
            if applying and not owners:  # nobody owns anything now; prepare_update restored the old list
                obj["metadata"].pop("managedFields", None)
            outcome.created = False
        if dry_run:
            raise DryRunResult(obj, outcome.created)
        return obj

    return await update.write(ep, name, try_update, outcome, allow_create=applying)
