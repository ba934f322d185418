"""`/scale` of deployments, replicasets, statefulsets and replicationcontrollers: an autoscaling/v1 Scale.

GET builds the Scale from the object; PUT and PATCH compute the new Scale (PATCH in any of the
patch types, applied to the Scale) and write only `spec.replicas` back, through the same update
path as any PUT. `kubectl scale` needs the answer to be a Scale, not the object. Custom resources
read and write their replicas at the CRD's scale paths (`crds/scale.py`).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from apiserver import bodies, errors, labels, responses, schemas
from apiserver.context import Endpoint
from apiserver.crds import output as crd_output, scale as crd_scale
from apiserver.handlers import patch as patch_handler, update
from apiserver.patching import PatchError, json_patch, merge_patch, strategic_merge

SCALED = frozenset({("apps", "deployments"), ("apps", "replicasets"), ("apps", "statefulsets"),
                    ("", "replicationcontrollers")})


def to_scale(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    selector = spec.get("selector")
    if isinstance(selector, dict) and ("matchLabels" in selector or "matchExpressions" in selector):
        selector_text = str(labels.from_label_selector(selector))
    elif isinstance(selector, dict):  # replicationcontrollers: a plain map
        selector_text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    else:
        selector_text = ""
    scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}
    status: dict[str, Any] = {"replicas": (obj.get("status") or {}).get("replicas", 0)}
    if selector_text:
        status["selector"] = selector_text
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta,
            "spec": {"replicas": spec.get("replicas", 1)}, "status": status}


def _scale_of(ep: Endpoint, obj: dict[str, Any]) -> dict[str, Any]:
    if ep.resource.builtin:
        return to_scale(obj)
    return crd_scale.to_scale(ep.resource.group, ep.resource.resource, ep.resource.version, obj)


def _current(ep: Endpoint) -> dict[str, Any]:
    record = ep.stored(ep.request_info.name)
    return crd_output.stored_object(ep, responses.decode(record.value))  # custom resources: requested version


async def get(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    return responses.json_response(_scale_of(ep, _current(ep)))


async def _write(ep: Endpoint, request: web.Request, scale: dict[str, Any]) -> web.StreamResponse:
    replicas = (scale.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or replicas < 0:
        cause = errors.field_error("FieldValueInvalid", "spec.replicas",
                                   f"Invalid value: {replicas}: must be greater than or equal to 0")
        raise errors.invalid("Scale", "autoscaling", ep.request_info.name, [cause])
    current = _current(ep)
    rv = (scale.get("metadata") or {}).get("resourceVersion")
    if rv and rv != current["metadata"].get("resourceVersion"):
        raise errors.conflict(ep.resource.resource, ep.resource.group, ep.request_info.name, errors.MODIFIED)
    if ep.resource.builtin:
        current.setdefault("spec", {})["replicas"] = replicas
    else:
        crd_scale.set_replicas(ep.resource.group, ep.resource.resource, ep.resource.version, current, replicas)
    response = await update.replace(ep, request, current, subresource="scale")
    if response.status >= 300 or not isinstance(response, web.Response) or response.body is None:
        return response
    scaled = responses.json_response(_scale_of(ep, responses.decode(response.body)), status=response.status)
    for warning in response.headers.getall("Warning", ()):  # the workload's own warnings go along
        scaled.headers.add("Warning", warning)
    return scaled


async def put(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    scale = await bodies.read_object(request)
    return await _write(ep, request, scale)


async def patch(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    media = bodies.media_type(request)
    body = await bodies.read(request)
    scale = _scale_of(ep, _current(ep))
    try:
        if media == bodies.JSON_PATCH:
            scale = json_patch.apply(scale, json_patch.parse(body))
        elif media == bodies.MERGE_PATCH:
            scale = merge_patch.apply(scale, merge_patch.parse(body))
        elif media == bodies.STRATEGIC_MERGE_PATCH:
            scale = strategic_merge.apply(scale, strategic_merge.parse(body),
                                          schemas.for_kind("autoscaling", "v1", "Scale"))
        else:
            raise errors.unsupported_media_type(media, (bodies.JSON_PATCH, bodies.MERGE_PATCH,
                                                        bodies.STRATEGIC_MERGE_PATCH))
    except PatchError as exc:
        raise patch_handler.from_patch_error(exc) from None
    return await _write(ep, request, scale)
