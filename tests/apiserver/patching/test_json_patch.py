"""JSON patch (RFC 6902) as kube-apiserver applies it: results, library error texts, and the Status
each failure becomes. Behaviours that differ from the RFC are upstream's (evanphx/json-patch v4)."""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest

from apiserver.patching import GENERIC_422_MESSAGE, PatchError, json_patch

DOC: dict[str, Any] = {
    "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a", "b"]},
    "spec": {"replicas": 1, "ports": [80, 443]},
}


def edited(change) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    change(doc)
    return doc


APPLIES = [
    pytest.param([{"op": "add", "path": "/metadata/labels/tier", "value": "db"}],
                 edited(lambda d: d["metadata"]["labels"].update(tier="db")),
                 id="add puts a new key into an object"),
    pytest.param([{"op": "add", "path": "/metadata/finalizers/-", "value": "c"}],
                 edited(lambda d: d["metadata"]["finalizers"].append("c")),
                 id="add with - appends to an array"),
    pytest.param([{"op": "add", "path": "/metadata/finalizers/0", "value": "c"}],
                 edited(lambda d: d["metadata"]["finalizers"].insert(0, "c")),
                 id="add at an index inserts before it"),
    pytest.param([{"op": "add", "path": "/metadata/finalizers/-1", "value": "c"}],
                 edited(lambda d: d["metadata"]["finalizers"].append("c")),
                 id="add at index -1 counts from the end of the grown array"),
    pytest.param([{"op": "add", "path": "/metadata/a~1b~0c", "value": 1}],
                 edited(lambda d: d["metadata"].update({"a/b~c": 1})),
                 id="pointer tokens unescape ~1 and ~0"),
    pytest.param([{"op": "add", "path": "/metadata/labels/x"}],
                 edited(lambda d: d["metadata"]["labels"].update(x=None)),
                 id="add without a value adds null"),
    pytest.param([{"op": "remove", "path": "/metadata/labels/app"}],
                 edited(lambda d: d["metadata"]["labels"].clear()),
                 id="remove deletes a key"),
    pytest.param([{"op": "remove", "path": "/metadata/finalizers/-1"}],
                 edited(lambda d: d["metadata"]["finalizers"].pop()),
                 id="remove at a negative index counts from the end"),
    pytest.param([{"op": "replace", "path": "/spec/replicas", "value": 3}],
                 edited(lambda d: d["spec"].update(replicas=3)),
                 id="replace changes a value"),
    pytest.param([{"op": "replace", "path": "/spec/paused", "value": True}],
                 edited(lambda d: d["spec"].update(paused=True)),
                 id="replace of a missing object key adds it as upstream does"),
    pytest.param([{"op": "move", "from": "/metadata/labels", "path": "/metadata/annotations"}],
                 edited(lambda d: d["metadata"].update(annotations=d["metadata"].pop("labels"))),
                 id="move removes the source and adds it at the path"),
    pytest.param([{"op": "copy", "from": "/spec/ports/1", "path": "/spec/ports/0"}],
                 edited(lambda d: d["spec"]["ports"].insert(0, 443)),
                 id="copy adds a copy of the source"),
    pytest.param([{"op": "copy", "from": "/spec/missing", "path": "/spec/copied"}],
                 edited(lambda d: d["spec"].update(copied=None)),
                 id="copy from a missing object key copies null as upstream does"),
    pytest.param([{"op": "test", "path": "/spec/replicas", "value": 1},
                  {"op": "replace", "path": "/spec/replicas", "value": 2}],
                 edited(lambda d: d["spec"].update(replicas=2)),
                 id="a passing test lets the next operations run"),
    pytest.param([{"op": "test", "path": "/spec/missing", "value": None}], DOC,
                 id="test of a missing key against null passes"),
    pytest.param([{"op": "test", "path": "/metadata/labels", "value": {"app": "web"}}], DOC,
                 id="test compares objects structurally"),
    pytest.param([{"op": "add", "path": "spec/zzz", "value": 1}],
                 edited(lambda d: d.update(zzz=1)),
                 id="a path without a leading slash drops its first token as upstream does"),
    pytest.param([{"op": "replace", "path": "", "value": {"kind": "X"}}], {"kind": "X"},
                 id="replace of the root swaps the whole document"),
    pytest.param([], DOC, id="an empty patch changes nothing"),
]


