"""A CRD through the real HTTP API of an in-process server: live without restart, CRUD, delete.

One server per test (a fresh store), plain HTTP, aiohttp as the client. What is checked is what
a client sees: conditions, discovery, OpenAPI, the 201/422/400 answers and their causes, versions,
status and scale, tables, field selectors, and the cleanup when the CRD goes.
"""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any, AsyncIterator

import aiohttp
import pytest

from apiserver import runner
from tests.apiserver.crds import widget as w

pytestmark = pytest.mark.timeout(60)

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
V1 = "/apis/example.com/v1/namespaces/default/widgets"
V2 = "/apis/example.com/v2/namespaces/default/widgets"


class Api:
    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session, self.url = session, url

    async def call(self, method: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None,
                   content_type: str = "application/json") -> tuple[int, Any, Any]:
        kwargs: dict[str, Any] = {"headers": {"Content-Type": content_type, **(headers or {})}}
        if body is not None:
            kwargs["json"] = body
        async with self.session.request(method, self.url + path, **kwargs) as response:
            return response.status, await response.json(content_type=None), response.headers


@pytest.fixture
async def api(tmp_path: Any) -> AsyncIterator[Api]:
    running = await runner.start(str(tmp_path / "data"), port=0)
    try:
        async with aiohttp.ClientSession() as session:
            yield Api(session, running.url)
    finally:
        await running.stop()


