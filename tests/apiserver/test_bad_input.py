"""Bad input gets the Status a real kube-apiserver returns, and the store is left untouched.

Raw HTTP against an in-process server (the `api` fixture). Every case checks the status code, the
Status reason, a recognisable part of the message, and that no revision was spent.
"""

from __future__ import annotations

import msgspec
import pytest

from tests.conftest import InProcess

CMS = "/api/v1/namespaces/default/configmaps"


def _cm(name: str = "c1", **extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}, **extra}


@pytest.mark.parametrize(
    "content_type, body, code, reason, fragment",
    [
        ("application/json", b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {', 400, "BadRequest", "json"),
        ("application/json", b"[1, 2]", 400, "BadRequest", "unrecognized"),
        ("application/yaml", b"metadata: [unclosed", 400, "BadRequest", "yaml"),
        ("application/vnd.kubernetes.protobuf", b"k8s\x00\x0a\xff", 400, "BadRequest", "protobuf"),
        ("application/vnd.kubernetes.protobuf", b"nope", 400, "BadRequest", "protobuf"),
        ("text/plain", b"hello", 415, "UnsupportedMediaType", "unknown format"),
        ("application/json", b'{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}', 400, "BadRequest",
         "does not match the expected kind"),
        ("application/json", b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":"str"}', 400,
         "BadRequest", "cannot unmarshal string into Go struct field"),
    ],
    ids=["truncated json", "json array", "broken yaml", "truncated protobuf", "no protobuf magic",
         "unknown media type", "wrong kind for the endpoint", "wrong json type"],
)
async def test_a_malformed_body_is_refused_and_nothing_is_stored(api: InProcess, content_type: str, body: bytes,
                                                                 code: int, reason: str, fragment: str) -> None:
    before = api.store.revision
    status, answer, _ = await api.request("POST", CMS, data=body, headers={"Content-Type": content_type})
    assert (status, answer["reason"], answer["code"]) == (code, reason, code)
    assert fragment in answer["message"]
    assert api.store.revision == before


async def test_an_oversized_body_is_413_and_nothing_is_stored(api: InProcess) -> None:
    before = api.store.revision
    huge = msgspec.json.encode(_cm(data={"k": "x" * (3 * 1024 * 1024 + 10)}))
    status, answer, _ = await api.request("POST", CMS, data=huge, headers={"Content-Type": "application/json"})
    assert status == 413 and answer["reason"] == "RequestEntityTooLarge"
    assert api.store.revision == before


async def test_unknown_fields_follow_field_validation(api: InProcess) -> None:
    obj = _cm(bogus=1)
    before = api.store.revision
    status, answer, _ = await api.request("POST", CMS + "?fieldValidation=Strict", json=obj)
    assert status == 400 and answer["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"')
    assert api.store.revision == before
    status, created, headers = await api.request("POST", CMS + "?fieldValidation=Warn", json=obj)
    assert status == 201 and "bogus" not in created
    assert headers.getall("Warning") == ['299 - "unknown field \\"bogus\\""']
    status, created, headers = await api.request("POST", CMS + "?fieldValidation=Ignore",
                                                 json=_cm("c2", bogus=1))
    assert status == 201 and "bogus" not in created and "Warning" not in headers
    status, answer, _ = await api.request("POST", CMS + "?fieldValidation=Loud", json=_cm("c3"))
    assert status == 400 and "fieldValidation" in answer["message"]


async def test_invalid_names_are_422_with_one_cause_per_field(api: InProcess) -> None:
    before = api.store.revision
    obj = _cm("Bad_Name")
    obj["metadata"]["labels"] = {"-bad": "ok"}
    status, answer, _ = await api.request("POST", CMS, json=obj)
    assert status == 422 and answer["reason"] == "Invalid"
    fields = [cause["field"] for cause in answer["details"]["causes"]]
    assert fields == ["metadata.name", "metadata.labels"]
    assert answer["message"].startswith('ConfigMap "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name"')
    assert api.store.revision == before


async def test_a_stale_resource_version_is_a_conflict(api: InProcess) -> None:
    status, created, _ = await api.request("POST", CMS, json=_cm())
    first = dict(created)
    created["data"] = {"k": "w"}
    status, _, _ = await api.request("PUT", CMS + "/c1", json=created)
    assert status == 200
    before = api.store.revision
    first["data"] = {"k": "lost"}
    status, answer, _ = await api.request("PUT", CMS + "/c1", json=first)
    assert status == 409 and answer["reason"] == "Conflict"
    assert answer["message"] == ('Operation cannot be fulfilled on configmaps "c1": the object has been modified; '
                                 "please apply your changes to the latest version and try again")
    assert answer["details"] == {"name": "c1", "kind": "configmaps"}
    assert api.store.revision == before


async def test_compacted_revisions_answer_410(api: InProcess) -> None:
    for i in range(5):
        await api.request("POST", CMS, json=_cm(f"c{i}"))
    status, page, _ = await api.request("GET", CMS + "?limit=2")
    token = page["metadata"]["continue"]
    old = int(page["metadata"]["resourceVersion"])
    await api.request("POST", CMS, json=_cm("later"))
    await api.store.compact(api.store.revision)
    status, answer, _ = await api.request("GET", f"{CMS}?limit=2&continue={token}")
    assert status == 410 and answer["reason"] == "Expired"
    assert answer["message"].startswith("The provided continue parameter is too old")
    status, answer, _ = await api.request("GET", f"{CMS}?resourceVersion={old}&resourceVersionMatch=Exact")
    assert status == 410 and answer["reason"] == "Expired"
    async with api.session.get(f"{api.url}{CMS}?watch=true&resourceVersion={old}") as resp:
        event = msgspec.json.decode(await resp.content.readline())
    assert event["type"] == "ERROR" and event["object"]["code"] == 410
    assert event["object"]["message"].startswith(f"too old resource version: {old}")


@pytest.mark.parametrize(
    "method, path, code, reason",
    [
        ("GET", "/api/v1/nosuchthings", 404, "NotFound"),
        ("GET", "/apis/nosuch.group/v1/things", 404, "NotFound"),
        ("PUT", CMS, 405, "MethodNotAllowed"),
        ("GET", CMS + "?continue=garbage", 400, "BadRequest"),
        ("GET", CMS + "?resourceVersionMatch=Exact", 422, "Invalid"),
        ("GET", CMS + "?labelSelector=a%20in%20(", 400, "BadRequest"),
        ("GET", CMS + "?fieldSelector=spec.nope%3Dx", 400, "BadRequest"),
        ("GET", CMS + "?watch=true&sendInitialEvents=true", 422, "Invalid"),
        ("GET", CMS + "?resourceVersion=999999", 504, "Timeout"),
    ],
    ids=["unknown resource", "unknown group", "PUT on a collection", "garbage continue token",
         "resourceVersionMatch without resourceVersion", "broken label selector", "unsupported field selector",
         "sendInitialEvents without NotOlderThan", "resourceVersion from the future"],
)
async def test_bad_requests_get_the_real_status(api: InProcess, method: str, path: str, code: int,
                                                reason: str) -> None:
    status, answer, _ = await api.request(method, path)
    assert (status, answer["kind"], answer["reason"]) == (code, "Status", reason)
