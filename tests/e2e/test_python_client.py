"""The `kubernetes` 36.0.3 Python client against a real `haru up`: CRUD, pagination, watch with resume,
and a restart with the same data dir that loses nothing.
"""

from __future__ import annotations

import time

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from tests.conftest import Cluster, start_haru, stop_haru

pytestmark = pytest.mark.slow

ROOT_CA = "kube-root-ca.crt"  # every namespace has it (the root CA publisher), made when it gets to it


def _core(haru: Cluster) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(config_file=haru.kubeconfig))


def test_crud(haru: Cluster) -> None:
    api = _core(haru)
    api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-crud")))
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c1", labels={"a": "b"}), data={"k": "v"})
    created = api.create_namespaced_config_map("py-crud", body)
    assert created.metadata.uid and created.metadata.resource_version
    read = api.read_namespaced_config_map("c1", "py-crud")
    assert read.data == {"k": "v"}
    read.data["k"] = "w"
    replaced = api.replace_namespaced_config_map("c1", "py-crud", read)
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    stale = read
    stale.metadata.resource_version = created.metadata.resource_version
    with pytest.raises(ApiException) as conflict:
        api.replace_namespaced_config_map("c1", "py-crud", stale)
    assert conflict.value.status == 409 and "the object has been modified" in conflict.value.body
    patched = api.patch_namespaced_config_map("c1", "py-crud", {"data": {"x": "y"}})
    assert patched.data == {"k": "w", "x": "y"}
    api.delete_namespaced_config_map("c1", "py-crud")
    with pytest.raises(ApiException) as missing:
        api.read_namespaced_config_map("c1", "py-crud")
    assert missing.value.status == 404


def _wait_for_root_ca(api: client.CoreV1Api, namespace: str) -> None:
    for _ in range(100):
        try:
            api.read_namespaced_config_map(ROOT_CA, namespace)
            return
        except ApiException as exc:
            if exc.status != 404:
                raise
        time.sleep(0.1)
    raise AssertionError(f"no {ROOT_CA} in {namespace}")


def test_list_with_pagination(haru: Cluster) -> None:
    api = _core(haru)
    api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-page")))
    _wait_for_root_ca(api, "py-page")  # it sorts last: the third page has it and the counts include it
    for i in range(25):
        api.create_namespaced_config_map("py-page", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"c{i:02d}")))
    names, token, pages = [], None, 0
    while True:
        page = api.list_namespaced_config_map("py-page", limit=10, _continue=token)
        pages += 1
        names += [item.metadata.name for item in page.items]
        token = page.metadata._continue
        if not token:
            break
        if pages == 1:
            assert page.metadata.remaining_item_count == 16
            # A write between pages does not show up: the list is a snapshot.
            api.create_namespaced_config_map("py-page", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c99")))
    assert pages == 3 and names == [f"c{i:02d}" for i in range(25)] + [ROOT_CA]


def test_watch_with_resume(haru: Cluster) -> None:
    api = _core(haru)
    api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-watch")))
    listed = api.list_namespaced_config_map("py-watch")
    start = listed.metadata.resource_version
    api.create_namespaced_config_map("py-watch", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w1")))
    api.create_namespaced_config_map("py-watch", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w2")))
    api.delete_namespaced_config_map("w1", "py-watch")
    seen = []
    # The root CA publisher writes kube-root-ca.crt into the new namespace whenever it gets to it.
    for event in watch.Watch().stream(api.list_namespaced_config_map, "py-watch", resource_version=start,
                                      timeout_seconds=2):
        if event["object"].metadata.name == ROOT_CA:
            continue
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 2:
            resume = event["object"].metadata.resource_version
            break
    assert seen == [("ADDED", "w1"), ("ADDED", "w2")]
    rest = [(e["type"], e["object"].metadata.name) for e in
            watch.Watch().stream(api.list_namespaced_config_map, "py-watch", resource_version=resume, timeout_seconds=2)
            if e["object"].metadata.name != ROOT_CA]
    assert rest == [("DELETED", "w1")]


def test_restart_with_the_same_data_dir_loses_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = str(tmp_path / "data")
    first = start_haru(data)
    try:
        api = _core(first)
        api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="kept")))
        for i in range(20):
            api.create_namespaced_config_map("kept", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"c{i}"),
                                                                         data={"i": str(i)}))
        before = api.list_namespaced_config_map("kept")
    finally:
        stop_haru(first)
    second = start_haru(data)
    try:
        after = _core(second).list_namespaced_config_map("kept")
        assert [(c.metadata.name, c.metadata.resource_version, c.data) for c in after.items if c.metadata.name != ROOT_CA] == \
            [(c.metadata.name, c.metadata.resource_version, c.data) for c in before.items if c.metadata.name != ROOT_CA]
        assert int(after.metadata.resource_version) >= int(before.metadata.resource_version)
    finally:
        stop_haru(second)