async def _established(api: Api, name: str = w.NAME, timeout: float = 1.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status, crd, _ = await api.call("GET", f"{CRDS}/{name}")
        conditions = {c["type"]: c for c in (crd.get("status") or {}).get("conditions") or []}
        if conditions.get("Established", {}).get("status") == "True":
            return crd
        assert time.monotonic() < deadline, f"not established within {timeout}s: {crd.get('status')}"
        await asyncio.sleep(0.02)


async def _create_crd(api: Api) -> dict[str, Any]:
    status, body, _ = await api.call("POST", CRDS, w.crd())
    assert status == 201, body
    return await _established(api)


async def test_a_new_crd_is_established_within_a_second_and_served(api: Api) -> None:
    status, body, _ = await api.call("GET", V1)
    assert status == 404
    crd = await _create_crd(api)
    conditions = {c["type"]: c for c in crd["status"]["conditions"]}
    assert conditions["NamesAccepted"]["reason"] == "NoConflicts"
    assert conditions["Established"]["reason"] == "InitialNamesAccepted"
    assert crd["status"]["acceptedNames"]["kind"] == "Widget"
    assert crd["status"]["storedVersions"] == ["v1"]
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    status, resources, _ = await api.call("GET", "/apis/example.com/v1")
    assert status == 200
    names = {r["name"]: r for r in resources["resources"]}
    assert names["widgets"]["shortNames"] == ["wd"] and names["widgets"]["categories"] == ["haru-test"]
    assert "widgets/status" in names and names["widgets/scale"]["kind"] == "Scale"
    status, root, _ = await api.call("GET", "/openapi/v3")
    assert "apis/example.com/v2" in root["paths"]
    status, doc, _ = await api.call("GET", "/openapi/v3/apis/example.com/v1")
    component = doc["components"]["schemas"]["com.example.v1.Widget"]
    assert component["properties"]["spec"]["properties"]["color"]["enum"] == ["red", "green", "blue"]


async def test_create_defaults_and_returns_the_object_in_the_requested_version(api: Api) -> None:
    await _create_crd(api)
    status, created, _ = await api.call("POST", V1, w.widget("a"))
    assert status == 201, created
    assert created["spec"] == {"replicas": 1, "maxReplicas": 10, "color": "blue"}
    assert created["metadata"]["generation"] == 1
    status, as_v2, _ = await api.call("GET", f"{V2}/a")
    assert status == 200 and as_v2["apiVersion"] == "example.com/v2" and as_v2["spec"] == created["spec"]
    status, listed, _ = await api.call("GET", V2)
    assert [i["apiVersion"] for i in listed["items"]] == ["example.com/v2"]
    status, patched, _ = await api.call("PATCH", f"{V2}/a", {"spec": {"replicas": 2}},
                                        content_type="application/merge-patch+json")
    assert status == 200, patched
    assert patched["apiVersion"] == "example.com/v2" and patched["metadata"]["generation"] == 2


async def test_schema_violations_are_422_with_one_cause_per_field(api: Api) -> None:
    await _create_crd(api)
    bad = w.widget("bad", replicas="three", color="pink", size="toolong")
    bad["spec"]["tags"] = ["a", "a"]
    status, body, _ = await api.call("POST", V1, bad)
    assert status == 422 and body["reason"] == "Invalid"
    causes = {(c["field"], c["message"]) for c in body["details"]["causes"]}
    assert ("spec.replicas", 'Invalid value: "three": spec.replicas in body must be of type integer: "string"'
            ) in causes
    # The scale subresource's own check of specReplicasPath, as upstream reports it too.
    assert ("spec.replicas", "Invalid value: 0: should be an integer") in causes
    assert ("spec.color", 'Unsupported value: "pink": supported values: "red", "green", "blue"') in causes
    assert ("spec.size", "Too long: may not be more than 5 bytes") in causes
    assert ("spec.size", 'Invalid value: "toolong": spec.size in body should match \'^[0-9]+(m|g)$\'') in causes
    assert ("spec.tags[1]", 'Duplicate value: "a"') in causes
    missing = w.widget("missing")
    del missing["spec"]["replicas"]
    status, body, _ = await api.call("POST", V1, missing)
    assert status == 422
    assert body["details"]["causes"][0] == {"reason": "FieldValueRequired", "message": "Required value",
                                            "field": "spec.replicas"}


async def test_cel_rules_reject_with_their_message(api: Api) -> None:
    await _create_crd(api)
    status, body, _ = await api.call("POST", V1, w.widget("big", replicas=20, maxReplicas=5))
    assert status == 422, body
    assert body["message"] == ('Widget.example.com "big" is invalid: spec: Invalid value: "object": '
                               'replicas must not exceed maxReplicas')


async def test_unknown_fields_are_pruned_with_a_warning_or_refused_under_strict(api: Api) -> None:
    await _create_crd(api)
    obj = w.widget("p", bogus=1)
    obj["spec"]["extra"] = {"kept": True}
    status, body, headers = await api.call("POST", V1, obj)
    assert status == 201
    assert "bogus" not in body["spec"] and body["spec"]["extra"] == {"kept": True}
    assert '299 - "unknown field \\"spec.bogus\\""' in headers.getall("Warning")
    status, body, _ = await api.call("POST", V1 + "?fieldValidation=Strict", w.widget("q", bogus=1))
    assert status == 400
    assert body["message"] == ('Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
                               'unknown field "spec.bogus"')


async def test_status_and_scale_subresources(api: Api) -> None:
    await _create_crd(api)
    await api.call("POST", V1, w.widget("s", replicas=2))
    status, obj, _ = await api.call("GET", f"{V1}/s")
    obj["status"] = {"replicas": 2, "selector": "app=s", "observedGeneration": 1}
    status, updated, _ = await api.call("PUT", f"{V1}/s/status", obj)
    assert status == 200, updated
    assert updated["status"]["replicas"] == 2 and updated["metadata"]["generation"] == 1
    status, scale, _ = await api.call("GET", f"{V1}/s/scale")
    assert scale == {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale["metadata"],
                     "spec": {"replicas": 2}, "status": {"replicas": 2, "selector": "app=s"}}
    status, scaled, _ = await api.call("PATCH", f"{V1}/s/scale", {"spec": {"replicas": 4}},
                                       content_type="application/merge-patch+json")
    assert status == 200, scaled
    assert scaled["spec"]["replicas"] == 4
    status, obj, _ = await api.call("GET", f"{V1}/s")
    assert obj["spec"]["replicas"] == 4 and obj["metadata"]["generation"] == 2 and obj["status"]["replicas"] == 2


async def test_tables_use_the_printer_columns_and_field_selectors_the_selectable_fields(api: Api) -> None:
    await _create_crd(api)
    await api.call("POST", V1, w.widget("red", color="red", replicas=3))
    await api.call("POST", V1, w.widget("green", color="green"))
    table_accept = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    status, table, _ = await api.call("GET", V1, headers=table_accept)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Replicas", "Color", "Ready", "Age"]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 1, 0]
    rows = {r["cells"][0]: r["cells"] for r in table["rows"]}
    assert rows["red"][1:4] == [3, "red", None]
    status, listed, _ = await api.call("GET", V1 + "?fieldSelector=spec.color%3Dred")
    assert status == 200 and [i["metadata"]["name"] for i in listed["items"]] == ["red"]
    status, body, _ = await api.call("GET", V1 + "?fieldSelector=spec.size%3D1m")
    assert status == 400 and body["message"] == "field label not supported: spec.size"


async def test_deleting_the_crd_removes_its_resources_and_routes(api: Api) -> None:
    await _create_crd(api)
    await api.call("POST", V1, w.widget("x"))
    status, crd, _ = await api.call("DELETE", f"{CRDS}/{w.NAME}")
    assert status == 200
    deadline = time.monotonic() + 2
    while True:
        status, _, _ = await api.call("GET", f"{CRDS}/{w.NAME}")
        if status == 404:
            break
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    status, _, _ = await api.call("GET", V1)
    assert status == 404
    status, _, _ = await api.call("GET", "/apis/example.com/v1")
    assert status == 404
    # Served again from scratch: the old instance is gone from storage too.
    await _create_crd(api)
    status, listed, _ = await api.call("GET", V1)
    assert listed["items"] == []


async def test_name_conflicts_leave_names_not_accepted(api: Api) -> None:
    await _create_crd(api)
    other = copy.deepcopy(w.crd())
    other["metadata"]["name"] = "gadgets.example.com"
    other["spec"]["names"] = {"plural": "gadgets", "singular": "gadget", "kind": "Widget"}
    status, body, _ = await api.call("POST", CRDS, other)
    assert status == 201, body
    await asyncio.sleep(0.3)
    status, got, _ = await api.call("GET", f"{CRDS}/gadgets.example.com")
    conditions = {c["type"]: c for c in got["status"]["conditions"]}
    assert conditions["NamesAccepted"]["status"] == "False"
    assert conditions["NamesAccepted"]["reason"] == "KindConflict"
    assert conditions["NamesAccepted"]["message"] == '"Widget" is already in use'
    assert conditions["Established"]["status"] == "False"
    status, _, _ = await api.call("GET", "/apis/example.com/v1/namespaces/default/gadgets")
    assert status == 404


async def test_an_invalid_crd_is_422_with_upstream_messages(api: Api) -> None:
    bad = w.crd()
    bad["metadata"]["name"] = "wrong.example.com"
    bad["spec"]["versions"][1]["storage"] = True
    status, body, _ = await api.call("POST", CRDS, bad)
    assert status == 422 and body["reason"] == "Invalid"
    fields = [c["field"] for c in body["details"]["causes"]]
    assert fields == ["metadata.name", "spec.versions"]
    assert body["message"].startswith('CustomResourceDefinition.apiextensions.k8s.io "wrong.example.com" is invalid: '
                                      '[metadata.name: Invalid value: "wrong.example.com": must be '
                                      'spec.names.plural+"."+spec.group, spec.versions: Invalid value: ')
    assert body["message"].endswith("must have exactly one version marked as storage version]")


async def test_cluster_scoped_custom_resources(api: Api) -> None:
    status, body, _ = await api.call("POST", CRDS, w.crd(scope="Cluster"))
    assert status == 201, body
    await _established(api)
    status, created, _ = await api.call("POST", "/apis/example.com/v1/widgets", w.widget("c"))
    assert status == 201 and "namespace" not in created["metadata"]
    status, _, _ = await api.call("GET", V1)
    assert status == 404


async def test_crds_are_served_again_after_a_restart(tmp_path: Any) -> None:
    data = str(tmp_path / "data")
    running = await runner.start(data, port=0)
    try:
        async with aiohttp.ClientSession() as session:
            api = Api(session, running.url)
            await _create_crd(api)
            await api.call("POST", V1, w.widget("kept"))
    finally:
        await running.stop()
    running = await runner.start(data, port=0)
    try:
        async with aiohttp.ClientSession() as session:
            status, got, _ = await Api(session, running.url).call("GET", f"{V2}/kept")
            assert status == 200 and got["apiVersion"] == "example.com/v2"
    finally:
        await running.stop()
