"""Request bodies: size limit, media type, and decoding into a plain dict.

JSON (also when the Content-Type is missing, as the Python client sends), YAML, and Kubernetes
protobuf (`k8s\\0` envelope; kubectl's generators and helm send it) for objects; the four patch media
types for PATCH. Called by the create/update/patch/delete handlers; what comes out is checked
against the endpoint's kind in `check_kind` and pruned of unknown fields in `field_validation.py`.
A body that does not decode gets kube's BadRequest texts (Go's JSON errors from `json_syntax.py`).
"""

from __future__ import annotations

from typing import Any

import msgspec
import yaml
from aiohttp import web

from apiserver import errors, json_syntax
from apiserver.audit import recorder as audit

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's default limit for request bodies

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

OBJECT_TYPES = (JSON, YAML, PROTOBUF)
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)

_yaml_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def media_type(request: web.Request) -> str:
    raw = request.headers.get("Content-Type", "")
    return raw.split(";", 1)[0].strip().lower() or JSON


async def read(request: web.Request) -> bytes:
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise errors.too_large()
    # StreamReader.read(n) returns what has arrived so far (up to n), not the whole body: read
    # chunks until EOF, and stop as soon as the body is past the limit.
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await request.content.read(64 * 1024)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_BODY:
            raise errors.too_large()
        chunks.append(chunk)
    body = b"".join(chunks)
    audit.note_body(request, body, media_type(request))  # requestObject, at audit level Request and up
    return body


def decode_yaml(body: bytes) -> Any:
    """An apply patch: upstream's applyPatcher decodes it with sigs.k8s.io/yaml and says so."""
    try:
        return yaml.load(body, Loader=_yaml_loader)
    except yaml.YAMLError as exc:
        raise errors.bad_request(f"error decoding YAML: error converting YAML to JSON: {_yaml_error(exc)}") from None
    except RecursionError:
        raise errors.bad_request("error decoding YAML: error converting YAML to JSON: "
                                 "yaml: exceeded max depth of 10000") from None


def _yaml_error(exc: yaml.YAMLError) -> str:
    """go-yaml's shape, `yaml: line N: problem`, from PyYAML's (0-based) problem mark."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    problem = _YAML_PROBLEMS.get(problem, problem)
    return f"yaml: line {mark.line + 1}: {problem}" if mark is not None else f"yaml: {problem}"


# PyYAML and go-yaml (both from libyaml) word a few problems differently.
_YAML_PROBLEMS = {
    "mapping values are not allowed here": "mapping values are not allowed in this context",
}
# What Go prints for the struct kube's SimpleMetaFactory unmarshals a body into to find its kind.
_KIND_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
_GO_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}


async def read_object(request: web.Request, into: str = "") -> dict[str, Any]:
    """The body of a create/update/delete as a dict, whatever media type it came in.

    `into` is the kind the endpoint expects: with it, an undecodable body gets kube's
    "the object provided is unrecognized (must be of type <into>)" BadRequest."""
    kind = media_type(request)
    if kind not in OBJECT_TYPES:
        raise errors.unsupported_media_type(kind, (JSON, YAML, PROTOBUF))
    body = await read(request)
    return decode_object(kind, body, into)


def decode_object(kind: str, body: bytes, into: str = "") -> dict[str, Any]:
    try:
        return _decode_object(kind, body)
    except _Undecodable as exc:
        if into:
            # upstream's transformDecodeError: no kind could be read from the body
            raise errors.bad_request(f"the object provided is unrecognized (must be of type {into}): "
                                     f"{exc} ({summarize(body)})") from None
        raise errors.bad_request(str(exc)) from None


class _Undecodable(Exception):
    """A body no kind could be read from; the text is the decoder's own error."""


def _decode_object(kind: str, body: bytes) -> dict[str, Any]:
    if kind == PROTOBUF:
        from apiserver import protobuf

        if not body:
            raise _Undecodable("empty data")
        if not body.startswith(protobuf.MAGIC):
            prefix = " ".join(str(b) for b in protobuf.MAGIC)
            raise _Undecodable(f"provided data does not appear to be a protobuf message, expected prefix [{prefix}]")
        if body == protobuf.MAGIC:
            raise _Undecodable("empty body")
        try:
            obj = protobuf.decode(body)
        except protobuf.DecodeError as exc:
            raise _Undecodable(f"failed to decode protobuf body: {exc}") from None
    elif kind == YAML:
        try:
            obj = yaml.load(body, Loader=_yaml_loader)
        except yaml.YAMLError as exc:
            raise _Undecodable(f"error converting YAML to JSON: {_yaml_error(exc)}") from None
        except RecursionError:
            raise _Undecodable("error converting YAML to JSON: yaml: exceeded max depth of 10000") from None
    else:
        try:
            obj = msgspec.json.decode(body)
        except (msgspec.DecodeError, RecursionError) as exc:  # msgspec refuses deep nesting by recursing
            raise _Undecodable(f"couldn't get version/kind; json parse error: {json_syntax.error_of(body) or exc}") from None
    if obj is None and kind != PROTOBUF:
        obj = {}  # Go unmarshals `null` (or an empty YAML document) into an empty object
    if not isinstance(obj, dict):
        go_type = _GO_TYPES.get(type(obj), "value")
        raise _Undecodable(f"couldn't get version/kind; json parse error: json: cannot unmarshal {go_type} "
                           f"into Go value of type {_KIND_STRUCT}")
    return obj


def summarize(body: bytes, limit: int = 30) -> str:
    """upstream's summarizeData: JSON-looking bodies as text, anything else as hex; cut at `limit`."""
    if not body:
        return "<empty>"
    head = body[:limit]
    text = head.decode(errors="replace") if body[:1] == b"{" else head.hex()
    return text + " ..." if len(body) > limit else text


def check_kind(obj: dict[str, Any], api_version: str, kind: str) -> None:
    """Default a missing apiVersion/kind from the endpoint; reject a different one (as kube does)."""
    got_version = obj.get("apiVersion") or api_version
    got_kind = obj.get("kind") or kind
    if got_version != api_version:
        raise errors.bad_request(
            f"the API version in the data ({got_version}) does not match the expected API version ({api_version})"
        )
    if got_kind != kind:
        raise errors.bad_request(f"the kind in the data ({got_kind}) does not match the expected kind ({kind})")
    obj["apiVersion"] = api_version
    obj["kind"] = kind
