"""Boolean query parameters as kube reads them, driven by the `kubernetes` 36.0.3 Python client
(which sends `force=True`, `watch=True`) and plain HTTP: only "0" and "false" in any casing are
false, any other value is true, nothing is rejected; `force` on a non-apply patch is Invalid.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kubernetes import client as pyclient, dynamic
from kubernetes.client.rest import ApiException

from apiserver import query_flags

APPLY = "application/apply-patch+yaml"


@pytest.mark.parametrize(("raw", "want"), [
    (None, None), ("true", True), ("True", True), ("1", True), ("yes", True), ("", True),
    ("false", False), ("False", False), ("FALSE", False), ("0", False),
])
def test_a_flag_is_false_only_for_0_and_false(raw: str | None, want: bool | None) -> None:
    query = {} if raw is None else {"force": raw}
    assert query_flags.flag(query, "force") is want


def _api_client(api: Any) -> pyclient.ApiClient:
    return pyclient.ApiClient(pyclient.Configuration(host=api.url))


def _apply(core: pyclient.CoreV1Api, manager: str, value: str, **kw: Any) -> pyclient.V1ConfigMap:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owned"}, "data": {"k": value}}
    return core.patch_namespaced_config_map("owned", "default", body, field_manager=manager,
                                            _content_type=APPLY, **kw)


def _managers(cm: pyclient.V1ConfigMap) -> set[str]:
    return {entry.manager for entry in cm.metadata.managed_fields or []}


async def test_the_python_clients_force_true_takes_fields_over(api: Any) -> None:
    # The server runs on this loop and the Python client blocks: its calls go to a thread.
    core = pyclient.CoreV1Api(_api_client(api))
    await asyncio.to_thread(_apply, core, "first", "a")
    with pytest.raises(ApiException) as refused:
        await asyncio.to_thread(_apply, core, "second", "b", force=False)
    assert refused.value.status == 409 and '"reason":"Conflict"' in refused.value.body

    taken = await asyncio.to_thread(_apply, core, "second", "b", force=True)

    assert taken.data == {"k": "b"} and _managers(taken) == {"second"}


async def test_the_dynamic_clients_server_side_apply_forces_conflicts(api: Any) -> None:
    def run() -> Any:
        dc = dynamic.DynamicClient(_api_client(api))
        cms = dc.resources.get(api_version="v1", kind="ConfigMap")
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn"}, "data": {"k": "a"}}
        cms.server_side_apply(body=body, namespace="default", field_manager="first")
        body["data"]["k"] = "b"
        return cms.server_side_apply(body=body, namespace="default", field_manager="second", force_conflicts=True)

    taken = await asyncio.to_thread(run)

    assert taken.data.k == "b"


async def test_force_on_a_merge_patch_is_invalid(api: Any) -> None:
    await api.request("POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "m"}})
    status, body, _ = await api.request(
        "PATCH", "/api/v1/namespaces/default/configmaps/m?force=false", data=b'{"data":{"k":"v"}}',
        headers={"Content-Type": "application/merge-patch+json"})
    assert status == 422, body
    assert body["message"] == ('PatchOptions.meta.k8s.io "" is invalid: '
                               'force: Forbidden: may not be specified for non-apply patch')
    assert body["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": "force",
                                          "message": "Forbidden: may not be specified for non-apply patch"}]
    _, stored, _ = await api.request("GET", "/api/v1/namespaces/default/configmaps/m")
    assert "data" not in stored


@pytest.mark.parametrize(("raw", "watches"), [("True", True), ("yes", True), ("", True), ("0", False), ("False", False)])
async def test_watch_is_a_watch_for_any_value_but_0_and_false(api: Any, raw: str, watches: bool) -> None:
    async with api.session.get(f"{api.url}/api/v1/namespaces/default/configmaps?watch={raw}&timeoutSeconds=1") as resp:
        text = await resp.text()
    assert resp.status == 200
    assert ('"kind":"ConfigMapList"' not in text) is watches, text


async def _create_owner_and_dependent(api: Any, owner: str) -> None:
    _, created, _ = await api.request("POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": owner}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": created["metadata"]["uid"]}
    await api.request("POST", "/api/v1/namespaces/default/configmaps",
                      json={"metadata": {"name": owner + "-dep", "ownerReferences": [ref]}})


async def test_the_python_clients_orphan_dependents_true_orphans(api: Any) -> None:
    await _create_owner_and_dependent(api, "keeper")
    core = pyclient.CoreV1Api(_api_client(api))

    await asyncio.to_thread(core.delete_namespaced_config_map, "keeper", "default", orphan_dependents=True)

    # No garbage collector runs here: the owner waits with the orphan finalizer the policy added.
    status, owner, _ = await api.request("GET", "/api/v1/namespaces/default/configmaps/keeper")
    assert status == 200 and owner["metadata"]["finalizers"] == ["orphan"], owner
    assert owner["metadata"]["deletionTimestamp"]


async def test_the_python_clients_orphan_dependents_false_deletes_in_the_background(api: Any) -> None:
    await _create_owner_and_dependent(api, "goner")
    core = pyclient.CoreV1Api(_api_client(api))

    await asyncio.to_thread(core.delete_namespaced_config_map, "goner", "default", orphan_dependents=False)

    status, _, _ = await api.request("GET", "/api/v1/namespaces/default/configmaps/goner")
    assert status == 404
