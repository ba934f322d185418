"""JSON patch (RFC 6902, `application/json-patch+json`) exactly as kube-apiserver applies it.

kube-apiserver uses gopkg.in/evanphx/json-patch.v4, whose behaviour differs from the RFC in ways
clients can see, and this module keeps them: `replace` of a missing object key adds it, `copy` from
a missing key copies null, negative array indices count from the end, a path without a leading
slash addresses the root, and the error texts are the library's. `parse` mirrors the handler's
decoding (handlers/patch.go `applyJSPatch`); `apply` mirrors `Patch.Apply`. The patch handler
calls both; a `PatchError` from `apply` becomes the generic 422 Status upstream sends.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from apiserver.patching import PatchError, decode_body, go_kind

# handlers/patch.go maxJSONPatchOperations.
MAX_OPERATIONS = 10000
# genericapiserver Config.JSONPatchMaxCopyBytes, armed into jsonpatch.AccumulatedCopySizeLimit.
MAX_COPY_BYTES = 3 * 1024 * 1024

_OP_STRING_FIELDS = ("op", "path", "from")
_ABSENT = object()
_ATOI = re.compile(r"[+-]?[0-9]+")
_POINTER_ESCAPE = re.compile(r"~[01]")


def parse(body: bytes) -> list[dict[str, Any]]:
    """Decode a JSON patch body as the handler does before applying it (fieldValidation Warn or
    Strict, the default): kjson.UnmarshalStrict into []jsonPatchOp, then DecodePatch."""
    try:
        decoded = decode_body(body)
    except ValueError as err:
        raise PatchError.bad_request(f"error decoding patch: {err}") from None
    if decoded is None:
        return []  # a null patch decodes to no operations
    if not isinstance(decoded, list):
        raise PatchError.bad_request(
            f"error decoding patch: json: cannot unmarshal {go_kind(decoded)} "
            "into Go value of type []handlers.jsonPatchOp")
    operations: list[dict[str, Any]] = []
    for item in decoded:
        if item is None:
            operations.append({})  # a null element is an operation with no fields
            continue
        if not isinstance(item, dict):
            raise PatchError.bad_request(
                f"error decoding patch: json: cannot unmarshal {go_kind(item)} "
                "into Go value of type handlers.jsonPatchOp")
        for field in _OP_STRING_FIELDS:
            value = item.get(field)
            if value is not None and not isinstance(value, str):
                raise PatchError.bad_request(
                    f"error decoding patch: json: cannot unmarshal {go_kind(value)} "
                    f"into Go struct field jsonPatchOp.{field} of type string")
        operations.append(item)
    if len(operations) > MAX_OPERATIONS:
        raise PatchError.too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {len(operations)}")
    return operations


def apply(doc: dict[str, Any], patch: list[dict[str, Any]]) -> Any:
    """Apply the operations in order to a copy of `doc`; the first failing one raises PatchError
    (422) with the library's message. The result is usually a dict; `replace` of the root "" may
    make it a list, which the caller's decoding then rejects as upstream does."""
    if not isinstance(patch, list):
        raise PatchError.bad_request(
            f"json: cannot unmarshal {go_kind(patch)} into Go value of type jsonpatch.Patch")
    # Work on copies: the operations nest their values into the result and may edit them later.
    state = _Document(msgspec.json.decode(msgspec.json.encode(doc)))
    for operation in msgspec.json.decode(msgspec.json.encode(patch)):
        try:
            state.run(operation if isinstance(operation, dict) else {})
        except _OpError as err:
            raise PatchError.unprocessable(str(err)) from None
    return state.root


class _OpError(Exception):
    """One operation failed; the text is evanphx/json-patch's error string."""


def _decode_token(token: str) -> str:
    # decodePatchKey: RFC 6901 unescaping, "~1" -> "/" and "~0" -> "~" in one left-to-right pass.
    return _POINTER_ESCAPE.sub(lambda m: "/" if m.group() == "~1" else "~", token)


