"""OpenAPI v3 documents: structure checks, and real kubectl explain/apply reading them."""

from __future__ import annotations

import collections
import json
import time

import msgspec
import pytest
from aiohttp import web

from apiserver import openapi, registry, schemas
from tests.apiserver.test_discovery import discovery_app

_ACTIONS = {"get", "list", "post", "put", "patch", "delete", "deletecollection", "watch", "watchlist", "connect"}
_PREFIX = "#/components/schemas/"


@pytest.fixture(scope="module")
def reg() -> registry.Registry:
    return registry.Registry.builtin()


@pytest.fixture(scope="module")
def docs(reg) -> dict[tuple[str, str], dict]:
    out = {}
    for group in reg.groups():
        for version in reg.served_versions(group):
            out[(group, version)] = msgspec.json.decode(openapi.group_version(reg, group, version))
    return out


def _operations(doc: dict):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method != "parameters":
                yield path, method, op


def _refs(node, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value)
            elif key == "properties" and isinstance(value, dict):
                for schema in value.values():
                    _refs(schema, found)
            else:
                _refs(value, found)
    elif isinstance(node, list):
        for item in node:
            _refs(item, found)


# -- root ---------------------------------------------------------------------------------
def test_root_names_every_served_group_version_with_its_hash(reg):
    root = openapi.root(reg)
    expected = [f"apis/{g}/{v}" if g else f"api/{v}" for g in reg.groups() for v in reg.served_versions(g)]
    assert list(root["paths"]) == expected
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    assert url == f"/openapi/v3/apis/apps/v1?hash={openapi.group_version_hash(reg, 'apps', 'v1')}"
    assert openapi.document(reg, "apis/apps/v1") == (openapi.group_version(reg, "apps", "v1"),
                                                     openapi.group_version_hash(reg, "apps", "v1"))
    for bad in ("apis/apps", "apis/autoscaling/v1", "api/v2", "version", "apis/apps/v1/extra"):
        assert openapi.document(reg, bad) is None
    assert openapi.group_version(reg, "autoscaling", "v1") is None


def test_hash_follows_the_inputs_not_the_registry_object():
    a, b = registry.Registry.builtin(), registry.Registry.builtin()
    assert openapi.root(a) == openapi.root(b)
    before = openapi.root(a)["paths"]
    a.remove("apps", "v1", "controllerrevisions")
    after = openapi.root(a)["paths"]
    changed = {p for p in before if before[p] != after[p]}
    assert changed == {"apis/apps/v1"}
    doc = msgspec.json.decode(openapi.group_version(a, "apps", "v1"))
    assert not any("controllerrevisions" in p for p in doc["paths"])


# -- every document -----------------------------------------------------------------------
def test_every_kind_has_patch_operations_that_declare_field_validation(reg, docs):
    for info in reg.all():
        doc = docs[(info.group, info.version)]
        gvk = {"group": info.group, "version": info.version, "kind": info.kind}
        patches = [op for _, method, op in _operations(doc)
                   if method == "patch" and op["x-kubernetes-group-version-kind"] == gvk]
        assert bool(patches) == ("patch" in info.verbs), info.resource
        # kubectl checks whichever PATCH of the kind it meets first: every one must qualify.
        for op in patches:
            assert "fieldValidation" in [p["name"] for p in op["parameters"]], info.resource
            assert "application/strategic-merge-patch+json" in op["requestBody"]["content"]


def test_every_operation_carries_an_action_and_a_kind(docs):
    for doc in docs.values():
        ids = [op["operationId"] for _, _, op in _operations(doc)]
        assert len(ids) == len(set(ids)), [i for i, n in collections.Counter(ids).items() if n > 1]
        for path, method, op in _operations(doc):
            assert op["x-kubernetes-action"] in _ACTIONS, (path, method)
            assert set(op["x-kubernetes-group-version-kind"]) == {"group", "version", "kind"}
            assert op["responses"], (path, method)
            if op["x-kubernetes-action"] == "patch":  # (a proxy's PATCH is a connect, as upstream)
                assert "fieldValidation" in [p["name"] for p in op["parameters"]], path


def test_components_are_exactly_what_the_document_references(docs):
    for (group, version), doc in docs.items():
        components = doc["components"]["schemas"]
        refs: set[str] = set()
        _refs(doc["paths"], refs)
        _refs(components, refs)
        assert all(r.startswith(_PREFIX) for r in refs), (group, version)
        assert {r[len(_PREFIX):] for r in refs} == set(components), (group, version)


