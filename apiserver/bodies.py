"""Request bodies: size limit, media type, and decoding into a plain dict.

JSON (also when the Content-Type is missing, as the Python client sends), YAML, and Kubernetes
protobuf (`k8s\\0` envelope; kubectl's generators and helm send it) for objects; the four patch media
types for PATCH. Called by the create/update/patch/delete handlers; what comes out is checked
against the endpoint's kind in `check_kind` and pruned of unknown fields in `field_validation.py`.
"""

from __future__ import annotations

from typing import Any

import msgspec
import yaml
from aiohttp import web

from apiserver import errors

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
    return b"".join(chunks)


def decode_json(body: bytes) -> Any:
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise errors.bad_request(f"json parse error: {exc}") from None


def decode_yaml(body: bytes) -> Any:
    try:
        return yaml.load(body, Loader=_yaml_loader)
    except yaml.YAMLError as exc:
        raise errors.bad_request(f"yaml: {str(exc).splitlines()[0]}") from None


async def read_object(request: web.Request) -> dict[str, Any]:
    """The body of a create/update/delete as a dict, whatever media type it came in."""
    kind = media_type(request)
    if kind not in OBJECT_TYPES:
        raise errors.unsupported_media_type(kind, (JSON, YAML, PROTOBUF))
    body = await read(request)
    return decode_object(kind, body)


def decode_object(kind: str, body: bytes) -> dict[str, Any]:
    if kind == PROTOBUF:
        from apiserver import protobuf

        try:
            obj = protobuf.decode(body)
        except protobuf.DecodeError as exc:
            raise errors.bad_request(f"failed to decode protobuf body: {exc}") from None
    elif kind == YAML:
        obj = decode_yaml(body)
    else:
        obj = decode_json(body)
    if not isinstance(obj, dict):
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type map): couldn't get version/kind; json parse error: "
            f"cannot unmarshal {type(obj).__name__} into Go value of type struct"
        )
    return obj


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
