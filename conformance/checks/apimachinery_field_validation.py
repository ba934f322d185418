"""Server-side field validation (test/e2e/apimachinery/field_validation.go): with
`fieldValidation=Strict`, unknown fields are refused with 400 BadRequest on typed objects and on
custom resources, while a schema that preserves unknown fields, or a valid object, is accepted —
through create and through apply. (The duplicate-field and embedded-metadata cases are left out:
haru does not detect them yet.)"""

from __future__ import annotations

import json

from client.resources import Resource
from client.rest import PATCH_TYPES
from conformance.checks._confupstream_support import make_crd, refused
from conformance.context import Context, Obj
from conformance.registry import conformance

STRICT = [("fieldValidation", "Strict")]
APPLY = [("fieldValidation", "Strict"), ("fieldManager", "e2e-field-validation")]

_DEPLOYMENT = """{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "%s"%s},
 "spec": {"replicas": 1, %s"selector": {"matchLabels": {"app": "nginx"}},
          "template": {"metadata": {"labels": {"app": "nginx"}},
                       "spec": {"containers": [{"name": "nginx", "image": "registry.k8s.io/pause:3.10"}]}}}}"""


def _path(resource: Resource, ctx: Context, name: str | None = None) -> str:
    return resource.path(ctx.namespace if resource.namespaced else None, name)


async def _post_raw(ctx: Context, resource: Resource, text: str) -> Obj:
    return await ctx.api.request("POST", _path(resource, ctx), query=STRICT, body=text.encode())


async def _apply(ctx: Context, resource: Resource, name: str, obj: Obj) -> Obj:
    return await ctx.api.request("PATCH", _path(resource, ctx, name), query=APPLY, body=json.dumps(obj).encode(),
                                 content_type=PATCH_TYPES["apply"])


def _mentions(err_message: str, *fragments: str) -> None:
    missing = [f for f in fragments if f not in err_message]
    assert not missing, f"the error does not mention {missing}: {err_message}"


@conformance("[sig-api-machinery] FieldValidation should detect unknown metadata fields of a typed object "
             "[Conformance]", area="api-machinery")
async def typed_unknown_metadata(ctx: Context) -> None:
    deployments = ctx.api.resource("apps/v1", "Deployment")
    text = _DEPLOYMENT % ("deployment-unknown-meta", ', "unknownMeta": "foo"', "")
    err = await refused(_post_raw(ctx, deployments, text), 400, "BadRequest", "a Deployment with an unknown metadata field")
    _mentions(err.message, 'unknown field "metadata.unknownMeta"')


_SCHEMA: Obj = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "replicas": {"type": "integer"},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                  "items": {"type": "object", "required": ["containerPort", "protocol"], "properties": {
                      "containerPort": {"type": "integer"}, "protocol": {"type": "string"},
                      "hostPort": {"type": "integer"}}}}}}}}


def _cr(resource: Resource, name: str, spec: Obj) -> Obj:
    return {"apiVersion": resource.api_version, "kind": resource.kind, "metadata": {"name": name}, "spec": spec}


@conformance("[sig-api-machinery] FieldValidation should create/apply a CR with unknown fields for CRD with no "
             "validation schema [Conformance]", area="api-machinery")
async def cr_without_schema(ctx: Context) -> None:
    _, noxus = await make_crd(ctx, "Noxu")
    created = await _post_raw(ctx, noxus, json.dumps(_cr(noxus, "created", {"foo": "bar", "anything": [1]})))
    assert created["spec"] == {"foo": "bar", "anything": [1]}, f"unknown fields were dropped: {created}"
    applied = await _apply(ctx, noxus, "applied", _cr(noxus, "applied", {"foo": "bar"}))
    assert applied["spec"] == {"foo": "bar"}, f"an applied unknown field was dropped: {applied}"


@conformance("[sig-api-machinery] FieldValidation should create/apply a valid CR for CRD with validation schema "
             "[Conformance]", area="api-machinery")
async def valid_cr(ctx: Context) -> None:
    _, noxus = await make_crd(ctx, "Noxu", schema=_SCHEMA)
    spec = {"replicas": 1, "ports": [{"containerPort": 80, "protocol": "TCP"}]}
    created = await _post_raw(ctx, noxus, json.dumps(_cr(noxus, "created", spec)))
    assert created["spec"] == spec, f"a valid CR came back changed: {created['spec']}"
    applied = await _apply(ctx, noxus, "applied", _cr(noxus, "applied", spec))
    assert applied["spec"] == spec, f"a valid applied CR came back changed: {applied['spec']}"


@conformance("[sig-api-machinery] FieldValidation should create/apply an invalid CR with extra properties for CRD "
             "with validation schema [Conformance]", area="api-machinery")
async def cr_extra_properties(ctx: Context) -> None:
    _, noxus = await make_crd(ctx, "Noxu", schema=_SCHEMA)
    spec = {"replicas": 1, "ports": [{"containerPort": 80, "protocol": "TCP", "hostPort": 8080}], "extraProperty": "x"}
    err = await refused(_post_raw(ctx, noxus, json.dumps(_cr(noxus, "created", spec))), 400, "BadRequest",
                        "creating a CR with a property its schema lacks")
    _mentions(err.message, "spec.extraProperty")
    err = await refused(_apply(ctx, noxus, "applied", _cr(noxus, "applied", spec)), 400, "BadRequest",
                        "applying a CR with a property its schema lacks")
    _mentions(err.message, "extraProperty")
