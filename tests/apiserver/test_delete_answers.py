"""What DELETE and DeleteCollection answer, per resource, against the in-process server.

The expectations are written out here from kube-apiserver 1.36 (the 1.36 OpenAPI and the registry
stores' ReturnDeletedObject), so they check the generated table rather than restate it: the
deleted object for DRA kinds, services, volumes…; a Success Status for config maps, policies,
workloads and custom resources; the object with deletionTimestamp (202 only with
orphanDependents=false) while a finalizer holds it; the listed items from DeleteCollection.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from typing import Any

import pytest

from apiserver import delete_answers, openapi, registry
from tests.apiserver.crds import widget as w
from tests.conftest import InProcess

NS = "/api/v1/namespaces/default"
DRA = "/apis/resource.k8s.io/v1"
CMS = f"{NS}/configmaps"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

_REQUESTS = {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}


@dataclass(frozen=True)
class Case:
    name: str
    collection: str
    body: dict[str, Any]
    returns_object: bool


CASES = [
    Case("a DeviceClass comes back as itself", f"{DRA}/deviceclasses",
         {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}, True),
    Case("a ResourceSlice comes back as itself", f"{DRA}/resourceslices",
         {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "slice"},
          "spec": {"driver": "gpu.example.com", "allNodes": True,
                   "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "d0"}]}},
         True),
    Case("a ResourceClaimTemplate comes back as itself", f"{DRA}/namespaces/default/resourceclaimtemplates",
         {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
          "spec": {"spec": {"devices": _REQUESTS}}}, True),
    Case("a ResourceClaim comes back as itself", f"{DRA}/namespaces/default/resourceclaims",
         {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
          "spec": {"devices": _REQUESTS}}, True),
    Case("a Service comes back as itself", f"{NS}/services",
         {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}, True),
    Case("a ServiceAccount comes back as itself", f"{NS}/serviceaccounts",
         {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}, True),
    Case("a StorageClass comes back as itself", "/apis/storage.k8s.io/v1/storageclasses",
         {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
          "provisioner": "example.com/fast"}, True),
    Case("a ConfigMap answers a Success Status", CMS,
         {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}, False),
    Case("a PriorityClass answers a Success Status", "/apis/scheduling.k8s.io/v1/priorityclasses",
         {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
          "value": 1000}, False),
    Case("a Workload answers a Success Status (its store does not return the object)",
         "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/workloads",
         {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "job"},
          "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]}},
         False),
    Case("a ValidatingAdmissionPolicy answers a Success Status",
         "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
         {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
          "metadata": {"name": "vap"},
          "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                           "operations": ["CREATE"], "resources": ["pods"]}]},
                   "validations": [{"expression": "true"}]}}, False),
]


def _success_status(answer: dict[str, Any], name: str, group: str, resource: str, uid: str) -> bool:
    details = {"name": name, "kind": resource, "uid": uid, **({"group": group} if group else {})}
    return answer == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_delete_answers_the_object_or_a_status_as_upstream(api: InProcess, case: Case) -> None:
    status, created, _ = await api.request("POST", case.collection, json=case.body)
    assert status == 201, created
    name = created["metadata"]["name"]
    status, answer, _ = await api.request("DELETE", f"{case.collection}/{name}")
    assert status == 200, answer
    if case.returns_object:
        assert (answer["kind"], answer["metadata"]["name"]) == (case.body["kind"], name)
        assert answer["metadata"]["uid"] == created["metadata"]["uid"]
        assert "deletionTimestamp" not in answer["metadata"]
    else:
        group = case.body["apiVersion"].rpartition("/")[0]
        assert _success_status(answer, name, group, case.collection.rsplit("/", 1)[1], created["metadata"]["uid"])
    assert (await api.request("GET", f"{case.collection}/{name}"))[0] == 404


@pytest.mark.parametrize("case", [CASES[0], CASES[7]], ids=["DeviceClass", "ConfigMap"])
async def test_a_dry_run_delete_answers_the_same_shape_and_keeps_the_object(api: InProcess, case: Case) -> None:
    _, created, _ = await api.request("POST", case.collection, json=case.body)
    name = created["metadata"]["name"]
    before = api.store.revision
    status, answer, _ = await api.request("DELETE", f"{case.collection}/{name}", json={"dryRun": ["All"]})
    assert status == 200
    assert answer["kind"] == (case.body["kind"] if case.returns_object else "Status")
    assert api.store.revision == before
    assert (await api.request("GET", f"{case.collection}/{name}"))[0] == 200


async def test_a_finalizer_holds_the_object_which_answers_itself_and_202_only_for_orphan_false(
        api: InProcess) -> None:
    for name in ("held", "held-202"):
        await api.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap",
                                             "metadata": {"name": name, "finalizers": ["haru.test/hold"]}})
    status, marked, _ = await api.request("DELETE", f"{CMS}/held")
    assert status == 200 and marked["kind"] == "ConfigMap" and marked["metadata"]["deletionTimestamp"]
    status, marked, _ = await api.request("DELETE", f"{CMS}/held-202", json={"orphanDependents": False})
    assert status == 202 and marked["kind"] == "ConfigMap" and marked["metadata"]["deletionTimestamp"]
    assert marked["metadata"]["finalizers"] == ["haru.test/hold"]
    # Deleted at once, orphanDependents=false changes nothing: 200 and the Status.
    await api.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "free"}})
    status, answer, _ = await api.request("DELETE", f"{CMS}/free?orphanDependents=false")
    assert status == 200 and answer["status"] == "Success"


async def test_a_device_class_held_by_a_finalizer_is_answered_marked_not_gone(api: InProcess) -> None:
    body = {**CASES[0].body, "metadata": {"name": "held", "finalizers": ["haru.test/hold"]}}
    await api.request("POST", f"{DRA}/deviceclasses", json=body)
    status, marked, _ = await api.request("DELETE", f"{DRA}/deviceclasses/held", json={"orphanDependents": False})
    assert status == 202 and marked["kind"] == "DeviceClass" and marked["metadata"]["deletionTimestamp"]
    assert (await api.request("GET", f"{DRA}/deviceclasses/held"))[0] == 200


async def test_delete_collection_answers_the_list_of_what_it_deleted(api: InProcess) -> None:
    for i in range(4):
        await api.request("POST", f"{DRA}/deviceclasses", json={
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "spec": {},
            "metadata": {"name": f"dc{i}", "labels": {"batch": "odd" if i % 2 else "even"},
                         **({"finalizers": ["haru.test/hold"]} if i == 3 else {})}})
    status, listed, _ = await api.request("DELETE", f"{DRA}/deviceclasses?labelSelector=batch%3Dodd")
    assert status == 200
    assert (listed["kind"], listed["apiVersion"]) == ("DeviceClassList", "resource.k8s.io/v1")
    assert int(listed["metadata"]["resourceVersion"]) > 0
    # The items as listed before the deletes: the held one carries no deletionTimestamp here.
    assert [i["metadata"]["name"] for i in listed["items"]] == ["dc1", "dc3"]
    assert all("deletionTimestamp" not in i["metadata"] for i in listed["items"])
    _, left, _ = await api.request("GET", f"{DRA}/deviceclasses?labelSelector=batch")
    assert [i["metadata"]["name"] for i in left["items"]] == ["dc0", "dc2", "dc3"]
    assert left["items"][2]["metadata"]["deletionTimestamp"]


async def test_delete_collection_of_a_status_kind_also_answers_the_list(api: InProcess) -> None:
    await api.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one"}})
    before = api.store.revision
    status, listed, _ = await api.request("DELETE", CMS, json={"dryRun": ["All"]})
    assert status == 200 and listed["kind"] == "ConfigMapList"
    assert "one" in [i["metadata"]["name"] for i in listed["items"]] and api.store.revision == before
    status, listed, _ = await api.request("DELETE", f"{CMS}?fieldSelector=metadata.name%3Dnothing")
    assert status == 200 and (listed["kind"], listed["items"]) == ("ConfigMapList", [])


async def _established(api: InProcess) -> None:
    deadline = time.monotonic() + 2
    while True:
        _, crd, _ = await api.request("GET", f"{CRDS}/{w.NAME}")
        conditions = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
        if conditions.get("Established") == "True":
            return
        assert time.monotonic() < deadline, crd
        await asyncio.sleep(0.02)


async def test_custom_resources_answer_status_and_lists_in_the_requested_version(api: InProcess) -> None:
    status, body, _ = await api.request("POST", CRDS, json=w.crd())
    assert status == 201, body
    await _established(api)
    v1 = "/apis/example.com/v1/namespaces/default/widgets"
    v2 = "/apis/example.com/v2/namespaces/default/widgets"
    for name in ("a", "b", "held"):
        obj = w.widget(name)
        if name == "held":
            obj["metadata"]["finalizers"] = ["haru.test/hold"]
        status, created, _ = await api.request("POST", v1, json=obj)
        assert status == 201, created
    status, answer, _ = await api.request("DELETE", f"{v2}/a")
    assert status == 200 and answer["status"] == "Success"
    assert answer["details"] == {"name": "a", "group": "example.com", "kind": "widgets", "uid": answer["details"]["uid"]}
    status, marked, _ = await api.request("DELETE", f"{v2}/held")
    assert status == 200 and marked["apiVersion"] == "example.com/v2" and marked["metadata"]["deletionTimestamp"]
    status, listed, _ = await api.request("DELETE", v2)
    assert status == 200 and (listed["kind"], listed["apiVersion"]) == ("WidgetList", "example.com/v2")
    assert {i["apiVersion"] for i in listed["items"]} == {"example.com/v2"}
    assert [i["metadata"]["name"] for i in listed["items"]] == ["b", "held"]


# -- the table and the OpenAPI documents -------------------------------------------------------

def test_the_table_covers_every_built_in_delete_and_deletecollection() -> None:
    data = delete_answers.table()
    for info in registry.Registry.builtin().all():
        key = f"{info.api_version}/{info.resource}"
        for verb in ("delete", "deletecollection"):
            if verb in info.verbs:
                assert key in data[verb], f"{verb} {key} is not in {delete_answers.TABLE_PATH}"
    assert set(data["deletecollection"].values()) == {"V1Status"}


def test_the_table_is_what_the_generator_makes_from_the_1_36_client() -> None:
    pytest.importorskip("kubernetes")
    from importlib import util

    spec = util.spec_from_file_location(
        "generate_delete_answers", os.path.join(os.path.dirname(delete_answers.TABLE_PATH), "generate_delete_answers.py"))
    assert spec is not None and spec.loader is not None
    generator = util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    with open(delete_answers.TABLE_PATH, encoding="utf-8") as fh:
        assert fh.read() == generator.render(generator.build(generator._client_api_dir()))


def _delete_response_ref(document: dict[str, Any], path: str, code: str = "200") -> str:
    return document["paths"][path]["delete"]["responses"][code]["content"]["application/json"]["schema"]["$ref"]


@pytest.mark.parametrize("group, version, path, ref", [
    ("resource.k8s.io", "v1", "/apis/resource.k8s.io/v1/deviceclasses/{name}",
     "io.k8s.api.resource.v1.DeviceClass"),
    ("", "v1", "/api/v1/namespaces/{namespace}/services/{name}", "io.k8s.api.core.v1.Service"),
    ("", "v1", "/api/v1/namespaces/{namespace}/configmaps/{name}", openapi.STATUS),
    ("", "v1", "/api/v1/namespaces/{name}", openapi.STATUS),  # upstream's spec says Status here too
    ("scheduling.k8s.io", "v1alpha2", "/apis/scheduling.k8s.io/v1alpha2/namespaces/{namespace}/workloads/{name}",
     openapi.STATUS),
], ids=["DeviceClass", "Service", "ConfigMap", "Namespace", "Workload"])
def test_openapi_declares_the_delete_answer_upstream_declares(group: str, version: str, path: str,
                                                              ref: str) -> None:
    document = json.loads(openapi.group_version(registry.Registry.builtin(), group, version) or b"null")
    for code in ("200", "202"):
        assert _delete_response_ref(document, path, code) == "#/components/schemas/" + ref
    assert ref in document["components"]["schemas"]
    collection = path.rsplit("/", 1)[0]
    if "delete" in document["paths"].get(collection, {}):
        ops = document["paths"][collection]["delete"]["responses"]
        assert ops["200"]["content"]["application/json"]["schema"]["$ref"].endswith(openapi.STATUS)
