"""JSON merge patch (RFC 7386, `application/merge-patch+json`) as kube-apiserver applies it.

kube-apiserver calls gopkg.in/evanphx/json-patch.v4 `MergePatch`: a null deletes a key, objects
merge recursively, anything else replaces. Two details of that library are kept: nulls are pruned
from objects that are added whole (also objects inside added arrays), while null array elements
stay; a patch value that is an object replacing a non-object is pruned, an array replacing an
object is not. `parse` mirrors the handler's decoding (handlers/patch.go `applyJSPatch`).
Called by the patch handler, and by `kubectl label/annotate/scale` traffic above all.
"""

from __future__ import annotations

from typing import Any

import msgspec

from apiserver.patching import PatchError, decode_body, go_kind

# jsonpatch.ErrBadJSONPatch, answered as 400 by the handler.
_BAD_PATCH = "Invalid JSON Patch"


def parse(body: bytes) -> dict[str, Any]:
    """Decode a merge patch body as the handler does (fieldValidation Warn or Strict, the
    default): kjson.UnmarshalStrict into a map first, then MergePatch's own checks."""
    try:
        decoded = decode_body(body)
    except ValueError as err:
        raise PatchError.bad_request(f"error decoding patch: {err}") from None
    _check_patch(decoded)
    return decoded


def _check_patch(patch: Any) -> None:
    if patch is None:
        raise PatchError.bad_request(_BAD_PATCH)  # MergePatch refuses a null document
    if not isinstance(patch, dict):
        raise PatchError.bad_request(
            f"error decoding patch: json: cannot unmarshal {go_kind(patch)} "
            "into Go value of type map[string]interface {}")


def apply(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Merge `patch` into a copy of `doc` (mergeDocs)."""
    _check_patch(patch)
    result = msgspec.json.decode(msgspec.json.encode(doc))
    _merge_objects(result, msgspec.json.decode(msgspec.json.encode(patch)))
    return result


def _merge_objects(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
        elif doc.get(key) is None:
            doc[key] = _prune_nulls(value)
        else:
            doc[key] = _merge_value(doc[key], value)


def _merge_value(current: Any, patch: Any) -> Any:
    if not isinstance(current, dict):
        return _prune_nulls(patch)
    if not isinstance(patch, dict):
        return patch  # upstream returns the patch value as it came, nulls and all
    _merge_objects(current, patch)
    return current


def _prune_nulls(value: Any) -> Any:
    """pruneNulls: drop null members of objects at any depth; null array elements are kept."""
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [None if v is None else _prune_nulls(v) for v in value]
    return value
