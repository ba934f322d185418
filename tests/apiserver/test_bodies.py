"""Undecodable request bodies: kube's BadRequest text, Go's JSON errors, in create and update alike."""

from __future__ import annotations

import pytest

from apiserver import json_syntax

NS = "/api/v1/namespaces"
KIND = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'


@pytest.mark.parametrize("body, error", [
    (b"", "unexpected end of JSON input"),
    (b'{"a":', "unexpected end of JSON input"),
    (b"{bad}", "invalid character 'b' looking for beginning of object key string"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
    (b"[1 2]", "invalid character '2' after array element"),
    (b'{"a":1}x', "invalid character 'x' after top-level value"),
    (b"nul", "unexpected end of JSON input"),
    (b"nulx", "invalid character 'x' in literal null (expecting 'l')"),
    (b'{"a":-x}', "invalid character 'x' in numeric literal"),
    (b'{"a":1.}', "invalid character '}' after decimal point in numeric literal"),
    (b'{"a":1e}', "invalid character '}' in exponent of numeric literal"),
    (b'{"a":"\\q"}', "invalid character 'q' in string escape code"),
    (b'{"a":"\n"}', "invalid character '\\n' in string literal"),
    (b"{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
    (b'{"a":1}', None),
], ids=lambda v: repr(v))
def test_go_json_syntax_errors(body, error):
    assert json_syntax.error_of(body) == error


async def test_a_deeply_nested_broken_body_is_still_a_bad_request(api):
    status, answer, _ = await api.request("POST", NS, data=b"[" * 100_000, headers={"Content-Type": "application/json"})
    assert status == 400 and answer["reason"] == "BadRequest", answer
    assert "json parse error: invalid character '[' exceeded max depth" in answer["message"]
    status, answer, _ = await api.request("POST", NS, data=b"a: " + b"[" * 20_000,
                                          headers={"Content-Type": "application/yaml"})
    assert status == 400 and answer["reason"] == "BadRequest", answer


@pytest.mark.parametrize("method, path", [("POST", NS), ("PUT", f"{NS}/default")], ids=["create", "update"])
@pytest.mark.parametrize("content_type, body, message", [
    ("application/json", b'{"metadata": {"name": ',
     "couldn't get version/kind; json parse error: unexpected end of JSON input ({\"metadata\": {\"name\": )"),
    ("application/json", b"[1, 2]",
     f"couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type {KIND} (5b312c20325d)"),
    ("application/json", b'{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}} trailing',
     "couldn't get version/kind; json parse error: invalid character 't' after top-level value "
     '({"apiVersion": "v1", "kind": " ...)'),
    ("application/yaml", b"metadata: {name: [}",
     "error converting YAML to JSON: yaml: line 1: did not find expected node content"),
    ("application/vnd.kubernetes.protobuf", b'{"kind":"Namespace"}',
     "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] "
     '({"kind":"Namespace"})'),
    ("application/vnd.kubernetes.protobuf", b"k8s\x00", "empty body (6b387300)"),
], ids=["truncated JSON", "a JSON array", "trailing text", "broken YAML", "JSON sent as protobuf", "an empty envelope"])
async def test_an_undecodable_body_is_a_bad_request_naming_the_kind(api, method, path, content_type, body, message):
    before = api.store.revision
    status, answer, _ = await api.request(method, path, data=body, headers={"Content-Type": content_type})
    assert status == 400, answer
    assert answer["reason"] == "BadRequest"
    assert answer["message"].startswith("the object provided is unrecognized (must be of type Namespace): ")
    assert message in answer["message"], answer["message"]
    assert api.store.revision == before