@pytest.mark.parametrize(("patch", "expected"), APPLIES)
def test_apply(patch: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(DOC), copy.deepcopy(patch)
    assert json_patch.apply(DOC, patch) == expected
    assert (DOC, patch) == before  # inputs are never modified


FAILURES = [
    pytest.param([{"op": "add", "path": "/spec/foo/bar", "value": 1}],
                 'add operation does not apply: doc is missing path: "/spec/foo/bar": missing value',
                 id="add under a missing parent fails"),
    pytest.param([{"op": "add", "path": "/metadata/finalizers/5", "value": "c"}],
                 "error in add for path: '/metadata/finalizers/5': Unable to access invalid index: 5: "
                 "invalid index referenced", id="add past the end of an array fails"),
    pytest.param([{"op": "add", "path": "/metadata/finalizers/x", "value": "c"}],
                 "error in add for path: '/metadata/finalizers/x': value was not a proper array index: 'x': "
                 'strconv.Atoi: parsing "x": invalid syntax', id="add with a non-numeric array index fails"),
    pytest.param([{"op": "remove", "path": "/spec/missing"}],
                 "error in remove for path: '/spec/missing': Unable to remove nonexistent key: missing: missing value",
                 id="remove of a missing key fails"),
    pytest.param([{"op": "remove", "path": "/metadata/finalizers/7"}],
                 "error in remove for path: '/metadata/finalizers/7': Unable to access invalid index: 7: "
                 "invalid index referenced", id="remove past the end of an array fails"),
    pytest.param([{"op": "replace", "path": "/metadata/finalizers/3", "value": "q"}],
                 "replace operation does not apply: doc is missing key: /metadata/finalizers/3: missing value",
                 id="replace past the end of an array fails"),
    pytest.param([{"op": "replace", "path": "/spec/x/y", "value": 1}],
                 "replace operation does not apply: doc is missing path: /spec/x/y: missing value",
                 id="replace under a missing parent fails"),
    pytest.param([{"op": "replace", "path": "", "value": 5}],
                 "replace operation value must be object or array: %!w(<nil>)",
                 id="replace of the root with a scalar fails with upstream's odd text"),
    pytest.param([{"op": "move", "from": "/spec/missing", "path": "/spec/x"}],
                 "error in move for path: 'missing': Unable to remove nonexistent key: missing: missing value",
                 id="move from a missing key fails"),
    pytest.param([{"op": "move", "from": "/metadata/labels/app", "path": "/spec/a/b"}],
                 "move operation does not apply: doc is missing destination path: /spec/a/b: missing value",
                 id="move to a missing parent fails"),
    pytest.param([{"op": "copy", "from": "/spec/a/b", "path": "/spec/c"}],
                 "copy operation does not apply: doc is missing from path: /spec/a/b: missing value",
                 id="copy from a missing parent fails"),
    pytest.param([{"op": "test", "path": "/spec/replicas", "value": 2}],
                 "testing value /spec/replicas failed: test failed", id="test of a different value fails"),
    pytest.param([{"op": "test", "path": "/spec/replicas", "value": "1"}],
                 "testing value /spec/replicas failed: test failed", id="test compares JSON types"),
    pytest.param([{"op": "test", "path": "/spec/replicas", "value": 1.0}],
                 "testing value /spec/replicas failed: test failed",
                 id="test compares numbers by their JSON text so 1.0 is not 1"),
    pytest.param([{"op": "test", "path": "/spec/replicas"}],
                 "testing value /spec/replicas failed: test failed", id="test without a value fails on a present key"),
    pytest.param([{"op": "test", "path": "/x/y", "value": 1}],
                 "test operation does not apply: is missing path: /x/y: missing value",
                 id="test under a missing parent fails"),
    pytest.param([{"op": "add", "value": 1}], "add operation failed to decode path: missing value",
                 id="an add without a path fails"),
    pytest.param([{"op": "replace", "value": 1}],
                 "replace operation failed to decode path: operation missing path field: missing value",
                 id="a replace without a path fails"),
    pytest.param([{"op": "move", "path": "/a"}],
                 "move operation failed to decode from: operation, missing from field: missing value",
                 id="a move without from fails"),
    pytest.param([{"op": "frobnicate", "path": "/a"}], "Unexpected kind: frobnicate", id="an unknown op fails"),
    pytest.param([{"path": "/a"}], "Unexpected kind: unknown", id="an operation without op fails"),
    pytest.param([{"op": "replace", "path": "/spec/replicas", "value": 5},
                  {"op": "test", "path": "/spec/replicas", "value": 1}],
                 "testing value /spec/replicas failed: test failed",
                 id="a test sees the effect of earlier operations"),
]


@pytest.mark.parametrize(("patch", "message"), FAILURES)
def test_apply_failure(patch: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(PatchError) as caught:
        json_patch.apply(DOC, patch)
    err = caught.value
    assert err.message == message
    # handlers/patch.go: NewGenericServerResponse(422, ...): the detail never reaches the client.
    assert (err.code, err.reason, err.status_message, err.details) == (422, "Invalid", GENERIC_422_MESSAGE, {})


def test_copies_beyond_the_accumulated_limit_fail() -> None:
    big = {"metadata": {"name": "x"}, "data": {"blob": "x" * (1024 * 1024)}}
    patch = [{"op": "copy", "from": "/data/blob", "path": f"/data/c{i}"} for i in range(3)]
    assert len(json_patch.apply(big, patch[:2])["data"]) == 3  # two copies (2 MiB) are fine
    with pytest.raises(PatchError) as caught:
        json_patch.apply(big, patch)  # the third one passes the 3 MiB JSONPatchMaxCopyBytes
    assert caught.value.message == (
        "Unable to complete the copy, the accumulated size increase of copy is 3145734, "
        "exceeding the limit 3145728")


PARSES = [
    pytest.param(b'[{"op":"add","path":"/a","value":1}]', [{"op": "add", "path": "/a", "value": 1}],
                 id="an array of operations decodes"),
    pytest.param(b"null", [], id="a null body is no operations"),
    pytest.param(b"[null]", [{}], id="a null operation decodes to an empty one"),
]


@pytest.mark.parametrize(("body", "expected"), PARSES)
def test_parse(body: bytes, expected: list[dict[str, Any]]) -> None:
    assert json_patch.parse(body) == expected


PARSE_FAILURES = [
    pytest.param(b'{"op":"add"}', 400,
                 "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
                 id="an object body is rejected as upstream words it"),
    pytest.param(b"[1]", 400,
                 "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp",
                 id="an operation that is not an object is rejected"),
    pytest.param(b'[{"op":"add","path":5}]', 400,
                 "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string",
                 id="a path that is not a string is rejected"),
    pytest.param(b"[{", 400, "error decoding patch: unexpected end of JSON input", id="truncated JSON is rejected"),
    pytest.param(b"[x]", 400, "error decoding patch: invalid character 'x' looking for beginning of value",
                 id="invalid JSON gets Go's scanner message"),
    pytest.param(msgspec.json.encode([{"op": "test", "path": "/a"}] * 10001), 413,
                 "The allowed maximum operations in a JSON patch is 10000, got 10001",
                 id="more than ten thousand operations are too large"),
]


@pytest.mark.parametrize(("body", "code", "message"), PARSE_FAILURES)
def test_parse_failure(body: bytes, code: int, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        json_patch.parse(body)
    assert (caught.value.code, caught.value.message) == (code, message)


def test_too_many_operations_status_says_request_entity_too_large() -> None:
    with pytest.raises(PatchError) as caught:
        json_patch.parse(msgspec.json.encode([{}] * 10001))
    assert caught.value.reason == "RequestEntityTooLarge"
    assert caught.value.status_message.startswith("Request entity too large: The allowed maximum")
