"""Size limits as kube-apiserver 1.36 has them, with the store left untouched each time.

Request bodies over 3 MiB (`MaxRequestBodyBytes`, 3145728) are 413 RequestEntityTooLarge for every
write verb and media type, refused while reading (no Content-Length needed). Objects whose stored
form is over etcd's 1.5 MiB request limit get what upstream passes through from etcd: a 500 with no
reason and the text "etcdserver: request is too large". Raw HTTP and the `kubernetes` 36.0.3
Python client against an in-process server.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import msgspec
import pytest
import yaml
from kubernetes import client as pyclient
from kubernetes.client.rest import ApiException

from apiserver import protobuf
from storage import writes
from tests.conftest import InProcess

CMS = "/api/v1/namespaces/default/configmaps"
TEMPLATES = "/api/v1/namespaces/default/podtemplates"  # no size rule of its own, as a CR's
LIMIT = 3145728
TOO_LARGE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": "Request entity too large: limit is 3145728", "reason": "RequestEntityTooLarge", "code": 413}
ETCD_TOO_LARGE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": "etcdserver: request is too large", "code": 500}


def _cm(name: str, value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": value}}


def _template(name: str, arg: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name},
            "template": {"spec": {"containers": [{"name": "c", "image": "busybox", "args": [arg]}]}}}


def _big(size: int) -> str:
    return "x" * size


def _bodies(name: str) -> dict[str, bytes]:
    obj = _cm(name, _big(LIMIT))
    return {
        "application/json": msgspec.json.encode(obj),
        "application/yaml": yaml.safe_dump(obj).encode(),
        "application/vnd.kubernetes.protobuf": protobuf.MAGIC + b"\x00" * (LIMIT + 1),
    }


@pytest.mark.parametrize("media", ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"])
@pytest.mark.parametrize("method, path", [("POST", CMS), ("PUT", CMS + "/c1")])
async def test_an_object_body_over_3_mib_is_413_whatever_its_media_type(api: InProcess, method: str, path: str,
                                                                         media: str) -> None:
    await api.request("POST", CMS, json=_cm("c1", "small"))
    before = api.store.revision
    status, answer, _ = await api.request(method, path, data=_bodies("c1")[media], headers={"Content-Type": media})
    assert (status, answer) == (413, TOO_LARGE)
    assert api.store.revision == before


@pytest.mark.parametrize("media, body", [
    ("application/merge-patch+json", msgspec.json.encode({"data": {"k": _big(LIMIT)}})),
    ("application/strategic-merge-patch+json", msgspec.json.encode({"data": {"k": _big(LIMIT)}})),
    ("application/json-patch+json", msgspec.json.encode([{"op": "add", "path": "/data/k", "value": _big(LIMIT)}])),
    ("application/apply-patch+yaml", yaml.safe_dump(_cm("c1", _big(LIMIT))).encode()),
])
async def test_a_patch_body_over_3_mib_is_413(api: InProcess, media: str, body: bytes) -> None:
    await api.request("POST", CMS, json=_cm("c1", "small"))
    before = api.store.revision
    query = "?fieldManager=t" if media.startswith("application/apply") else ""
    status, answer, _ = await api.request("PATCH", CMS + "/c1" + query, data=body, headers={"Content-Type": media})
    assert (status, answer) == (413, TOO_LARGE)
    assert api.store.revision == before


async def test_a_delete_body_over_3_mib_is_413(api: InProcess) -> None:
    await api.request("POST", CMS, json=_cm("c1", "small"))
    options = msgspec.json.encode({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": [_big(LIMIT)]})
    status, answer, _ = await api.request("DELETE", CMS + "/c1", data=options,
                                          headers={"Content-Type": "application/json"})
    assert (status, answer) == (413, TOO_LARGE)
    status, _, _ = await api.request("GET", CMS + "/c1")
    assert status == 200


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), 1 << 16):
        yield data[start:start + (1 << 16)]


async def test_a_chunked_body_without_content_length_is_cut_at_the_limit(api: InProcess) -> None:
    before = api.store.revision
    body = msgspec.json.encode(_cm("c1", _big(LIMIT)))
    async with api.session.post(api.url + CMS, data=_chunks(body), headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 413
        assert msgspec.json.decode(await resp.read()) == TOO_LARGE
    assert api.store.revision == before


async def test_a_body_of_exactly_3_mib_is_read(api: InProcess) -> None:
    # 3145728 bytes is within the limit: the object then fails etcd's 1.5 MiB, not the body limit.
    prefix = msgspec.json.encode(_template("t1", ""))
    body = prefix[:-7] + b"x" * (LIMIT - len(prefix)) + prefix[-7:]
    assert len(body) == LIMIT and msgspec.json.decode(body)
    status, answer, _ = await api.request("POST", TEMPLATES, data=body, headers={"Content-Type": "application/json"})
    assert (status, answer) == (500, ETCD_TOO_LARGE)


async def test_an_object_over_etcds_limit_is_refused_as_etcd_refuses_it(api: InProcess) -> None:
    before = api.store.revision
    status, answer, _ = await api.request("POST", TEMPLATES, json=_template("t1", _big(writes.MAX_REQUEST_BYTES)))
    assert (status, answer) == (500, ETCD_TOO_LARGE)
    assert api.store.revision == before
    status, _, _ = await api.request("GET", TEMPLATES + "/t1")
    assert status == 404


async def test_an_object_just_under_etcds_limit_is_stored(api: InProcess) -> None:
    size = writes.MAX_REQUEST_BYTES - 4096
    status, created, _ = await api.request("POST", TEMPLATES, json=_template("t1", _big(size)))
    assert status == 201 and len(created["template"]["spec"]["containers"][0]["args"][0]) == size


async def test_a_patch_that_grows_an_object_past_etcds_limit_leaves_it_as_it_was(api: InProcess) -> None:
    status, created, _ = await api.request("POST", TEMPLATES, json=_template("t1", "small"))
    before = api.store.revision
    patch = msgspec.json.encode([{"op": "add", "path": "/template/spec/containers/0/args/-",
                                  "value": _big(writes.MAX_REQUEST_BYTES)}])
    status, answer, _ = await api.request("PATCH", TEMPLATES + "/t1", data=patch,
                                          headers={"Content-Type": "application/json-patch+json"})
    assert (status, answer) == (500, ETCD_TOO_LARGE)
    assert api.store.revision == before
    _, now, _ = await api.request("GET", TEMPLATES + "/t1")
    assert now == created


async def test_the_python_client_sees_413_and_the_etcd_error(api: InProcess) -> None:
    core = pyclient.CoreV1Api(pyclient.ApiClient(pyclient.Configuration(host=api.url)))
    with pytest.raises(ApiException) as body_refused:
        await asyncio.to_thread(core.create_namespaced_config_map, "default", _cm("c1", _big(LIMIT)))
    assert body_refused.value.status == 413
    assert msgspec.json.decode(body_refused.value.body) == TOO_LARGE
    with pytest.raises(ApiException) as object_refused:
        await asyncio.to_thread(core.create_namespaced_pod_template, "default", _template("t1", _big(2 << 20)))
    assert object_refused.value.status == 500
    assert msgspec.json.decode(object_refused.value.body) == ETCD_TOO_LARGE
    core.api_client.close()
