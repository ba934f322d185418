"""The bytes kube-apiserver's Go encoder writes, through the HTTP API of an in-process server.

Stored built-in objects have omitempty applied and Go's field order; custom resources keep what
their writers sent; a Status is metav1.Status in struct order; every compact JSON body ends with a
newline (json.Encoder); `?pretty=true` and curl, Wget and browser User-Agents get MarshalIndent.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec
import pytest

from tests.apiserver.crds import widget as w
from tests.conftest import InProcess

pytestmark = pytest.mark.timeout(60)

CMS = "/api/v1/namespaces/default/configmaps"


async def _raw(api: InProcess, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
               ) -> tuple[int, bytes]:
    sent = {"Content-Type": "application/json", "User-Agent": "haru-tests", **(headers or {})}
    data = None if body is None else msgspec.json.encode(body)
    async with api.session.request(method, api.url + path, data=data, headers=sent) as resp:
        return resp.status, await resp.read()


def _stored(api: InProcess, key: str) -> bytes:
    record = api.store.get(key)
    assert record is not None
    return bytes(record.value)


async def test_a_created_configmap_is_stored_without_empty_maps_in_go_order(api: InProcess) -> None:
    status, body = await _raw(api, "POST", CMS, {
        "apiVersion": "v1", "kind": "ConfigMap", "data": {"b": "2", "a": "1"}, "immutable": False,
        "metadata": {"labels": {}, "annotations": {}, "name": "c1", "finalizers": []}})
    assert status == 201, body
    stored = _stored(api, "/registry/core/configmaps/default/c1")
    obj = msgspec.json.decode(stored)
    assert list(obj) == ["kind", "apiVersion", "metadata", "immutable", "data"]  # Go order; immutable is a pointer
    assert list(obj["metadata"]) == ["name", "namespace", "uid", "resourceVersion", "creationTimestamp",
                                     "managedFields"]
    assert list(obj["data"]) == ["a", "b"] and obj["immutable"] is False
    assert body == stored + b"\n"  # the stored bytes, and json.Encoder's newline
    # The field manager saw the object as Go decodes it: nobody owns the dropped labels.
    assert b"f:labels" not in stored and b"f:annotations" not in stored


async def test_patching_labels_to_an_empty_map_stores_no_labels_and_changes_nothing(api: InProcess) -> None:
    status, _ = await _raw(api, "POST", CMS, {"metadata": {"name": "c2"}, "data": {"a": "1"}})
    assert status == 201
    before = _stored(api, "/registry/core/configmaps/default/c2")
    status, body = await _raw(api, "PATCH", f"{CMS}/c2", {"metadata": {"labels": {}}},
                              headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200, body
    assert _stored(api, "/registry/core/configmaps/default/c2") == before  # a no-op, as for kube
    assert b'"labels"' not in body


async def test_pointer_zero_values_are_kept(api: InProcess) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d0"},
                  "spec": {"replicas": 0, "paused": False, "selector": {"matchLabels": {"app": "d0"}},
                           "template": {"metadata": {"labels": {"app": "d0"}},
                                        "spec": {"hostUsers": False, "nodeName": "",
                                                 "containers": [{"name": "c", "image": "nginx"}]}}}}
    status, body = await _raw(api, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment)
    assert status == 201, body
    obj = msgspec.json.decode(_stored(api, "/registry/apps/deployments/default/d0"))
    assert obj["spec"]["replicas"] == 0 and obj["spec"]["template"]["spec"]["hostUsers"] is False
    assert "paused" not in obj["spec"] and "nodeName" not in obj["spec"]["template"]["spec"]
    assert list(obj["spec"])[:3] == ["replicas", "selector", "template"]
    assert obj["status"] == {}  # a non-pointer struct: Go writes it even though nobody set it


async def _established(api: InProcess) -> None:
    deadline = time.monotonic() + 5
    while True:
        status, body = await _raw(api, "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{w.NAME}")
        conditions = msgspec.json.decode(body).get("status", {}).get("conditions") or []
        if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
            return
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)


async def test_custom_resources_keep_their_empty_maps_and_lists(api: InProcess) -> None:
    status, body = await _raw(api, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", w.crd())
    assert status == 201, body
    await _established(api)
    widget = w.widget("w1", extra={}, tags=[])
    status, body = await _raw(api, "POST", "/apis/example.com/v1/namespaces/default/widgets", widget)
    assert status == 201, body
    obj = msgspec.json.decode(body)
    assert obj["spec"]["extra"] == {} and obj["spec"]["tags"] == []
    assert list(obj)[:2] == ["apiVersion", "kind"]  # as sent: no Go struct to order by


async def test_a_409_status_is_the_exact_go_bytes(api: InProcess) -> None:
    cm = {"metadata": {"name": "dup"}}
    assert (await _raw(api, "POST", CMS, cm))[0] == 201
    status, body = await _raw(api, "POST", CMS, cm)
    assert status == 409
    assert body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                    b'"message":"configmaps \\"dup\\" already exists","reason":"AlreadyExists",'
                    b'"details":{"name":"dup","kind":"configmaps"},"code":409}\n')


async def test_a_422_status_orders_details_and_causes_as_go_does(api: InProcess) -> None:
    status, body = await _raw(api, "POST", CMS, {"metadata": {"name": "Bad_Name"}})
    assert status == 422
    status_obj = msgspec.json.decode(body)
    assert list(status_obj) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert list(status_obj["details"]) == ["name", "kind", "causes"]
    assert all(list(c) == ["reason", "message", "field"] for c in status_obj["details"]["causes"])
    assert body.endswith(b"}\n")


async def test_lists_end_with_a_newline_and_indent_for_curl(api: InProcess) -> None:
    assert (await _raw(api, "POST", CMS, {"metadata": {"name": "l1"}}))[0] == 201
    status, body = await _raw(api, "GET", CMS)
    assert status == 200 and body.endswith(b"]}\n")
    status, pretty = await _raw(api, "GET", CMS, headers={"User-Agent": "curl/8.5.0"})
    assert status == 200 and pretty == msgspec.json.format(body, indent=2)
    assert pretty.startswith(b'{\n  "kind": "ConfigMapList",\n  "apiVersion": "v1",\n  "metadata": {\n')


@pytest.mark.parametrize("query, agent, indented", [
    ("?pretty=true", "kubectl/v1.36.3", True),
    ("?pretty=1", "haru-tests", True),
    ("", "curl/8.5.0", True),
    ("", "Wget/1.21.4", True),
    ("", "Mozilla/5.0 (X11; Linux x86_64)", True),
    ("?pretty=false", "curl/8.5.0", False),   # the query wins over the User-Agent
    ("?pretty=nonsense", "curl/8.5.0", False),  # strconv.ParseBool fails: false
    ("?pretty=", "curl/8.5.0", True),        # empty: the User-Agent decides
    ("", "Mozilla/4.0", False),
    ("", "kubectl/v1.36.3", False),
], ids=lambda v: repr(v))
async def test_pretty_printing_follows_kubes_rule(api: InProcess, query: str, agent: str, indented: bool) -> None:
    assert (await _raw(api, "POST", CMS, {"metadata": {"name": "p1"}, "data": {"k": "v"}}))[0] == 201
    stored = _stored(api, "/registry/core/configmaps/default/p1")
    status, body = await _raw(api, "GET", f"{CMS}/p1{query}", headers={"User-Agent": agent})
    assert status == 200
    if indented:
        assert body == msgspec.json.format(stored, indent=2)  # MarshalIndent: no final newline
        assert body.startswith(b'{\n  "kind": "ConfigMap",\n  "apiVersion": "v1",\n  "metadata": {\n    "name": "p1",')
    else:
        assert body == stored + b"\n"


async def test_an_error_for_curl_is_indented_too(api: InProcess) -> None:
    status, body = await _raw(api, "GET", f"{CMS}/missing", headers={"User-Agent": "curl/8.5.0"})
    assert status == 404
    assert body == (b'{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n'
                    b'  "message": "configmaps \\"missing\\" not found",\n  "reason": "NotFound",\n'
                    b'  "details": {\n    "name": "missing",\n    "kind": "configmaps"\n  },\n  "code": 404\n}')


async def test_a_binding_puts_nodename_in_its_podspec_place(api: InProcess) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b1"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert (await _raw(api, "POST", "/api/v1/namespaces/default/pods", pod))[0] == 201
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b1"}, "target": {"kind": "Node", "name": "n1"}}
    status, body = await _raw(api, "POST", "/api/v1/namespaces/default/pods/b1/binding", binding)
    assert status == 201, body
    spec = list(msgspec.json.decode(_stored(api, "/registry/core/pods/default/b1"))["spec"])
    # PodSpec: ... serviceAccountName, serviceAccount, nodeName, ..., securityContext, ..., schedulerName
    assert spec.index("serviceAccountName") < spec.index("nodeName") < spec.index("schedulerName"), spec


async def test_seeded_objects_are_stored_in_go_order(api: InProcess) -> None:
    obj = msgspec.json.decode(_stored(api, "/registry/core/namespaces/default"))
    assert list(obj) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(obj["metadata"]) == ["name", "uid", "resourceVersion", "creationTimestamp", "labels"]


async def test_what_the_strategy_and_admission_add_deep_down_goes_to_its_go_place(api: InProcess) -> None:
    """LimitRanger fills a container's resources; the Job strategy adds template labels."""
    limit_range = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults"},
                   "spec": {"limits": [{"type": "Container", "default": {"memory": "128Mi", "cpu": "500m"},
                                        "defaultRequest": {"memory": "64Mi", "cpu": "100m"}}]}}
    assert (await _raw(api, "POST", "/api/v1/namespaces/default/limitranges", limit_range))[0] == 201
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lr"},
           "spec": {"containers": [{"name": "c", "image": "nginx", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                    "volumes": [{"name": "v", "emptyDir": {}}]}}
    status, body = await _raw(api, "POST", "/api/v1/namespaces/default/pods", pod)
    assert status == 201, body
    container = msgspec.json.decode(_stored(api, "/registry/core/pods/default/lr"))["spec"]["containers"][0]
    keys = list(container)
    assert keys.index("image") < keys.index("resources") < keys.index("volumeMounts"), keys
    assert list(container["resources"]) == ["limits", "requests"]
    assert list(container["resources"]["limits"]) == ["cpu", "memory"]

    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"template": {"metadata": {"labels": {"zz": "1"}},
                                 "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}
    status, body = await _raw(api, "POST", "/apis/batch/v1/namespaces/default/jobs", job)
    assert status == 201, body
    labels = msgspec.json.decode(_stored(api, "/registry/batch/jobs/default/j"))["spec"]["template"]["metadata"]["labels"]
    assert list(labels) == sorted(labels) and "batch.kubernetes.io/controller-uid" in labels


async def test_a_status_escapes_html_characters_as_go_does(api: InProcess) -> None:
    status, body = await _raw(api, "GET", f"{CMS}/a%26b%3Cc%3E")
    assert status == 404
    assert b'"message":"configmaps \\"a\\u0026b\\u003cc\\u003e\\" not found"' in body, body
    assert msgspec.json.decode(body)["details"]["name"] == "a&b<c>"
