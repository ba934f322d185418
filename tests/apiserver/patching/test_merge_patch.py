"""JSON merge patch (RFC 7386) as kube-apiserver applies it (evanphx/json-patch v4 MergePatch),
and the errors its handler gives for bodies that are not objects."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.patching import PatchError, merge_patch

DOC: dict[str, Any] = {
    "metadata": {"name": "web", "labels": {"app": "web", "tier": "fe"}, "finalizers": ["a", "b"]},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}},
}


def edited(change) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    change(doc)
    return doc


APPLIES = [
    pytest.param({"spec": {"replicas": 3}}, edited(lambda d: d["spec"].update(replicas=3)),
                 id="a scalar replaces a scalar"),
    pytest.param({"metadata": {"labels": {"tier": None, "env": "prod"}}},
                 edited(lambda d: d["metadata"]["labels"].update({"env": "prod"}) or d["metadata"]["labels"].pop("tier")),
                 id="objects merge key by key and null deletes a key"),
    pytest.param({"metadata": {"finalizers": ["c"]}}, edited(lambda d: d["metadata"].update(finalizers=["c"])),
                 id="an array replaces the whole array"),
    pytest.param({"spec": {"selector": None}}, edited(lambda d: d["spec"].pop("selector")),
                 id="null deletes a whole object"),
    pytest.param({"spec": {"missing": None}}, DOC, id="null for a missing key changes nothing"),
    pytest.param({"spec": {"template": {"a": 1, "b": None, "c": {"d": None}}}},
                 edited(lambda d: d["spec"].update(template={"a": 1, "c": {}})),
                 id="a new object loses its nulls at every depth"),
    pytest.param({"spec": {"list": [{"a": 1, "b": None}, None]}},
                 edited(lambda d: d["spec"].update(list=[{"a": 1}, None])),
                 id="a new array keeps null elements but prunes nulls inside its objects"),
    pytest.param({"spec": {"replicas": {"a": None, "b": 2}}},
                 edited(lambda d: d["spec"].update(replicas={"b": 2})),
                 id="an object replacing a scalar loses its nulls"),
    pytest.param({"spec": {"selector": [{"q": None}]}},
                 edited(lambda d: d["spec"].update(selector=[{"q": None}])),
                 id="an array replacing an object keeps its nulls as upstream does"),
    pytest.param({}, DOC, id="an empty patch changes nothing"),
]


@pytest.mark.parametrize(("patch", "expected"), APPLIES)
def test_apply(patch: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(DOC), copy.deepcopy(patch)
    assert merge_patch.apply(DOC, patch) == expected
    assert (DOC, patch) == before


def test_result_shares_nothing_with_the_patch() -> None:
    patch = {"spec": {"template": {"labels": {"a": "b"}}}}
    merge_patch.apply(DOC, patch)["spec"]["template"]["labels"]["a"] = "changed"
    assert patch == {"spec": {"template": {"labels": {"a": "b"}}}}


FAILURES = [
    pytest.param(b"[1]", "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}",
                 id="an array body is rejected"),
    pytest.param(b'"x"', "error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}",
                 id="a string body is rejected"),
    pytest.param(b"null", "Invalid JSON Patch", id="a null body is jsonpatch.ErrBadJSONPatch"),
    pytest.param(b'{"a":', "error decoding patch: unexpected end of JSON input", id="truncated JSON is rejected"),
]


@pytest.mark.parametrize(("body", "message"), FAILURES)
def test_parse_failure(body: bytes, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        merge_patch.parse(body)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (400, "BadRequest", message)


def test_apply_rejects_a_patch_that_is_not_an_object() -> None:
    with pytest.raises(PatchError) as caught:
        merge_patch.apply(DOC, [1])  # type: ignore[arg-type]
    assert caught.value.code == 400


def test_parse_returns_the_object() -> None:
    assert merge_patch.parse(b'{"spec":{"replicas":2}}') == {"spec": {"replicas": 2}}
