"""OpenAPI v2: the one Swagger 2.0 document `/openapi/v2` serves, made from the v3 documents.

Owns converting what `openapi.py` builds per group-version (paths, operations, components) into
the single document kube-apiserver serves: `definitions` named as in v3 (`io.k8s.api.core.v1.Pod`),
every operation with `consumes`/`produces`, a `body` parameter and `schema`-typed responses, the
path and query parameters shared under `parameters` and referenced (as upstream, which keeps the
document small), and custom kinds narrowed as upstream narrows CRD schemas for v2 kubectl. Built on
the first request, cached per registry generation (a CRD change is a new document); the protobuf
form (`openapi_v2_protobuf.py`) is encoded on first demand. `respond()` is the endpoint (Accept,
ETag, If-None-Match and If-Modified-Since as kube-openapi's handler); `app.py` calls it.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import hashlib
import logging
import time
import weakref
from collections.abc import Mapping
from typing import Any

import msgspec
from aiohttp import web

from apiserver import openapi, openapi_v2_protobuf, registry, schemas

log = logging.getLogger("haru.apiserver.openapi")
_V3_PREFIX = "#/components/schemas/"
_V2_PREFIX = "#/definitions/"
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
_BODY_REQUIRED = frozenset({"post", "put", "patch"})
# What a Swagger 2.0 Schema object may hold (gnostic refuses anything else); `x-` keys pass too.
_SCHEMA_KEYS = frozenset({
    "$ref", "format", "title", "description", "default", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "maxProperties", "minProperties", "required", "enum", "additionalProperties", "type", "items", "allOf",
    "properties", "discriminator", "readOnly", "xml", "externalDocs", "example",
})
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_DISCOVERY_MEDIA = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"


class Spec:
    """One built document: its JSON, ETag and build time; the protobuf form on first use."""

    def __init__(self, document: dict[str, Any]) -> None:
        # Only the bytes are kept: the dict form is several times their size.
        self.json = msgspec.json.encode(document)
        # Upstream's ETag: the SHA-512 of the JSON, upper-case hex, quoted; the protobuf form
        # shares it (responses vary by Accept).
        self.etag = '"' + hashlib.sha512(self.json).hexdigest().upper() + '"'
        self.last_modified = time.time()
        self._protobuf: bytes | None = None

    def protobuf(self) -> bytes:
        if self._protobuf is None:
            self._protobuf = openapi_v2_protobuf.encode(msgspec.json.decode(self.json))
        return self._protobuf


_specs: weakref.WeakKeyDictionary[registry.Registry, tuple[int, Spec]] = weakref.WeakKeyDictionary()


def spec(reg: registry.Registry) -> Spec:
    """The v2 document of everything `reg` serves now; rebuilt only when the registry changed."""
    cached = _specs.get(reg)
    if cached is not None and cached[0] == reg.generation:
        return cached[1]
    built = Spec(build(reg))
    _specs[reg] = (reg.generation, built)
    return built


def build(reg: registry.Registry) -> dict[str, Any]:
    """The Swagger 2.0 document as a dict (uncached)."""
    converter = _Converter(_custom_kinds(reg))
    info: dict[str, Any] = {}
    for group in reg.groups():
        for ver in reg.served_versions(group):
            v3 = openapi.spec(reg, group, ver)
            info = v3["info"]
            converter.add(v3)
    converter.add_discovery(reg)
    return {
        "swagger": "2.0",
        "info": info,
        "paths": dict(sorted(converter.paths.items())),
        "definitions": dict(sorted(converter.definitions.items())),
        "parameters": dict(sorted(converter.parameters.items())),
        "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                                "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}],
    }


def _custom_kinds(reg: registry.Registry) -> frozenset[str]:
    """Definition names of custom kinds (not their lists): their schemas are narrowed for v2."""
    return frozenset(openapi.kind_component_name(info) for info in reg.all() if not info.builtin)


# -- serving -------------------------------------------------------------------------------
# kube-openapi's formats for /openapi/v2, in its order of preference: JSON, then gnostic protobuf
# under its old and its current media type (both answered with the current one).
_V2_JSON, _V2_PROTOBUF = "application/json", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_V2_FORMATS = (("application", "json", _V2_JSON),
               ("application", "com.github.proto-openapi.spec.v2@v1.0+protobuf", _V2_PROTOBUF),
               ("application", "com.github.proto-openapi.spec.v2.v1.0+protobuf", _V2_PROTOBUF))


def respond(request: web.Request, reg: registry.Registry) -> web.Response:
    """The answer to GET /openapi/v2: JSON or protobuf by `Accept`, 304 when the client has it."""
    media = _v2_media_type(request.headers.get("Accept") or "*/*")
    if media is None:
        return web.Response(status=406, headers={"Vary": "Accept"})
    current = spec(reg)
    headers = {"Vary": "Accept", "Etag": current.etag, "Last-Modified": _http_date(current.last_modified)}
    if _not_modified(request, current.etag, current.last_modified):
        return web.Response(status=304, headers=headers)
    try:
        body = current.json if media == _V2_JSON else current.protobuf()
    except ValueError:
        # kube-openapi answers 503 when the protobuf form cannot be made (and logs why).
        log.exception("cannot encode /openapi/v2 as protobuf")
        return web.Response(status=503, headers={"Vary": "Accept"})
    return web.Response(body=body, headers={**headers, "Content-Type": media, "Accept-Ranges": "bytes"})


def _v2_media_type(accept: str) -> str | None:
    """The first format a clause of `Accept` takes, clauses by falling q (goautoneg's order)."""
    clauses = []
    for position, clause in enumerate(accept.split(",")):
        kind, *params = (part.strip() for part in clause.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        main, _, sub = kind.partition("/")
        if q > 0 and main:
            clauses.append((-q, main == "*", sub == "*", position, main, sub))
    for *_, main, sub in sorted(clauses):
        for want_main, want_sub, media in _V2_FORMATS:
            if main in (want_main, "*") and sub in (want_sub, "*"):
                return media
    return None


def _not_modified(request: web.Request, etag: str, last_modified: float) -> bool:
    """Go's http.ServeContent preconditions: If-None-Match, else If-Modified-Since."""
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match is not None:
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        return "*" in tags or etag in tags
    since = request.if_modified_since
    return since is not None and int(last_modified) <= since.timestamp()


def _http_date(timestamp: float) -> str:
    return email.utils.formatdate(timestamp, usegmt=True)


# -- conversion ----------------------------------------------------------------------------
class _Converter:
    def __init__(self, custom_kinds: frozenset[str]) -> None:
        self.custom_kinds = custom_kinds
        self.paths: dict[str, Any] = {}
        self.definitions: dict[str, Any] = {}
        self.parameters: dict[str, Any] = {}
        self._parameter_refs: dict[bytes, dict[str, str]] = {}

    def add(self, v3: Mapping[str, Any]) -> None:
        for name, schema in v3["components"]["schemas"].items():
            if name not in self.definitions:
                self.definitions[name] = self._definition(name, schema)
        for path, item in v3["paths"].items():
            self.paths[path] = self._path_item(item)

    def _definition(self, name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        if name in schemas.definitions():
            return builtin_definition(name)
        if name in self.custom_kinds:
            return custom_kind_schema(schema)
        return convert_schema(schema)

    def add_discovery(self, reg: registry.Registry) -> None:
        """The discovery and version paths upstream's v2 document also lists (the v3 ones do not)."""
        def get(path: str, operation_id: str, tag: str, what: str, definition: str,
                media: tuple[str, ...] = _DISCOVERY_MEDIA) -> None:
            self.paths[path] = {"get": {
                "description": what, "consumes": list(media), "produces": list(media), "schemes": ["https"],
                "tags": [tag], "operationId": operation_id,
                "responses": {"200": {"description": "OK", "schema": {"$ref": _V2_PREFIX + definition}},
                              "401": {"description": "Unauthorized"}}}}
            for name in openapi.reachable([definition]):
                self.definitions.setdefault(name, builtin_definition(name))

        get("/api/", "getCoreAPIVersions", "core", "get available API versions", _META + "APIVersions")
        get("/apis/", "getAPIVersions", "apis", "get available API versions", _META + "APIGroupList")
        get("/version/", "getCodeVersion", "version", "get the code version", "io.k8s.apimachinery.pkg.version.Info",
            ("application/json",))
        for group in reg.groups():
            word, tag = openapi.group_words(group)
            if group:
                get(f"/apis/{group}/", f"get{word}APIGroup", tag, "get information of a group", _META + "APIGroup")
            for ver in reg.served_versions(group):
                prefix = f"/apis/{group}/{ver}/" if group else f"/api/{ver}/"
                get(prefix, f"get{word}{ver[:1].upper()}{ver[1:]}APIResources", f"{tag}_{ver}",
                    "get available resources", _META + "APIResourceList")

    # -- paths and operations --------------------------------------------------------------
    def _path_item(self, item: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for method in _METHODS:
            if method in item:
                out[method] = self._operation(item[method])
        if item.get("parameters"):
            out["parameters"] = [self._parameter_ref(p) for p in item["parameters"]]
        return out

    def _operation(self, op: Mapping[str, Any]) -> dict[str, Any]:
        action = op.get("x-kubernetes-action", "")
        parameters: list[dict[str, Any]] = []
        consumes = ["*/*"]
        body = op.get("requestBody")
        if body is not None:
            content = body["content"]
            consumes = list(content)
            parameter: dict[str, Any] = {"name": "body", "in": "body",
                                         "schema": convert_schema(next(iter(content.values()))["schema"])}
            if action in _BODY_REQUIRED:
                parameter["required"] = True
            parameters.append(parameter)
        parameters += [self._parameter_ref(p) for p in op.get("parameters", ())]
        produces: list[str] = []
        responses: dict[str, Any] = {}
        for code, response in op["responses"].items():
            converted: dict[str, Any] = {"description": response["description"]}
            content = response.get("content") or {}
            if content:
                converted["schema"] = convert_schema(next(iter(content.values()))["schema"])
                produces += [media for media in content if media not in produces]
            responses[code] = converted
        responses["401"] = {"description": "Unauthorized"}
        out: dict[str, Any] = {"description": op.get("description", ""), "consumes": consumes,
                               "produces": produces, "schemes": ["https"], "tags": list(op.get("tags", ())),
                               "operationId": op["operationId"]}
        if parameters:
            out["parameters"] = parameters
        out["responses"] = responses
        out.update((k, v) for k, v in op.items() if k.startswith("x-"))
        return out

    def _parameter_ref(self, parameter: Mapping[str, Any]) -> dict[str, str]:
        """A path or query parameter, kept once under `parameters` and referenced by name."""
        converted: dict[str, Any] = {}
        schema = parameter.get("schema") or {}
        for key in ("uniqueItems", "type"):
            if key in schema:
                converted[key] = schema[key]
        converted.update((k, parameter[k]) for k in ("description", "required", "name", "in") if k in parameter)
        identity = msgspec.json.encode(converted)
        ref = self._parameter_refs.get(identity)
        if ref is None:
            digest = base64.urlsafe_b64encode(hashlib.sha256(identity).digest()[:6]).decode()
            key = f"{converted['name']}-{digest}"
            self.parameters[key] = converted
            ref = self._parameter_refs[identity] = {"$ref": "#/parameters/" + key}
        return ref


# -- schemas -------------------------------------------------------------------------------
@functools.cache
def builtin_definition(name: str) -> dict[str, Any]:
    """A built-in definition in v2 form; shared between documents, never mutate it."""
    component = openapi.component(name)
    if name == _INT_OR_STRING:  # v2 has no oneOf: upstream publishes these two as strings
        return {"description": component.get("description", ""), "type": "string", "format": "int-or-string"}
    if name == _QUANTITY:
        return {"description": component.get("description", ""), "type": "string"}
    return convert_schema(component)


def convert_schema(node: Any) -> Any:
    """One v3 schema node in v2 form: refs to `#/definitions/`, only keys Swagger 2.0 knows."""
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    if ref is None and len(node.get("allOf") or ()) == 1 and "$ref" in node["allOf"][0]:
        ref = node["allOf"][0]["$ref"]  # v3's way of putting a description beside a ref
    if isinstance(ref, str):
        # kubectl's v2 parser refuses a ref with a type or properties beside it.
        out: dict[str, Any] = {"$ref": _V2_PREFIX + ref[len(_V3_PREFIX):] if ref.startswith(_V3_PREFIX) else ref}
        if "description" in node:
            out["description"] = node["description"]
        out.update((k, v) for k, v in node.items() if k.startswith("x-"))
        return out
    out = {}
    for key, value in node.items():
        if key.startswith("x-") or key in ("default", "example", "enum", "required"):
            out[key] = value  # data, not schemas
        elif key not in _SCHEMA_KEYS or key == "allOf":
            continue  # oneOf, anyOf, not, nullable: v3 only
        elif key == "properties":
            out[key] = {field: convert_schema(child) for field, child in value.items()}
        elif key == "items":
            out[key] = [convert_schema(v) for v in value] if isinstance(value, list) else convert_schema(value)
        elif key == "additionalProperties":
            out[key] = value if isinstance(value, bool) else convert_schema(value)
        else:
            out[key] = value
    return out


def custom_kind_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A custom kind's schema narrowed as upstream narrows CRD schemas for v2 kubectl.

    kubectl's v2 validation treats a node with `properties` as closed, so a node that keeps
    unknown fields loses its properties and its object type, a nullable node loses its type, and
    an array left without items loses its type too; a root that keeps unknown fields is published
    as a bare object, without even apiVersion, kind and metadata.
    """
    gvk = {k: v for k, v in schema.items() if k == "x-kubernetes-group-version-kind"}
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return {"type": "object", **gvk}
    return convert_schema(_narrow(schema))


def _narrow(node: Any) -> Any:
    if not isinstance(node, Mapping):
        return node
    out = {k: v for k, v in node.items() if k not in ("allOf", "oneOf", "anyOf", "not")}
    if out.pop("nullable", False):
        for key in ("type", "items", "properties"):
            out.pop(key, None)
    if out.get("x-kubernetes-preserve-unknown-fields"):
        out.pop("items", None)
        out.pop("properties", None)
        if out.get("type") == "object":
            del out["type"]
    if "properties" in out:
        properties = {field: _narrow(child) for field, child in out["properties"].items()}
        nullable = {field for field, child in out["properties"].items()
                    if isinstance(child, Mapping) and child.get("nullable")}
        if "required" in out and nullable:
            out["required"] = [f for f in out["required"] if f not in nullable]
            if not out["required"]:
                del out["required"]
        if properties:
            out["properties"] = properties
        else:
            del out["properties"]  # the write path's closed-object marker, not part of the schema
    if isinstance(out.get("items"), Mapping):
        out["items"] = _narrow(out["items"])
    additional = out.get("additionalProperties")
    if isinstance(additional, Mapping):
        if additional.get("nullable"):
            out.pop("required", None)
        out["additionalProperties"] = _narrow(additional)
    if out.get("type") == "array" and "items" not in out:
        del out["type"]
    return out
