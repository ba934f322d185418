"""Discovery documents and /version: shapes, negotiation, and what real kubectl makes of them.

`discovery_app` serves only the functions under test (no handlers, no storage) from a tiny
aiohttp app, so a failing kubectl here points at discovery or OpenAPI, not at the server.
`test_openapi.py` reuses it for `kubectl explain` and `kubectl apply`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import msgspec
import pytest
from aiohttp import web
from kubernetes import client as kclient

from apiserver import discovery, openapi, registry, version
from tests import realclients

KUBECTL_ACCEPT = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")


@pytest.fixture(scope="module")
def reg() -> registry.Registry:
    return registry.Registry.builtin()


def _decode(body: bytes) -> dict:
    return msgspec.json.decode(body)


class _GroupVersionKind:
    """Stand-in for the model the 36.0.3 client names in its v2 discovery models but does not ship.

    meta/v1 GroupVersionKind has three required fields (no omitempty), checked here as the
    generated models check theirs.
    """

    openapi_types = {"group": "str", "version": "str", "kind": "str"}
    attribute_map = {"group": "group", "version": "version", "kind": "kind"}

    def __init__(self, group=None, version=None, kind=None, **_):
        if group is None or version is None or kind is None:
            raise ValueError("GroupVersionKind needs group, version and kind")
        self.group, self.version, self.kind = group, version, kind


def _python_client_model(data: dict, model: str):
    """Deserialize as the `kubernetes` 36 client does; it raises on a missing required field."""
    api = kclient.ApiClient()
    missing = "IoK8sApimachineryPkgApisMetaV1GroupVersionKind"
    with pytest.MonkeyPatch.context() as patch:
        if not hasattr(kclient.models, missing):
            patch.setattr(kclient.models, missing, _GroupVersionKind, raising=False)
        return api._ApiClient__deserialize(data, model)  # the client's own response path


# -- negotiation --------------------------------------------------------------------------
@pytest.mark.parametrize("accept, flavour", [
    (KUBECTL_ACCEPT, "aggregated"),
    ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer,application/json",
     "aggregated"),
    ("application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io", "aggregated"),
    ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", "legacy"),
    ("application/json, */*", "legacy"),
    ("*/*", "legacy"),
    ("", "legacy"),
    (None, "legacy"),
    ("application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "aggregated"),
    ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0,application/json", "legacy"),
])
def test_negotiate_picks_the_flavour_the_client_prefers(accept, flavour):
    assert discovery.negotiate(accept) == flavour


def test_aggregated_content_type_is_exact():
    assert discovery.AGGREGATED_CONTENT_TYPE == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


# -- aggregated ---------------------------------------------------------------------------
def test_aggregated_core_holds_only_the_nameless_core_group(reg):
    doc = _decode(discovery.aggregated(reg, legacy=True))
    assert (doc["kind"], doc["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
    [core] = doc["items"]
    assert core["metadata"] == {}
    [v1] = core["versions"]
    assert (v1["version"], v1["freshness"]) == ("v1", "Current")
    pods = next(r for r in v1["resources"] if r["resource"] == "pods")
    assert pods["responseKind"] == {"group": "", "version": "", "kind": "Pod"}
    assert (pods["scope"], pods["singularResource"], pods["shortNames"], pods["categories"]) == (
        "Namespaced", "pod", ["po"], ["all"])
    subs = {s["subresource"]: s for s in pods["subresources"]}
    assert subs["eviction"]["responseKind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    assert subs["exec"]["verbs"] == ["create", "get"]
    nodes = next(r for r in v1["resources"] if r["resource"] == "nodes")
    assert nodes["scope"] == "Cluster"
    _python_client_model(doc, "V2APIGroupDiscoveryList")


def test_aggregated_apis_lists_every_named_group_in_order(reg):
    doc = _decode(discovery.aggregated(reg, legacy=False))
    assert [g["metadata"]["name"] for g in doc["items"]] == [g for g in reg.groups() if g]
    by_group = {g["metadata"]["name"]: g for g in doc["items"]}
    assert [v["version"] for v in by_group["scheduling.k8s.io"]["versions"]] == ["v1", "v1alpha2"]
    apps_v1 = by_group["apps"]["versions"][0]
    assert [r["resource"] for r in apps_v1["resources"]] == [
        "controllerrevisions", "daemonsets", "deployments", "replicasets", "statefulsets"]
    deploy = next(r for r in apps_v1["resources"] if r["resource"] == "deployments")
    assert deploy == {
        "resource": "deployments", "singularResource": "deployment", "scope": "Namespaced",
        "responseKind": {"group": "", "version": "", "kind": "Deployment"},
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        "shortNames": ["deploy"], "categories": ["all"],
        "subresources": [
            {"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
             "verbs": ["get", "patch", "update"]},
            {"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Deployment"},
             "verbs": ["get", "patch", "update"]},
        ],
    }
    ssar = next(r for r in by_group["authorization.k8s.io"]["versions"][0]["resources"]
                if r["resource"] == "selfsubjectaccessreviews")
    assert ssar["verbs"] == ["create"] and "shortNames" not in ssar and "subresources" not in ssar
    _python_client_model(doc, "V2APIGroupDiscoveryList")


def test_aggregated_document_is_cached_until_the_registry_changes():
    reg = registry.Registry.builtin()
    first, etag = discovery.aggregated(reg, legacy=False), discovery.aggregated_etag(reg, legacy=False)
    assert discovery.aggregated(reg, legacy=False) is first
    reg.add(registry.ResourceInfo(group="example.com", version="v1", resource="widgets", kind="Widget",
                                  singular="widget", namespaced=True, verbs=("get", "list"), builtin=False))
    second = _decode(discovery.aggregated(reg, legacy=False))
    assert second["items"][-1]["metadata"]["name"] == "example.com"
    assert discovery.aggregated_etag(reg, legacy=False) != etag
    assert discovery.aggregated_etag(reg, legacy=True) != discovery.aggregated_etag(reg, legacy=False)


# -- legacy -------------------------------------------------------------------------------
def test_legacy_api_versions(reg):
    body = discovery.api_versions("127.0.0.1:6443")
    assert body == {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]}
    _python_client_model(body, "V1APIVersions")


def test_legacy_group_list_and_group(reg):
    groups = discovery.api_group_list(reg)
    assert (groups["kind"], groups["apiVersion"]) == ("APIGroupList", "v1")
    assert [g["name"] for g in groups["groups"]] == [g for g in reg.groups() if g]
    autoscaling = next(g for g in groups["groups"] if g["name"] == "autoscaling")
    assert autoscaling["versions"] == [{"groupVersion": "autoscaling/v2", "version": "v2"}]
    assert autoscaling["preferredVersion"] == {"groupVersion": "autoscaling/v2", "version": "v2"}
    _python_client_model(groups, "V1APIGroupList")
    group = discovery.api_group(reg, "scheduling.k8s.io")
    assert group["kind"] == "APIGroup" and group["preferredVersion"]["version"] == "v1"
    assert [v["version"] for v in group["versions"]] == ["v1", "v1alpha2"]
    assert discovery.api_group(reg, "nosuch.example.com") is None and discovery.api_group(reg, "") is None


def test_legacy_resource_list_has_subresource_entries(reg):
    body = discovery.api_resource_list(reg, "", "v1")
    assert (body["kind"], body["groupVersion"]) == ("APIResourceList", "v1")
    entries = {r["name"]: r for r in body["resources"]}
    assert entries["pods"] == {
        "name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        "shortNames": ["po"], "categories": ["all"], "storageVersionHash": "xPOwRZ+Yhw8="}
    assert entries["pods/status"] == {"name": "pods/status", "singularName": "", "namespaced": True,
                                      "kind": "Pod", "verbs": ["get", "patch", "update"]}
    assert entries["pods/eviction"]["group"] == "policy" and entries["pods/eviction"]["version"] == "v1"
    assert entries["bindings"]["verbs"] == ["create"] and "storageVersionHash" not in entries["bindings"]
    assert entries["namespaces/finalize"]["verbs"] == ["update"]
    apps = discovery.api_resource_list(reg, "apps", "v1")
    scale = next(r for r in apps["resources"] if r["name"] == "deployments/scale")
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    _python_client_model(body, "V1APIResourceList")
    assert discovery.api_resource_list(reg, "autoscaling", "v1") is None


# -- /version -----------------------------------------------------------------------------
def test_version_info_is_complete_for_the_python_client():
    info = version.info()
    assert (info["major"], info["minor"], info["emulationMajor"], info["emulationMinor"]) == ("1", "36", "1", "36")
    assert (info["minCompatibilityMajor"], info["minCompatibilityMinor"]) == ("1", "35")
    assert info["gitVersion"].startswith("v1.36.3")
    with open(registry.DATA_FILE, "rb") as f:
        assert msgspec.json.decode(f.read())["version"] == version.KUBERNETES_VERSION
    model = _python_client_model(info, "VersionInfo")
    assert model.git_version == info["gitVersion"] and model.platform.count("/") == 1


# -- real kubectl against these functions -------------------------------------------------
@dataclass
class DiscoveryApp:
    """A running tiny app and what kubectl asked it for."""

    url: str
    workdir: str
    requests: list[tuple[str, str, str]] = field(default_factory=list)

    async def kubectl(self, *args: str, timeout: float = 60) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            realclients.kubectl(), "--kubeconfig", os.path.join(self.workdir, "kubeconfig"),
            "--cache-dir", os.path.join(self.workdir, "cache"), *args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
        return proc.returncode or 0, out.decode(), err.decode()


Fallback = Callable[[web.Request, bytes], Awaitable[web.StreamResponse | None]]


@contextlib.asynccontextmanager
async def discovery_app(reg: registry.Registry, fallback: Fallback | None = None) -> AsyncIterator[DiscoveryApp]:
    """Serve /version, discovery and OpenAPI from `reg` on 127.0.0.1; everything else 404 (or `fallback`)."""
    workdir = tempfile.mkdtemp(prefix="haru-discovery-")
    state: dict[str, DiscoveryApp] = {}

    def json_response(body: object, status: int = 200, content_type: str = "application/json") -> web.Response:
        return web.Response(status=status, body=msgspec.json.encode(body), headers={"Content-Type": content_type})

    def not_found() -> web.Response:
        return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": "the server could not find the requested resource",
                              "reason": "NotFound", "details": {}, "code": 404}, status=404)

    async def handle(request: web.Request) -> web.StreamResponse:
        app = state["app"]
        app.requests.append((request.method, request.path_qs, request.headers.get("Accept", "")))
        path = request.path.rstrip("/") or "/"
        parts = path.strip("/").split("/")
        aggregated = discovery.negotiate(request.headers.get("Accept")) == "aggregated"
        if request.method == "GET":
            if path == "/version":
                return json_response(version.info())
            if path in ("/api", "/apis"):
                legacy = path == "/api"
                if aggregated:
                    return web.Response(body=discovery.aggregated(reg, legacy=legacy),
                                        headers={"Content-Type": discovery.AGGREGATED_CONTENT_TYPE})
                return json_response(discovery.api_versions(request.host) if legacy else discovery.api_group_list(reg))
            if parts[0] == "api" and len(parts) == 2:
                body = discovery.api_resource_list(reg, "", parts[1])
                return json_response(body) if body else not_found()
            if parts[0] == "apis" and len(parts) == 2:
                body = discovery.api_group(reg, parts[1])
                return json_response(body) if body else not_found()
            if parts[0] == "apis" and len(parts) == 3:
                body = discovery.api_resource_list(reg, parts[1], parts[2])
                return json_response(body) if body else not_found()
            if path == "/openapi/v3":
                return json_response(openapi.root(reg))
            if path.startswith("/openapi/v3/"):
                found = openapi.document(reg, path[len("/openapi/v3/"):])
                if found is None:
                    return not_found()
                return web.Response(body=found[0], headers={"Content-Type": "application/json",
                                                            "ETag": f'"{found[1]}"'})
        if fallback is not None:
            answer = await fallback(request, await request.read())
            if answer is not None:
                return answer
        return not_found()

    web_app = web.Application()
    web_app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    with open(os.path.join(workdir, "kubeconfig"), "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: haru, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: admin, user: {{token: any-token}}}}]
contexts: [{{name: haru, context: {{cluster: haru, user: admin, namespace: default}}}}]
current-context: haru
""")
    state["app"] = DiscoveryApp(url=f"http://127.0.0.1:{port}", workdir=workdir)
    try:
        yield state["app"]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        await runner.cleanup()


