"""OpenAPI v2: the Swagger 2.0 document, its gnostic protobuf form, and how `/openapi/v2` is served."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from apiserver import openapi_v2, openapi_v2_protobuf, registry, schemas
from apiserver.crds import definition

_V3_ONLY = {"components", "requestBody", "content", "oneOf", "anyOf", "nullable", "openapi"}
_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
_PROTOBUF_ANSWER = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


@pytest.fixture(scope="module")
def doc() -> dict:
    return openapi_v2.build(registry.Registry.builtin())


def _walk(node, path=()):
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, path + (index,))


def _operations(doc: dict):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method != "parameters":
                yield path, method, op


def _parameters(doc: dict, op: dict) -> list[dict]:
    """An operation's parameters with `#/parameters/` references resolved, as kubectl resolves them."""
    return [doc["parameters"][p["$ref"].removeprefix("#/parameters/")] if "$ref" in p else p
            for p in op.get("parameters", ())]


def test_the_document_is_swagger_2_with_every_reference_resolved(doc):
    assert doc["swagger"] == "2.0" and doc["info"] == {"title": "Kubernetes", "version": "v1.36.3"}
    assert doc["securityDefinitions"]["BearerToken"]["type"] == "apiKey"
    for where, node in _walk(doc):
        schema_keys = set(node) - {"x-kubernetes-group-version-kind"}
        assert not (schema_keys & _V3_ONLY and "properties" not in where[-1:]), where
        ref = node.get("$ref")
        if isinstance(ref, str) and "properties" not in where[-1:]:
            kind, _, name = ref.removeprefix("#/").partition("/")
            assert name in doc[kind], (where, ref)
            # kubectl's v2 parser refuses a reference with a type or properties beside it.
            assert not {"type", "properties"} & set(node), where