def _atoi(key: str) -> int:
    """strconv.Atoi, with its error text (wrapped into the library's messages)."""
    if not _ATOI.fullmatch(key):
        raise _OpError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    index = int(key)
    if not -(2**63) <= index < 2**63:
        raise _OpError(f'strconv.Atoi: parsing "{key}": value out of range')
    return index


def _invalid_index(index: int) -> _OpError:
    return _OpError(f"Unable to access invalid index: {index}: invalid index referenced")


# Container operations, one set for objects (partialDoc) and one for arrays (partialArray).

def _get(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key)  # a missing key is not an error here, just nil
    index = _atoi(key)
    if index < 0:
        if index < -len(container):
            raise _invalid_index(index)
        index += len(container)
    if index >= len(container):
        raise _invalid_index(index)
    return container[index]


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    try:
        index = _atoi(key)
    except _OpError as err:
        raise _OpError(f"value was not a proper array index: '{key}': {err}") from None
    size = len(container) + 1
    if index >= size:
        raise _invalid_index(index)
    if index < 0:
        if index < -size:
            raise _invalid_index(index)
        index += size
    container.insert(index, value)


def _set(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    index = _atoi(key)
    if index < 0:
        if index < -len(container):
            raise _invalid_index(index)
        index += len(container)
    container[index] = value


def _remove(container: Any, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise _OpError(f"Unable to remove nonexistent key: {key}: missing value")
        del container[key]
        return
    index = _atoi(key)
    if index >= len(container):
        raise _invalid_index(index)
    if index < 0:
        if index < -len(container):
            raise _invalid_index(index)
        index += len(container)
    del container[index]


def _json_equal(left: Any, right: Any) -> bool:
    """lazyNode.equal: structural for objects and arrays, textual for scalars (so 1 != 1.0)."""
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_json_equal(a, b) for a, b in zip(left, right))
    if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
        return False
    return msgspec.json.encode(left) == msgspec.json.encode(right)


class _Document:
    """The document being patched, and one method per operation (Patch.add, Patch.remove, ...)."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.copied_bytes = 0

    def run(self, op: dict[str, Any]) -> None:
        kind = op.get("op")
        handler = {
            "add": self._add, "remove": self._remove, "replace": self._replace,
            "move": self._move, "test": self._test, "copy": self._copy,
        }.get(kind) if isinstance(kind, str) else None
        if handler is None:
            raise _OpError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
        handler(op)

    def _find(self, path: str) -> tuple[Any, str] | None:
        """findObject: the container that holds the last token, or None when any step is missing."""
        tokens = path.split("/")
        if len(tokens) < 2:
            return None
        container = self.root
        for token in tokens[1:-1]:
            try:
                child = _get(container, _decode_token(token))
            except _OpError:
                return None
            if not isinstance(child, (dict, list)):
                return None  # missing, null, or a scalar: nothing to descend into
            container = child
        return container, _decode_token(tokens[-1])

    @staticmethod
    def _string_field(op: dict[str, Any], field: str, missing: str) -> str:
        value = op.get(field)
        if value is None:
            raise _OpError(missing)
        if not isinstance(value, str):
            raise _OpError(f"json: cannot unmarshal {go_kind(value)} into Go value of type string")
        return value

    def _path(self, op: dict[str, Any], wrap: str, keep_cause: bool) -> str:
        try:
            return self._string_field(op, "path", "operation missing path field: missing value")
        except _OpError as err:
            # Some operations wrap the cause, others replace it with ErrMissing (as upstream does).
            raise _OpError(f"{wrap}: {err if keep_cause else 'missing value'}") from None

    def _from(self, op: dict[str, Any], wrap: str) -> str:
        try:
            return self._string_field(op, "from", "operation, missing from field: missing value")
        except _OpError as err:
            raise _OpError(f"{wrap}: {err}") from None

    def _add(self, op: dict[str, Any]) -> None:
        path = self._path(op, "add operation failed to decode path", keep_cause=False)
        found = self._find(path)
        if found is None:
            raise _OpError(f'add operation does not apply: doc is missing path: "{path}": missing value')
        container, key = found
        try:
            _add(container, key, op.get("value"))
        except _OpError as err:
            raise _OpError(f"error in add for path: '{path}': {err}") from None

    def _remove(self, op: dict[str, Any]) -> None:
        path = self._path(op, "remove operation failed to decode path", keep_cause=False)
        found = self._find(path)
        if found is None:
            raise _OpError(f'remove operation does not apply: doc is missing path: "{path}": missing value')
        container, key = found
        try:
            _remove(container, key)
        except _OpError as err:
            raise _OpError(f"error in remove for path: '{path}': {err}") from None

    def _replace(self, op: dict[str, Any]) -> None:
        path = self._path(op, "replace operation failed to decode path", keep_cause=True)
        if path == "":
            value = op.get("value")
            if not isinstance(value, (dict, list)):
                # The library wraps a nil error here, hence Go's "%!w(<nil>)".
                raise _OpError("replace operation value must be object or array: %!w(<nil>)")
            self.root = value
            return
        found = self._find(path)
        if found is None:
            raise _OpError(f"replace operation does not apply: doc is missing path: {path}: missing value")
        container, key = found
        try:
            _get(container, key)
        except _OpError:
            raise _OpError(f"replace operation does not apply: doc is missing key: {path}: missing value") from None
        try:
            _set(container, key, op.get("value"))
        except _OpError as err:
            raise _OpError(f"error in remove for path: '{path}': {err}") from None

    def _move(self, op: dict[str, Any]) -> None:
        source = self._from(op, "move operation failed to decode from")
        found = self._find(source)
        if found is None:
            raise _OpError(f"move operation does not apply: doc is missing from path: {source}: missing value")
        container, key = found
        try:
            value = _get(container, key)
            _remove(container, key)
        except _OpError as err:
            raise _OpError(f"error in move for path: '{key}': {err}") from None
        path = self._path(op, "move operation failed to decode path", keep_cause=True)
        found = self._find(path)
        if found is None:
            raise _OpError(f"move operation does not apply: doc is missing destination path: {path}: missing value")
        container, key = found
        try:
            _add(container, key, value)
        except _OpError as err:
            raise _OpError(f"error in move for path: '{path}': {err}") from None

    def _test(self, op: dict[str, Any]) -> None:
        path = self._path(op, "test operation failed to decode path", keep_cause=True)
        expected = op.get("value", _ABSENT)
        if path == "":
            if expected is not _ABSENT and _json_equal(self.root, expected):
                return
            raise _OpError(f"testing value {path} failed: test failed")
        found = self._find(path)
        if found is None:
            raise _OpError(f"test operation does not apply: is missing path: {path}: missing value")
        container, key = found
        try:
            actual = _get(container, key)
        except _OpError as err:
            raise _OpError(f"error in test for path: '{path}': {err}") from None
        if actual is None:
            # A missing key and a null value look the same; both match an absent or null value.
            if expected is _ABSENT or expected is None:
                return
            raise _OpError(f"testing value {path} failed: test failed")
        if expected is _ABSENT or not _json_equal(actual, expected):
            raise _OpError(f"testing value {path} failed: test failed")

    def _copy(self, op: dict[str, Any]) -> None:
        source = self._from(op, "copy operation failed to decode from")
        found = self._find(source)
        if found is None:
            raise _OpError(f"copy operation does not apply: doc is missing from path: {source}: missing value")
        container, key = found
        try:
            value = _get(container, key)  # a missing object key copies null
        except _OpError as err:
            raise _OpError(f"error in copy for from: '{source}': {err}") from None
        path = self._path(op, "copy operation failed to decode path", keep_cause=False)
        found = self._find(path)
        if found is None:
            raise _OpError(f"copy operation does not apply: doc is missing destination path: {path}: missing value")
        encoded = msgspec.json.encode(value)
        self.copied_bytes += 0 if value is None else len(encoded)
        if self.copied_bytes > MAX_COPY_BYTES:
            raise _OpError(
                "Unable to complete the copy, the accumulated size increase of copy is "
                f"{self.copied_bytes}, exceeding the limit {MAX_COPY_BYTES}")
        container, key = found
        try:
            _add(container, key, msgspec.json.decode(encoded))
        except _OpError as err:
            raise _OpError(f"error while adding value during copy: {err}") from None
