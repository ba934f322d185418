"""The REST client, discovery and a sharded informer against a real API server (plain HTTP)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing

import pytest
import pytest_asyncio

from apiserver import runner
from client import errors, sharding
from client.discovery import Discovery
from client.informer import Informer
from client.kubeconfig import Config
from client.resources import CONFIGMAPS, NAMESPACES
from client.rest import RestClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RestClient]:
    running = await runner.start(str(tmp_path_factory.mktemp("server")), port=0)
    rest = RestClient(Config.for_url(running.url))
    try:
        yield rest
    finally:
        await rest.close()
        await running.stop()


async def test_create_get_patch_update_delete_round_trip(client: RestClient) -> None:
    created = await client.create(CONFIGMAPS, {"metadata": {"name": "rt"}, "data": {"a": "1"}}, "default")
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    patched = await client.patch(CONFIGMAPS, "rt", {"data": {"b": "2"}}, "default")
    assert patched["data"] == {"a": "1", "b": "2"}
    patched["data"]["a"] = "3"
    updated = await client.update(CONFIGMAPS, patched)
    assert (await client.get(CONFIGMAPS, "rt", "default"))["data"] == updated["data"] == {"a": "3", "b": "2"}
    status = await client.delete(CONFIGMAPS, "rt", "default")
    assert status["status"] == "Success"


async def test_errors_carry_the_servers_status(client: RestClient) -> None:
    with pytest.raises(errors.APIError) as missing:
        await client.get(CONFIGMAPS, "nope", "default")
    assert errors.is_not_found(missing.value)
    assert missing.value.status["reason"] == "NotFound" and missing.value.details["name"] == "nope"

    await client.create(CONFIGMAPS, {"metadata": {"name": "twice"}}, "default")
    with pytest.raises(errors.APIError) as twice:
        await client.create(CONFIGMAPS, {"metadata": {"name": "twice"}}, "default")
    assert errors.is_already_exists(twice.value) and not errors.is_conflict(twice.value)

    stale = await client.get(CONFIGMAPS, "twice", "default")
    await client.patch(CONFIGMAPS, "twice", {"data": {"x": "1"}}, "default")
    with pytest.raises(errors.APIError) as conflict:
        await client.update(CONFIGMAPS, stale)
    assert errors.is_conflict(conflict.value) and conflict.value.code == 409


async def test_a_create_in_a_terminating_namespace_has_the_namespace_terminating_cause(client: RestClient) -> None:
    await client.create(NAMESPACES, {"metadata": {"name": "leaving"}})
    await client.delete(NAMESPACES, "leaving")  # no namespace controller here: it stays Terminating
    with pytest.raises(errors.APIError) as refused:
        await client.create(CONFIGMAPS, {"metadata": {"name": "late"}}, "leaving")
    assert refused.value.code == 403 and errors.has_cause(refused.value, "NamespaceTerminating")
    assert not errors.has_cause(refused.value, "FieldValueInvalid")


async def test_a_json_patch_and_a_precondition_failure(client: RestClient) -> None:
    made = await client.create(CONFIGMAPS, {"metadata": {"name": "jp"}, "data": {"a": "1"}}, "default")
    patched = await client.patch(CONFIGMAPS, "jp", [{"op": "replace", "path": "/data/a", "value": "2"}], "default",
                                 patch_type="json")
    assert patched["data"]["a"] == "2"
    with pytest.raises(errors.APIError) as wrong_uid:
        await client.delete(CONFIGMAPS, "jp", "default", uid="not-" + made["metadata"]["uid"])
    assert wrong_uid.value.code == 409


async def test_watch_streams_events_from_a_resource_version(client: RestClient) -> None:
    start = (await client.list(CONFIGMAPS, "default"))["metadata"]["resourceVersion"]
    await client.create(CONFIGMAPS, {"metadata": {"name": "w1"}}, "default")
    await client.patch(CONFIGMAPS, "w1", {"data": {"k": "v"}}, "default")
    await client.delete(CONFIGMAPS, "w1", "default")
    seen = []
    async with aclosing(client.watch(CONFIGMAPS, "default", resource_version=start, timeout_seconds=5)) as events:
        async for event in events:
            seen.append((event["type"], event["object"]["metadata"]["name"]))
            if len(seen) == 3:
                break
    assert seen == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]


async def test_a_watch_from_a_future_resource_version_raises_with_the_status(client: RestClient) -> None:
    with pytest.raises(errors.APIError) as too_new:
        async with aclosing(client.watch(CONFIGMAPS, "default", resource_version="999999999")) as events:
            async for _ in events:
                pass
    assert errors.is_too_large_resource_version(too_new.value)


async def test_metadata_only_lists_return_partial_objects(client: RestClient) -> None:
    await client.create(CONFIGMAPS, {"metadata": {"name": "meta"}, "data": {"big": "x" * 100}}, "default")
    listed = await client.list(CONFIGMAPS, "default", metadata_only=True)
    assert listed["kind"] == "PartialObjectMetadataList"
    item = next(i for i in listed["items"] if i["metadata"]["name"] == "meta")
    assert "data" not in item


async def test_discovery_reports_kinds_scopes_and_verbs(client: RestClient) -> None:
    found = await Discovery(client).preferred()
    assert found.failed == {}
    pods = found.for_kind("v1", "Pod")
    assert pods is not None and pods.namespaced and pods.supports("deletecollection", "watch")
    namespaces = found.for_kind("v1", "Namespace")
    assert namespaces is not None and not namespaces.namespaced
    assert found.for_kind("apps/v1beta2", "ReplicaSet") == found.for_kind("apps/v1", "ReplicaSet")
    assert all("/" not in r.resource for r in found.resources)


async def test_aggregated_discovery_finds_what_the_legacy_documents_list(client: RestClient) -> None:
    from client import discovery

    requests: list[str] = []
    real_request = client.request

    async def counting(method, path, **kwargs):  # type: ignore[no-untyped-def]
        requests.append(path)
        return await real_request(method, path, **kwargs)

    client.request = counting  # type: ignore[method-assign]
    try:
        aggregated = await Discovery(client).preferred()
    finally:
        del client.request
    assert sorted(requests) == ["/api", "/apis"]  # two requests, not one per group version
    original = discovery.AGGREGATED
    discovery.AGGREGATED = "application/json"  # a server without aggregated discovery answers so
    try:
        legacy = await Discovery(client).preferred()
    finally:
        discovery.AGGREGATED = original
    assert len(legacy.resources) > 50
    key = lambda r: (r.group, r.version, r.resource)  # noqa: E731
    assert [(key(r), r.kind, r.namespaced, r.verbs) for r in sorted(aggregated.resources, key=key)] == \
        [(key(r), r.kind, r.namespaced, r.verbs) for r in sorted(legacy.resources, key=key)]


async def test_an_informer_with_a_shard_selector_holds_exactly_its_shard(client: RestClient) -> None:
    await client.create(NAMESPACES, {"metadata": {"name": "sharded"}})
    for i in range(30):
        await client.create(CONFIGMAPS, {"metadata": {"name": f"s{i}"}}, "sharded")
    selector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
    informer = Informer.for_resource(client, CONFIGMAPS, "sharded", shard_selector=selector)
    informer.start()
    await informer.wait_synced(5)
    await client.create(CONFIGMAPS, {"metadata": {"name": "late"}}, "sharded")
    await asyncio.sleep(0.2)
    await informer.stop()

    everything = (await client.list(CONFIGMAPS, "sharded"))["items"]
    shard = sharding.parse(selector)
    assert sorted(informer.store.keys()) == sorted(f"sharded/{o['metadata']['name']}" for o in everything
                                                   if shard.matches(o))
    listed = await client.list(CONFIGMAPS, "sharded", shard_selector=selector)
    assert len(listed["items"]) == len(informer.store)  # the server filtered the same way



async def test_a_burst_of_requests_shares_a_bounded_set_of_connections(client: RestClient) -> None:
    from client import rest

    await client.close()  # a fresh pool: count only the connections this burst opens
    opened: list[object] = []
    connector = client.session.connector
    assert connector is not None
    real_create = connector._create_connection  # aiohttp's one place a new connection is made

    async def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(args)
        return await real_create(*args, **kwargs)

    connector._create_connection = counting  # type: ignore[method-assign]
    answers = await asyncio.gather(*(client.get(NAMESPACES, "default") for _ in range(192)))
    assert all(a["metadata"]["name"] == "default" for a in answers)
    assert 0 < len(opened) <= rest.MAX_IN_FLIGHT < 192  # 192 at once, not 192 handshakes