def test_definitions_keep_upstream_names_and_v2_forms(doc):
    defs = doc["definitions"]
    pod = defs["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["properties"]["spec"]["$ref"] == "#/definitions/io.k8s.api.core.v1.PodSpec"
    assert pod["properties"]["kind"] == {"description": pod["properties"]["kind"]["description"], "type": "string"}
    assert defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    assert defs["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"] == "string"
    assert set(defs) <= set(schemas.definitions())


def test_every_operation_has_an_action_a_kind_and_v2_bodies(doc):
    actions = set()
    for path, method, op in _operations(doc):
        assert op["responses"]["200"]["schema"], (path, method)
        if path.endswith("/"):
            continue  # discovery and version: no action, no kind (as upstream)
        actions.add(op["x-kubernetes-action"])
        assert {"group", "version", "kind"} <= set(op["x-kubernetes-group-version-kind"]), (path, method)
        assert op["responses"]["401"] == {"description": "Unauthorized"}
        assert op["schemes"] == ["https"] and op["consumes"] and op["produces"]
        bodies = [p for p in _parameters(doc, op) if p["in"] == "body"]
        if op["x-kubernetes-action"] in ("post", "put", "patch"):
            assert len(bodies) == 1 and bodies[0]["required"] is True, (path, method)
    assert actions >= {"get", "list", "post", "put", "patch", "delete", "deletecollection", "watch", "watchlist",
                       "connect"}


def test_discovery_and_version_paths_are_listed_as_upstream_lists_them(doc):
    paths = doc["paths"]
    assert paths["/api/"]["get"]["operationId"] == "getCoreAPIVersions"
    assert paths["/apis/"]["get"]["operationId"] == "getAPIVersions"
    assert paths["/version/"]["get"]["responses"]["200"]["schema"] == {
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.version.Info"}
    group = paths["/apis/rbac.authorization.k8s.io/"]["get"]
    assert (group["operationId"], group["tags"]) == ("getRbacAuthorizationAPIGroup", ["rbacAuthorization"])
    resources = paths["/api/v1/"]["get"]
    assert (resources["operationId"], resources["tags"]) == ("getCoreV1APIResources", ["core_v1"])
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscovery" in doc["definitions"]


def test_patch_operations_declare_field_validation_where_kubectl_looks_for_it(doc):
    # cli-runtime's supportsQueryParam: the path whose PATCH carries the kind's GVK extension,
    # then a query parameter named fieldValidation, possibly behind a #/parameters/ reference.
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    names = {(p["in"], p["name"]) for p in _parameters(doc, patch)}
    assert ("query", "fieldValidation") in names and ("body", "body") in names
    assert "application/strategic-merge-patch+json" in patch["consumes"]


def test_unserved_versions_are_absent(doc):
    assert not any(op.get("x-kubernetes-group-version-kind") == {"group": "resource.k8s.io", "version": "v1beta1",
                                                             "kind": "DeviceClass"}
                   for _, _, op in _operations(doc))
    assert "/apis/resource.k8s.io/v1/deviceclasses" in doc["paths"]


_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "required": ["size", "color"],
                                                           "properties": {
                     "size": {"type": "integer", "description": "how big"},
                     "color": {"type": "string", "nullable": True},
                     "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                               "properties": {"a": {"type": "string"}}},
                     "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                 }}}}}}]},
}


def test_a_crd_appears_and_the_cached_document_follows_the_registry():
    reg = registry.Registry.builtin()
    before = openapi_v2.spec(reg)
    assert openapi_v2.spec(reg) is before  # cached while the registry stands still
    for row in definition.from_crd(_CRD).rows():
        reg.add(row)
    after = openapi_v2.spec(reg)
    assert after is not before and after.etag != before.etag
    doc = msgspec.json.decode(after.json)
    widget = doc["definitions"]["com.example.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [{"group": "example.com", "version": "v1", "kind": "Widget"}]
    assert widget["properties"]["metadata"]["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    spec = widget["properties"]["spec"]
    # Narrowed as upstream narrows CRD schemas for v2: nullable and preserve-unknown nodes lose
    # what kubectl would wrongly enforce, anyOf goes.
    assert spec["required"] == ["size"]
    assert spec["properties"]["color"] == {}
    assert spec["properties"]["extra"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert spec["properties"]["port"] == {"x-kubernetes-int-or-string": True}
    assert spec["properties"]["size"] == {"type": "integer", "description": "how big"}
    items = doc["definitions"]["com.example.v1.WidgetList"]["properties"]["items"]
    assert items == {"type": "array", "items": {"$ref": "#/definitions/com.example.v1.Widget"}}
    patch = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in patch["consumes"]
    decoded = openapi_v2_protobuf.message_class("Document")()
    decoded.ParseFromString(after.protobuf())
    assert "com.example.v1.Widget" in [d.name for d in decoded.definitions.additional_properties]


def test_a_crd_that_keeps_unknown_fields_at_its_root_is_a_bare_object():
    assert openapi_v2.custom_kind_schema({"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                                          "properties": {"spec": {"type": "object"}},
                                          "x-kubernetes-group-version-kind": [{"kind": "W"}]}) == {
        "type": "object", "x-kubernetes-group-version-kind": [{"kind": "W"}]}


# -- protobuf ------------------------------------------------------------------------------
def test_the_protobuf_form_decodes_to_the_same_document(doc):
    body = openapi_v2_protobuf.encode(doc)
    # Read with the descriptors only as far as needed to check the numbering on the wire:
    # Document.swagger is field 1 (tag 0x0a), and "2.0" is its first value.
    assert body.startswith(b"\x0a\x032.0")
    decoded = openapi_v2_protobuf.message_class("Document")()
    decoded.ParseFromString(body)
    assert decoded.info.title == "Kubernetes" and decoded.info.version == "v1.36.3"
    assert [p.name for p in decoded.paths.path] == list(doc["paths"])
    assert [d.name for d in decoded.definitions.additional_properties] == list(doc["definitions"])
    pod = next(d.value for d in decoded.definitions.additional_properties if d.name == "io.k8s.api.core.v1.Pod")
    assert pod.type.value == ["object"]
    gvk = [e for e in pod.vendor_extension if e.name == "x-kubernetes-group-version-kind"]
    assert msgspec.json.decode(gvk[0].value.yaml) == [{"group": "", "kind": "Pod", "version": "v1"}]
    spec = next(p.value for p in pod.properties.additional_properties if p.name == "spec")
    assert spec._ref == "#/definitions/io.k8s.api.core.v1.PodSpec"

    item = next(p.value for p in decoded.paths.path if p.name == "/api/v1/namespaces/{namespace}/pods/{name}")
    assert item.patch.operation_id == "patchCoreV1NamespacedPod"
    refs = [p.json_reference._ref for p in item.patch.parameters if p.WhichOneof("oneof") == "json_reference"]
    params = {p.name: p.value for p in decoded.parameters.additional_properties}
    queries = [params[r.removeprefix("#/parameters/")].non_body_parameter.query_parameter_sub_schema.name for r in refs]
    assert "fieldValidation" in queries
    body_param = [p.parameter.body_parameter for p in item.patch.parameters if p.WhichOneof("oneof") == "parameter"]
    assert body_param[0].schema._ref == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
    ok = next(r.value.response for r in item.get.responses.response_code if r.name == "200")
    assert ok.schema.schema._ref == "#/definitions/io.k8s.api.core.v1.Pod"


def test_json_numbers_reach_integer_fields_as_integers():
    decoded = openapi_v2_protobuf.message_class("Document")()
    decoded.ParseFromString(openapi_v2_protobuf.encode(
        {"swagger": "2.0", "definitions": {"X": {"type": "string", "maxLength": 5.0, "maximum": 3}}}))
    x = decoded.definitions.additional_properties[0].value
    assert (x.max_length, x.maximum) == (5, 3.0)
    with pytest.raises(ValueError, match="'five' is not a valid max_length of Schema"):
        openapi_v2_protobuf.encode({"swagger": "2.0", "definitions": {"X": {"maxLength": "five"}}})


def test_encoding_refuses_what_gnostic_refuses():
    with pytest.raises(ValueError, match="'oneOf' is not a valid property"):
        openapi_v2_protobuf.encode({"swagger": "2.0", "definitions": {"X": {"oneOf": [{"type": "string"}]}}})
    with pytest.raises(ValueError, match="a parameter must be in"):
        openapi_v2_protobuf.encode({"swagger": "2.0", "parameters": {"p": {"name": "p", "in": "cookie"}}})


# -- serving -------------------------------------------------------------------------------
async def test_json_by_default_protobuf_when_asked_406_otherwise(api):
    status, body, headers = await api.request("GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert status == 200 and body["swagger"] == "2.0" and headers["Content-Type"] == "application/json"
    assert headers["Vary"] == "Accept"
    etag = headers["Etag"]
    assert etag.startswith('"') and len(etag) == 130 and etag.strip('"').isupper()

    async with api.session.get(api.url + "/openapi/v2", headers={"Accept": _PROTOBUF}) as resp:
        raw = await resp.read()
        assert resp.status == 200 and resp.headers["Content-Type"] == _PROTOBUF_ANSWER
        assert resp.headers["Etag"] == etag  # one ETag for both forms, as kube-openapi
    decoded = openapi_v2_protobuf.message_class("Document")()
    decoded.ParseFromString(raw)
    assert decoded.swagger == "2.0"

    status, _, _ = await api.request("GET", "/openapi/v2", headers={"Accept": "*/*"})
    assert status == 200
    status, body, headers = await api.request("GET", "/openapi/v2", headers={"Accept": "text/html"})
    assert status == 406 and body == "" and headers["Vary"] == "Accept"
    status, _, headers = await api.request(
        "GET", "/openapi/v2", headers={"Accept": f"application/json;q=0.5, {_PROTOBUF}"})
    assert headers["Content-Type"] == _PROTOBUF_ANSWER


async def test_a_matching_etag_gets_304_and_a_new_crd_a_new_etag(api):
    _, _, headers = await api.request("GET", "/openapi/v2")
    etag = headers["Etag"]
    status, body, headers = await api.request("GET", "/openapi/v2", headers={"If-None-Match": etag})
    assert status == 304 and body == "" and headers["Etag"] == etag
    status, _, _ = await api.request("GET", "/openapi/v2", headers={"If-None-Match": '"other"'})
    assert status == 200
    status, _, _ = await api.request("GET", "/openapi/v2", headers={"If-Modified-Since": headers["Last-Modified"]})
    assert status == 304
    status, _, _ = await api.request("GET", "/openapi/v2", headers={
        "If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT"})
    assert status == 200
    async with api.session.head(api.url + "/openapi/v2") as resp:
        assert resp.status == 200 and resp.headers["Etag"] == etag and await resp.read() == b""

    status, _, _ = await api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=_CRD)
    assert status == 201
    for _ in range(100):
        status, body, headers = await api.request("GET", "/openapi/v2", headers={"If-None-Match": etag})
        if status == 200:
            break
        await asyncio.sleep(0.05)
    assert status == 200 and headers["Etag"] != etag
    assert "com.example.v1.Widget" in body["definitions"]