def test_kind_schemas_carry_their_group_version_kind(reg, docs):
    for info in reg.all():
        components = docs[(info.group, info.version)]["components"]["schemas"]
        name = schemas.name_for_kind(info.group, info.version, info.kind)
        gvk = {"group": info.group, "version": info.version, "kind": info.kind}
        assert gvk in components[name]["x-kubernetes-group-version-kind"]
        if "list" in info.verbs:
            list_name = schemas.name_for_kind(info.group, info.version, info.list_kind)
            assert list_name in components, info.list_kind


def test_no_json_schema_artifacts_remain(docs):
    for doc in docs.values():
        text = json.dumps(doc)
        assert "#/$defs/" not in text and '"null"' not in text

        def walk(node):
            if isinstance(node, dict):
                assert not isinstance(node.get("type"), list), node
                for key, value in node.items():
                    if not key.startswith("x-"):
                        walk(value)
            elif isinstance(node, list):
                for item in node:
                    walk(item)
        walk(doc["components"])
    pod = docs[("", "v1")]["components"]["schemas"]["io.k8s.api.core.v1.Pod"]
    assert pod["type"] == "object" and "enum" not in pod["properties"]["kind"]
    assert pod["properties"]["spec"]["$ref"] == _PREFIX + "io.k8s.api.core.v1.PodSpec"


def test_int_or_string_and_quantity_take_the_servers_v3_form(docs):
    components = docs[("", "v1")]["components"]["schemas"]
    int_or_string = components["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
    assert int_or_string["format"] == "int-or-string"
    assert int_or_string["oneOf"] == [{"type": "integer"}, {"type": "string"}]
    assert components["io.k8s.apimachinery.pkg.api.resource.Quantity"]["oneOf"] == [
        {"type": "string"}, {"type": "number"}]
    containers = components["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert (containers["x-kubernetes-patch-merge-key"], containers["x-kubernetes-patch-strategy"]) == ("name", "merge")


def test_paths_follow_the_verbs(docs):
    core = docs[("", "v1")]["paths"]
    item = core["/api/v1/namespaces/{namespace}/pods/{name}"]
    assert {m for m in item if m != "parameters"} == {"get", "put", "patch", "delete"}
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace", "pretty"]
    collection = core["/api/v1/namespaces/{namespace}/pods"]
    assert {m for m in collection if m != "parameters"} == {"get", "post", "delete"}
    assert collection["delete"]["x-kubernetes-action"] == "deletecollection"
    assert core["/api/v1/pods"]["get"]["x-kubernetes-action"] == "list"
    assert core["/api/v1/watch/namespaces/{namespace}/pods/{name}"]["get"]["x-kubernetes-action"] == "watch"
    status = core["/api/v1/namespaces/{namespace}/pods/{name}/status"]
    assert {m for m in status if m != "parameters"} == {"get", "put", "patch"}
    exec_ = core["/api/v1/namespaces/{namespace}/pods/{name}/exec"]
    assert {exec_["get"]["x-kubernetes-action"], exec_["post"]["x-kubernetes-action"]} == {"connect"}
    assert "command" in [p["name"] for p in exec_["get"]["parameters"]]
    assert "/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}" in core
    assert set(core["/api/v1/namespaces/{namespace}/bindings"]) == {"parameters", "post"}
    nodes = core["/api/v1/nodes/{name}"]
    assert [p["name"] for p in nodes["parameters"]] == ["name", "pretty"]
    authz = docs[("authorization.k8s.io", "v1")]["paths"]
    assert set(authz["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]) == {"parameters", "post"}
    scale = docs[("apps", "v1")]["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert scale["patch"]["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "version": "v1",
                                                                 "kind": "Scale"}
    assert scale["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"] == (
        _PREFIX + "io.k8s.api.autoscaling.v1.Scale")


def test_a_custom_kind_gets_its_own_components_and_no_strategic_merge():
    reg = registry.Registry.builtin()
    widget = registry.ResourceInfo(
        group="stable.example.com", version="v1", resource="widgets", kind="Widget", singular="widget",
        namespaced=True, verbs=("create", "delete", "get", "list", "patch", "update", "watch"), builtin=False,
        schema={"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer"}}}}})
    reg.add(widget)
    doc = msgspec.json.decode(openapi.group_version(reg, "stable.example.com", "v1"))
    components = doc["components"]["schemas"]
    assert components["com.example.stable.v1.Widget"]["x-kubernetes-group-version-kind"] == [
        {"group": "stable.example.com", "version": "v1", "kind": "Widget"}]
    patch = doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
    refs: set[str] = set()
    _refs(doc, refs)
    assert {r[len(_PREFIX):] for r in refs} <= set(components)