def _table_rows(output: str) -> list[list[str]]:
    lines = output.splitlines()
    header = lines[0]
    starts = [header.index(col) for col in ("NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND")]
    bounds = list(zip(starts, starts[1:] + [None]))
    return [[line[a:b].strip() for a, b in bounds] for line in lines[1:] if line.strip()]


@pytest.mark.slow
async def test_kubectl_api_resources_lists_exactly_the_served_resources(reg):
    async with discovery_app(reg) as app:
        code, out, err = await app.kubectl("api-resources")
        assert code == 0, err
        got = sorted(tuple(row) for row in _table_rows(out))
        want = sorted((r.resource, ",".join(r.short_names), r.api_version, str(r.namespaced).lower(), r.kind)
                      for r in reg.all())
        assert got == want
        # It used aggregated discovery: no per-group-version legacy requests were needed.
        paths = [p for _, p, _ in app.requests]
        assert any(p.startswith("/apis?") or p == "/apis" for p in paths)
        assert not any(p.startswith("/apis/") for p in paths), paths

        code, out, err = await app.kubectl("api-resources", "--verbs=list", "--namespaced", "-o", "name")
        assert code == 0, err
        assert "pods" in out.split() and "selfsubjectaccessreviews.authorization.k8s.io" not in out
        assert "deployments.apps" in out.split() and "nodes" not in out.split()


@pytest.mark.slow
async def test_kubectl_reads_legacy_discovery_when_aggregated_is_refused(reg):
    # Force the fallback: the app never answers aggregated, so kubectl walks every group-version.
    original = discovery.negotiate
    discovery.negotiate = lambda accept: "legacy"  # type: ignore[assignment]
    try:
        async with discovery_app(reg) as app:
            code, out, err = await app.kubectl("api-resources")
            assert code == 0, err
            want = sorted((r.resource, ",".join(r.short_names), r.api_version, str(r.namespaced).lower(), r.kind)
                          for r in reg.all())
            assert sorted(tuple(row) for row in _table_rows(out)) == want
            assert any(p.startswith("/apis/apps/v1") for _, p, _ in app.requests)
    finally:
        discovery.negotiate = original


@pytest.mark.slow
async def test_kubectl_version_reads_the_server_version(reg):
    async with discovery_app(reg) as app:
        code, out, err = await app.kubectl("version", "-o", "json")
        assert code == 0, err
        server = msgspec.json.decode(out)["serverVersion"]
        assert server["gitVersion"] == version.info()["gitVersion"]
        assert (server["major"], server["minor"]) == ("1", "36")
