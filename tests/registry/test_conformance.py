"""Every stored kind in the registry goes through the same life: create, get, list, watch, update,
delete — and an invalid name is refused with 422 — over raw HTTP against an in-process server.

Like kube-apiserver's `resttest`, one test parametrized over every registry row, so a new kind gets
checked without anyone writing a test for it. Kinds whose validation needs more than metadata get
a minimal spec in `SPECS`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from apiserver import registry
from apiserver.features import FeatureGates
from tests.apiserver.kinds.csr_requests import request_field
from tests.conftest import InProcess

_POD_TEMPLATE = {"metadata": {"labels": {"app": "x"}},
                 "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
_POD_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
SPECS: dict[tuple[str, str], dict[str, Any]] = {
    ("autoscaling", "horizontalpodautoscalers"): {"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}},
    ("", "pods"): {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    ("", "podtemplates"): {"template": _POD_TEMPLATE},
    ("", "replicationcontrollers"): {"spec": {"selector": {"app": "x"}, "template": _POD_TEMPLATE}},
    ("", "services"): {"spec": {"ports": [{"port": 80}]}},
    ("", "persistentvolumeclaims"): {"spec": {"accessModes": ["ReadWriteOnce"],
                                              "resources": {"requests": {"storage": "1Gi"}}}},
    ("apps", "deployments"): {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _POD_TEMPLATE}},
    ("apps", "replicasets"): {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _POD_TEMPLATE}},
    ("apps", "daemonsets"): {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _POD_TEMPLATE}},
    ("apps", "statefulsets"): {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _POD_TEMPLATE,
                                        "serviceName": "x"}},
    ("batch", "jobs"): {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}],
                                                       "restartPolicy": "Never"}}}},
    ("batch", "cronjobs"): {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}}}},
    ("scheduling.k8s.io", "priorityclasses"): {"value": 1000},
    ("certificates.k8s.io", "certificatesigningrequests"): {"spec": {
        "request": request_field(), "signerName": "example.com/signer", "usages": ["client auth"]}},
    ("", "events"): {"involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "R",
                     "message": "m", "type": "Normal"},
    ("events.k8s.io", "events"): {"eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "haru.test/c",
                                  "reportingInstance": "i", "action": "Test", "reason": "R", "type": "Normal",
                                  "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}},
    ("apiextensions.k8s.io", "customresourcedefinitions"): {},  # named below: plural.group
    ("resource.k8s.io", "resourceslices"): {"spec": {
        "driver": "conformance.example.com", "allNodes": True,
        "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1}}},
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): {"spec": {
        "matchConstraints": {"resourceRules": [_POD_RULE]}, "validations": [{"expression": "true"}]}},
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): {"spec": {
        "policyName": "p", "validationActions": ["Deny"]}},
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"): {"spec": {
        "matchConstraints": {"resourceRules": [_POD_RULE]}, "reinvocationPolicy": "Never",
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}]}},
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"): {"spec": {"policyName": "p"}},
}


# Kinds whose status the API server's own controllers write right after a create.
WRITTEN_BY_THE_SERVER = {
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"),
    ("", "resourcequotas"),
    # APF's configuration controller writes their status (the Dangling condition) right after a create.
    ("flowcontrol.apiserver.k8s.io", "flowschemas"),
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"),
}


def _stored_rows() -> list[registry.ResourceInfo]:
    reg = registry.Registry.builtin(FeatureGates())
    return [info for info in reg.all() if info.stored and "create" in info.verbs]


def _name(info: registry.ResourceInfo) -> str:
    if (info.group, info.resource) == ("apiextensions.k8s.io", "customresourcedefinitions"):
        return "widgets.example.com"
    return f"conf-{info.resource}"[:60].rstrip("-")


def _crd_spec() -> dict[str, Any]:
    return {"spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                                                  "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _object(info: registry.ResourceInfo, name: str) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": info.api_version, "kind": info.kind, "metadata": {"name": name}}
    if info.namespaced:
        obj["metadata"]["namespace"] = "default"
    spec = _crd_spec() if info.resource == "customresourcedefinitions" else SPECS.get((info.group, info.resource), {})
    obj.update(msgspec.json.decode(msgspec.json.encode(spec)))
    return obj


def _collection(info: registry.ResourceInfo) -> str:
    base = f"/api/{info.version}" if not info.group else f"/apis/{info.group}/{info.version}"
    return f"{base}/namespaces/default/{info.resource}" if info.namespaced else f"{base}/{info.resource}"


@pytest.mark.parametrize("info", _stored_rows(), ids=lambda i: f"{i.group or 'core'}/{i.resource}")
async def test_every_kind_lives_through_create_get_list_watch_update_delete(api: InProcess,
                                                                            info: registry.ResourceInfo) -> None:
    collection = _collection(info)
    name = _name(info)
    status, created, _ = await api.request("POST", collection, json=_object(info, name))
    assert status == 201, created
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    assert created["kind"] == info.kind and created["apiVersion"] == info.api_version

    status, got, _ = await api.request("GET", f"{collection}/{name}")
    assert status == 200 and got["metadata"]["uid"] == created["metadata"]["uid"]
    if (info.group, info.resource) not in WRITTEN_BY_THE_SERVER:
        assert got == created

    status, listed, _ = await api.request("GET", collection)
    assert status == 200 and listed["kind"] == info.list_kind
    assert name in [item["metadata"]["name"] for item in listed["items"]]

    watch = asyncio.create_task(_first_event(api, f"{collection}?watch=true&resourceVersion="
                                                  f"{created['metadata']['resourceVersion']}&timeoutSeconds=5"))
    for _attempt in range(5):  # a server-side controller may write between our GET and PUT: 409, retry
        got["metadata"].setdefault("labels", {})["conformance"] = "updated"
        status, updated, _ = await api.request("PUT", f"{collection}/{name}", json=got)
        if status != 409 or (info.group, info.resource) not in WRITTEN_BY_THE_SERVER:
            break
        _, got, _ = await api.request("GET", f"{collection}/{name}")
    assert status == 200, updated
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    assert updated["metadata"]["labels"]["conformance"] == "updated"
    event = await watch
    assert event["type"] == "MODIFIED" and event["object"]["metadata"]["name"] == name

    status, deleted, _ = await api.request("DELETE", f"{collection}/{name}")
    assert status == 200, deleted
    status, after, _ = await api.request("GET", f"{collection}/{name}")
    if info.resource == "namespaces" or info.resource == "customresourcedefinitions":
        # These finish deleting through their controllers; the API server only marks them.
        assert status == 404 or after["metadata"].get("deletionTimestamp")
    else:
        assert status == 404 and after["reason"] == "NotFound"


@pytest.mark.parametrize("info", _stored_rows(), ids=lambda i: f"{i.group or 'core'}/{i.resource}")
async def test_every_kind_refuses_an_invalid_name_and_stores_nothing(api: InProcess,
                                                                     info: registry.ResourceInfo) -> None:
    before = api.store.revision
    obj = _object(info, "Not_A_Valid/Name")
    status, body, _ = await api.request("POST", _collection(info), json=obj)
    assert status in (400, 422), body
    assert body["kind"] == "Status" and body["status"] == "Failure"
    assert api.store.revision == before


async def _first_event(api: InProcess, path: str) -> dict[str, Any]:
    async with api.session.get(api.url + path) as resp:
        assert resp.status == 200
        line = await resp.content.readline()
        return msgspec.json.decode(line)