def test_build_time(reg, capsys):
    # Cold: conversion caches and built documents dropped; the definitions file stays loaded.
    schemas.definitions()
    openapi.component.cache_clear()
    openapi._direct_refs.cache_clear()
    openapi._documents.clear()
    started = time.perf_counter()
    root = openapi.root(reg)
    root_s = time.perf_counter() - started
    sizes = {}
    for path in root["paths"]:
        sizes[path] = len(openapi.document(reg, path)[0])
    cold_s = time.perf_counter() - started
    started = time.perf_counter()
    for path in root["paths"]:
        openapi.document(reg, path)
    warm_s = time.perf_counter() - started
    with capsys.disabled():
        print(f"\nopenapi: root {root_s * 1e3:.1f} ms; all {len(sizes)} documents cold {cold_s * 1e3:.0f} ms "
              f"({sum(sizes.values()) / 1e6:.1f} MB, api/v1 {sizes['api/v1'] / 1e6:.2f} MB); cached {warm_s * 1e3:.2f} ms")
    assert cold_s < 2.0 and warm_s < 0.05


# -- real kubectl -------------------------------------------------------------------------
@pytest.mark.slow
async def test_kubectl_explain_reads_the_documents(reg):
    async with discovery_app(reg) as app:
        code, out, err = await app.kubectl("explain", "pods.spec.containers")
        assert code == 0, err
        lines = out.splitlines()
        assert lines[:4] == ["KIND:       Pod", "VERSION:    v1", "", "FIELD: containers <[]Container>"]
        assert "  name\t<string> -required-" in lines
        assert "  resources\t<ResourceRequirements>" in lines
        assert any(p.startswith("/openapi/v3/api/v1?hash=") for _, p, _ in app.requests)

        code, out, err = await app.kubectl("explain", "deployments", "--recursive")
        assert code == 0, err
        lines = out.splitlines()
        assert lines[:3] == ["GROUP:      apps", "KIND:       Deployment", "VERSION:    v1"]
        assert "    replicas\t<integer>" in lines and "        maxSurge\t<IntOrString>" in lines

        code, out, err = await app.kubectl("explain", "podgroups.spec.schedulingPolicy")
        assert code == 0, err
        assert "GROUP:      scheduling.k8s.io" in out and "gang\t<GangSchedulingPolicy>" in out


_MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: cm1}
data: {a: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: "nginx:2"}]}
"""


@pytest.mark.slow
async def test_kubectl_apply_validates_strictly_through_the_server(reg, tmp_path):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(_MANIFEST)
    async with discovery_app(reg) as app:
        code, out, err = await app.kubectl("apply", "--dry-run=client", "--validate=strict", "-f", str(manifest))
        assert code == 0, err
        assert out.splitlines() == ["configmap/cm1 created (dry run)", "deployment.apps/web created (dry run)"]
        # fieldValidation was found in the v3 documents: no fallback to /openapi/v2.
        assert not any(p.startswith("/openapi/v2") for _, p, _ in app.requests)


@pytest.mark.slow
async def test_kubectl_client_side_apply_computes_the_patch_from_the_v3_schema(reg, tmp_path):
    applied = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                   "metadata": {"labels": {"app": "web"}},
                   "spec": {"containers": [{"name": "c", "image": "nginx:1"}, {"name": "d", "image": "busybox"}]}}}}
    live = json.loads(json.dumps(applied))
    live["metadata"].update(uid="u1", resourceVersion="5", annotations={
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(applied)})
    patches: list[tuple[str, dict]] = []

    async def deployment(request: web.Request, body: bytes) -> web.StreamResponse | None:
        if request.path != "/apis/apps/v1/namespaces/default/deployments/web":
            return None
        if request.method == "PATCH":
            patches.append((request.headers["Content-Type"], json.loads(body)))
        return web.Response(body=json.dumps(live).encode(), headers={"Content-Type": "application/json"})

    manifest = tmp_path / "m.yaml"
    manifest.write_text(_MANIFEST.split("---\n")[1])
    async with discovery_app(reg, fallback=deployment) as app:
        code, out, err = await app.kubectl("apply", "-f", str(manifest))
        assert code == 0, err
        assert out.strip() == "deployment.apps/web configured" and "warning" not in err.lower()
        assert not any(p.startswith("/openapi/v2") for _, p, _ in app.requests)
    [(content_type, patch)] = patches
    assert content_type == "application/strategic-merge-patch+json"
    pod_spec = patch["spec"]["template"]["spec"]
    # Merge by the `name` key from x-kubernetes-patch-merge-key: change c, delete d, keep the order.
    assert pod_spec["$setElementOrder/containers"] == [{"name": "c"}]
    assert {"name": "d", "$patch": "delete"} in pod_spec["containers"]
    assert {"name": "c", "image": "nginx:2"} in pod_spec["containers"]
