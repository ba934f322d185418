"""Sharded LIST and WATCH (KEP-5866) against real servers: raw HTTP against an in-process server, and
the `kubernetes` 36.0.3 client (`shard_selector=`) against `haru up`.

For random objects and random splits into 2, 4 and 16 shards, the shard lists and the shard watch
streams are pairwise disjoint and their union is exactly the unsharded result; selectors combine
with label/field selectors, paging and resourceVersion; malformed selectors are 400; one write is
hashed once however many shard watchers see it; the gate off makes the server ignore the parameter.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import msgspec
import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from apiserver import context, listing, requestinfo, runner, sharding
from apiserver.handlers import list as list_handler
from client.examples import sharded_watchers
from tests.apiserver.test_sharding import random_split
from tests.conftest import Cluster, start_haru, stop_haru

UID = "object.metadata.uid"
CONFIGMAPS = "/api/v1/configmaps"


@pytest.fixture
async def server(tmp_path: Any) -> AsyncIterator[runner.Running]:
    running = await runner.start(str(tmp_path / "haru"))
    running.server.extra["bookmark_interval"] = 0.05  # watch tests read up to a bookmark past their writes
    try:
        yield running
    finally:
        await running.stop()


@pytest.fixture
async def http(server: runner.Running) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(server.url) as session:
        yield session


async def create_configmaps(http: aiohttp.ClientSession, rand: random.Random, count: int) -> None:
    async def one(i: int) -> None:
        ns = rand.choice(["default", "kube-public"])
        body = {"metadata": {"name": f"cm-{i:03d}-{rand.getrandbits(24):06x}",
                             "labels": {"tier": rand.choice(["web", "db", "cache"])}},
                "data": {"n": str(i)}}
        async with http.post(f"/api/v1/namespaces/{ns}/configmaps", json=body) as response:
            assert response.status == 201, await response.text()
    await asyncio.gather(*(one(i) for i in range(count)))


async def get_json(http: aiohttp.ClientSession, path: str, **params: str) -> tuple[int, dict[str, Any]]:
    async with http.get(path, params=params) as response:
        return response.status, await response.json()


async def list_all(http: aiohttp.ClientSession, path: str, **params: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every item, following `continue`; also every page's metadata."""
    items: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    while True:
        status, body = await get_json(http, path, **params)
        assert status == 200, body
        items += body["items"]
        metas.append(body["metadata"])
        if not body["metadata"].get("continue"):
            return items, metas
        params = {**params, "continue": body["metadata"]["continue"]}
        params.pop("resourceVersion", None)
        params.pop("resourceVersionMatch", None)


def ids(items: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(item["metadata"]["namespace"], item["metadata"]["name"]) for item in items}


def assert_partition(parts: list[set[Any]], whole: set[Any]) -> None:
    for i, part in enumerate(parts):
        for other in parts[i + 1:]:
            assert not part & other
    assert set().union(*parts) == whole


# -- LIST ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("parts", [2, 4, 16])
async def test_shard_lists_partition_the_unsharded_list(http: aiohttp.ClientSession, parts: int) -> None:
    rand = random.Random(100 + parts)
    await create_configmaps(http, rand, 60)
    everything, _ = await list_all(http, CONFIGMAPS)
    shards = random_split(rand, parts)
    found = []
    for text in shards:
        status, body = await get_json(http, CONFIGMAPS, shardSelector=text.replace(", ", " ,  "))
        assert status == 200
        assert body["metadata"]["shardInfo"] == {"selector": text}  # the canonical form, not what was sent
        selector = sharding.parse(text)
        assert all(selector.matches(item) for item in body["items"])
        found.append(ids(body["items"]))
    assert_partition(found, ids(everything))
    assert len(ids(everything)) >= 60


async def test_sharding_combines_with_selectors_paging_and_resource_version(http: aiohttp.ClientSession) -> None:
    rand = random.Random(7)
    await create_configmaps(http, rand, 80)
    status, before = await get_json(http, CONFIGMAPS)
    old_rv = before["metadata"]["resourceVersion"]
    await create_configmaps(http, random.Random(8), 20)  # written after old_rv: must not show up below
    shards = random_split(rand, 4)
    filters = {"labelSelector": "tier!=db", "fieldSelector": "metadata.namespace=default"}
    expected_all = {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in before["items"]
                    if (i["metadata"].get("labels") or {}).get("tier") != "db"
                    and i["metadata"]["namespace"] == "default"}
    found = []
    for text in shards:
        items, metas = await list_all(http, CONFIGMAPS, shardSelector=text, limit="7", resourceVersion=old_rv,
                                      resourceVersionMatch="Exact", **filters)
        assert all(meta["shardInfo"] == {"selector": text} for meta in metas)
        assert all("remainingItemCount" not in meta for meta in metas)  # unknown once a filter applies
        assert {meta["resourceVersion"] for meta in metas} == {old_rv}
        assert all(sharding.parse(text).matches(item) for item in items)
        found.append(ids(items))
    assert_partition(found, expected_all)


async def test_a_shard_bigger_than_a_stream_page_is_streamed_whole(http: aiohttp.ClientSession,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(list_handler, "STREAM_PAGE", 4)  # 70 objects: every shard streams in many pages
    rand = random.Random(11)
    await create_configmaps(http, rand, 70)
    everything, _ = await list_all(http, CONFIGMAPS)
    found = []
    for text in random_split(rand, 3):
        async with http.get(CONFIGMAPS, params={"shardSelector": text, "labelSelector": "tier!=cache"}) as response:
            assert response.status == 200
            assert response.headers.get("Transfer-Encoding") == "chunked"  # streamed, not built whole
            body = await response.json()
        assert body["metadata"]["shardInfo"] == {"selector": text}
        assert all(sharding.parse(text).matches(item) for item in body["items"])
        found.append(ids(body["items"]))
    assert_partition(found, ids([i for i in everything if i["metadata"]["labels"]["tier"] != "cache"]))


async def test_the_pages_of_a_streamed_shard_all_show_its_revision(server: runner.Running,
                                                                   http: aiohttp.ClientSession) -> None:
    """Writes committed between two pages of a streamed shard do not show in the later pages."""
    rand = random.Random(12)
    await create_configmaps(http, rand, 40)
    whole_range = f"shardRange({UID}, '0x0000000000000000', '0x10000000000000000')"
    ep = context.endpoint_for(server.server, requestinfo.parse("GET", CONFIGMAPS))
    sel = listing.selection(ep, {"shardSelector": whole_range})
    plan = listing.shard_plan(ep, sel)
    assert plan is not None and len(plan.members) == len(ids((await list_all(http, CONFIGMAPS))[0]))
    first = listing.shard_page(ep, sel, plan.members[:20], plan.revision)
    # Between the pages: change, delete and add objects among the ones still to be read.
    later = [key.rsplit("/", 2) for key in plan.members[20:]]
    for (_, ns, name) in later[:5]:
        async with http.delete(f"/api/v1/namespaces/{ns}/configmaps/{name}") as response:
            assert response.status == 200
    for (_, ns, name) in later[5:10]:
        patch = {"data": {"n": "changed"}}
        async with http.patch(f"/api/v1/namespaces/{ns}/configmaps/{name}", json=patch,
                              headers={"Content-Type": "application/merge-patch+json"}) as response:
            assert response.status == 200
    await create_configmaps(http, random.Random(13), 5)
    rest = listing.shard_page(ep, sel, plan.members[20:], plan.revision)
    streamed = [msgspec.json.decode(r.value) for r in first.records + rest.records]
    status, then = await get_json(http, CONFIGMAPS, resourceVersion=str(plan.revision),
                                  resourceVersionMatch="Exact")
    assert status == 200
    assert streamed == then["items"]
    assert all(item["data"]["n"] != "changed" for item in streamed)


async def test_a_namespaced_list_and_namespace_sharding(http: aiohttp.ClientSession) -> None:
    await create_configmaps(http, random.Random(3), 30)
    h = int(sharding.hex_hash("default"), 16)
    only_default = f"shardRange(object.metadata.namespace, '0x{h:016x}', '0x{h + 1:016x}')"
    items, _ = await list_all(http, CONFIGMAPS, shardSelector=only_default)
    assert items and {item["metadata"]["namespace"] for item in items} == {"default"}
    in_ns, _ = await list_all(http, "/api/v1/namespaces/kube-public/configmaps", shardSelector=only_default)
    assert in_ns == []


@pytest.mark.parametrize("text, detail", [
    ("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
     'hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean "0x0000000000000000"?)'),
    ("   ", "empty shard selector is not allowed; omit the parameter for unfiltered lists"),
    ("shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
     'unsupported field path "object.metadata.name"; supported: object.metadata.uid, object.metadata.namespace'),
])
@pytest.mark.parametrize("verb", ["list", "watch"])
async def test_a_malformed_selector_is_a_400(http: aiohttp.ClientSession, text: str, detail: str, verb: str) -> None:
    params = {"shardSelector": text, **({"watch": "true"} if verb == "watch" else {})}
    status, body = await get_json(http, CONFIGMAPS, **params)
    assert status == 400
    assert (body["kind"], body["reason"], body["code"]) == ("Status", "BadRequest", 400)
    assert body["message"] == f"invalid shard selector: {detail}"


GADGETS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.shards.example.com"},
    "spec": {"group": "shards.example.com", "scope": "Namespaced",
             "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object",
                 "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]},
}


async def test_custom_resources_are_sharded_like_built_in_kinds(http: aiohttp.ClientSession) -> None:
    async with http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=GADGETS_CRD) as response:
        assert response.status == 201, await response.text()
    path = "/apis/shards.example.com/v1/namespaces/default/gadgets"
    for _ in range(200):  # until the CRD is established and served
        async with http.get(path) as response:
            if response.status == 200:
                break
        await asyncio.sleep(0.02)
    for i in range(24):
        gadget = {"apiVersion": "shards.example.com/v1", "kind": "Gadget", "metadata": {"name": f"g{i}"},
                  "spec": {"i": i}}
        async with http.post(path, json=gadget) as response:
            assert response.status == 201, await response.text()
    everything, _ = await list_all(http, path)
    assert len(everything) == 24
    found = []
    for text in random_split(random.Random(24), 4):
        status, body = await get_json(http, path, shardSelector=text)
        assert status == 200 and body["kind"] == "GadgetList" and body["metadata"]["shardInfo"]["selector"] == text
        found.append(ids(body["items"]))
    assert_partition(found, ids(everything))


# -- WATCH -----------------------------------------------------------------------------------------

class Stream:
    """One open watch: read up to a point, then to its end."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response
        self.events: list[dict[str, Any]] = []

    async def read_until_initial_end(self) -> None:
        while True:
            event = json.loads(await self.response.content.readline())
            self.events.append(event)
            if event["type"] == "BOOKMARK":
                return

    async def read_through(self, revision: str) -> None:
        """Read until a bookmark at or past `revision` (the server sends one every 50 ms), then close."""
        while True:
            event = json.loads(await self.response.content.readline())
            if event["type"] == "BOOKMARK" and int(event["object"]["metadata"]["resourceVersion"]) >= int(revision):
                break
            self.events.append(event)
        self.response.close()

    def changes(self) -> list[tuple[str, str, str]]:
        return [(e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"])
                for e in self.events if e["type"] != "BOOKMARK"]


async def current_revision(http: aiohttp.ClientSession) -> str:
    status, body = await get_json(http, CONFIGMAPS, limit="1")
    return str(body["metadata"]["resourceVersion"])


async def open_watch(http: aiohttp.ClientSession, **params: str) -> Stream:
    response = await http.get(CONFIGMAPS, params={
        "watch": "true", "sendInitialEvents": "true", "allowWatchBookmarks": "true",
        "resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "20", **params})
    assert response.status == 200, await response.text()
    return Stream(response)


async def churn(http: aiohttp.ClientSession, rand: random.Random, names: list[tuple[str, str]]) -> None:
    """Random updates and deletes of existing objects, and a few creates."""
    for ns, name in rand.sample(names, 15):
        patch = {"data": {"touched": str(rand.random())}}
        async with http.patch(f"/api/v1/namespaces/{ns}/configmaps/{name}", json=patch,
                              headers={"Content-Type": "application/merge-patch+json"}) as response:
            assert response.status == 200, await response.text()
    for ns, name in rand.sample(names, 8):
        async with http.delete(f"/api/v1/namespaces/{ns}/configmaps/{name}") as response:
            assert response.status == 200, await response.text()
    await create_configmaps(http, rand, 10)


@pytest.mark.parametrize("parts", [2, 4, 16])
async def test_shard_watch_streams_partition_the_unsharded_stream(server: runner.Running,
                                                                  http: aiohttp.ClientSession, parts: int) -> None:
    rand = random.Random(200 + parts)
    await create_configmaps(http, rand, 40)
    before, _ = await list_all(http, CONFIGMAPS)
    shards = random_split(rand, parts)
    memo = sharding.hashes_for(server.server.store)
    whole = await open_watch(http)
    streams = [await open_watch(http, shardSelector=text) for text in shards]
    for stream in [whole, *streams]:
        await stream.read_until_initial_end()
    hashed_before = memo.computed
    await churn(http, rand, sorted(ids(before)))
    last = await current_revision(http)
    for stream in [whole, *streams]:
        await stream.read_through(last)

    # Bookmarks are not filtered: every shard ends its initial events with the annotated bookmark.
    for stream in streams:
        bookmark = next(e for e in stream.events if e["type"] == "BOOKMARK")
        assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    per_shard = [Counter(stream.changes()) for stream in streams]
    assert all(count == 1 for shard in per_shard for count in shard.values())
    assert_partition([set(shard) for shard in per_shard], set(whole.changes()))
    assert sum(len(shard) for shard in per_shard) == len(whole.changes())
    assert Counter(t for t, _, _ in whole.changes())["DELETED"] == 8
    for text, stream in zip(shards, streams):
        selector = sharding.parse(text)
        assert all(selector.matches(e["object"]) for e in stream.events if e["type"] != "BOOKMARK")
    # 33 writes, each hashed once, however many shard watchers received them.
    assert memo.computed - hashed_before == 15 + 8 + 10


async def test_a_shard_watch_with_a_label_selector_still_turns_relabels_into_deletes(
        http: aiohttp.ClientSession) -> None:
    names = [f"r{i}" for i in range(12)]
    uids = {}
    for name in names:
        async with http.post("/api/v1/namespaces/default/configmaps",
                             json={"metadata": {"name": name, "labels": {"tier": "web"}}}) as response:
            uids[name] = (await response.json())["metadata"]["uid"]
    low = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
    inside = [n for n in names if sharding.parse(low).matches({"metadata": {"uid": uids[n]}})]
    stream = await open_watch(http, shardSelector=low, labelSelector="tier=web")
    await stream.read_until_initial_end()
    for name in names:
        async with http.patch(f"/api/v1/namespaces/default/configmaps/{name}", json={"metadata": {"labels": {"tier": "db"}}},
                              headers={"Content-Type": "application/merge-patch+json"}) as response:
            assert response.status == 200
    await stream.read_through(await current_revision(http))
    changes = stream.changes()
    assert sorted(n for t, n, _ in changes if t == "ADDED") == sorted(inside)
    assert sorted(n for t, n, _ in changes if t == "DELETED") == sorted(inside)


# -- the example: N sharded watchers ------------------------------------------------------------------

async def create_pods(http: aiohttp.ClientSession, names: list[str]) -> set[str]:
    uids = set()
    for name in names:
        body = {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        async with http.post("/api/v1/namespaces/default/pods", json=body) as response:
            assert response.status == 201, await response.text()
            uids.add((await response.json())["metadata"]["uid"])
    return uids


@pytest.mark.parametrize("shards", [3, 8])
async def test_the_example_watchers_together_see_every_pod_exactly_once(server: runner.Running,
                                                                       http: aiohttp.ClientSession,
                                                                       shards: int) -> None:
    before = await create_pods(http, [f"before-{i}" for i in range(25)])
    stop = asyncio.Event()
    result = sharded_watchers.make_shards(shards)
    watching = asyncio.create_task(sharded_watchers.run(server.url, result, 30, stop=stop))
    during = await create_pods(http, [f"during-{i}" for i in range(25)])
    expected = before | during
    for _ in range(200):  # until the watchers caught up, at most 10 s
        if set().union(*(shard.seen for shard in result)) >= expected:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.1)  # a duplicate, if any, would come right behind
    stop.set()
    await watching
    assert all(shard.server_side for shard in result)
    assert sharded_watchers.overlaps(result) == set()
    assert set().union(*(shard.seen for shard in result)) == expected


# -- the gate --------------------------------------------------------------------------------------

async def test_with_the_gate_off_the_parameter_is_ignored(tmp_path: Any) -> None:
    running = await runner.start(str(tmp_path / "off"), feature_gates="ShardedListAndWatch=false")
    try:
        async with aiohttp.ClientSession(running.url) as http:
            await create_configmaps(http, random.Random(5), 20)
            everything, _ = await list_all(http, CONFIGMAPS)
            half = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
            for text in (half, "not a selector at all"):
                status, body = await get_json(http, CONFIGMAPS, shardSelector=text)
                assert status == 200 and "shardInfo" not in body["metadata"]
                assert ids(body["items"]) == ids(everything)
            stream = await open_watch(http, shardSelector=half)
            await stream.read_until_initial_end()
            assert len(stream.changes()) == len(everything)
            stream.response.close()

            # The example notices (no shardInfo) and filters on the client instead.
            pods = await create_pods(http, [f"p{i}" for i in range(12)])
            result = sharded_watchers.make_shards(4)
            stop = asyncio.Event()
            watching = asyncio.create_task(sharded_watchers.run(running.url, result, 30, stop=stop))
            for _ in range(200):
                if set().union(*(shard.seen for shard in result)) >= pods:
                    break
                await asyncio.sleep(0.05)
            stop.set()
            await watching
            assert not any(shard.server_side for shard in result)
            assert sharded_watchers.overlaps(result) == set()
            assert set().union(*(shard.seen for shard in result)) == pods
    finally:
        await running.stop()


# -- the kubernetes 36.0.3 client ----------------------------------------------------------------------

@pytest.mark.slow
def test_the_python_client_shard_selector_partitions_pods(haru: Cluster) -> None:
    api = client.CoreV1Api(config.new_client_from_config(config_file=haru.kubeconfig))
    ns = "py-shards"
    api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    rand = random.Random(36)
    start_rv = api.list_namespaced_pod(ns).metadata.resource_version  # a watch from here replays every create
    for i in range(rand.randint(30, 40)):
        api.create_namespaced_pod(ns, client.V1Pod(
            metadata=client.V1ObjectMeta(name=f"p{i}-{rand.getrandbits(20):05x}"),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")])))
    everything = api.list_namespaced_pod(ns)
    rv = everything.metadata.resource_version
    assert everything.metadata.shard_info is None
    all_pods = {pod.metadata.name for pod in api.list_namespaced_pod(ns, resource_version=rv,
                                                                     resource_version_match="Exact").items}
    for parts in (2, 4, 16):
        shards = random_split(rand, parts)
        listed = []
        for text in shards:
            page = api.list_namespaced_pod(ns, shard_selector=text, resource_version=rv, resource_version_match="Exact")
            assert page.metadata.shard_info.selector == text
            listed.append({pod.metadata.name for pod in page.items})
        assert_partition(listed, all_pods)
        if parts == 4:
            assert_partition([watch_shard(api, ns, text, start_rv, rv, len(names))
                              for text, names in zip(shards, listed)], all_pods)
    with pytest.raises(ApiException) as bad:
        api.list_namespaced_pod(ns, shard_selector="shardRange(object.metadata.uid, '0x0', '0x1')")
    assert bad.value.status == 400 and "invalid shard selector: hexStart must be" in bad.value.body


def watch_shard(api: client.CoreV1Api, ns: str, text: str, start_rv: str, last_rv: str, expected: int) -> set[str]:
    """Names a shard watch replays from `start_rv` up to `last_rv`; stops once `expected` arrived."""
    seen: set[str] = set()
    if not expected:
        return seen
    for _ in range(3):  # a 504 "too large resource version" is retriable, as client-go treats it
        stream = watch.Watch()
        try:
            for event in stream.stream(api.list_namespaced_pod, ns, shard_selector=text, resource_version=start_rv,
                                       timeout_seconds=3):
                if int(event["object"].metadata.resource_version) <= int(last_rv):
                    seen.add(event["object"].metadata.name)
                if len(seen) >= expected:
                    stream.stop()
            return seen
        except ApiException as exc:
            if exc.status != 504:
                raise
    raise AssertionError("the watch kept answering 504")


@pytest.mark.slow
def test_the_python_client_against_a_server_with_the_gate_off(tmp_path: Any) -> None:
    cluster = start_haru(str(tmp_path), "--feature-gates", "ShardedListAndWatch=false")
    try:
        api = client.CoreV1Api(config.new_client_from_config(config_file=cluster.kubeconfig))
        api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="off")))
        for i in range(6):
            api.create_namespaced_config_map("off", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"c{i}")))
        half = "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')"
        page = api.list_namespaced_config_map("off", shard_selector=half)
        # Every item, the root CA publisher's kube-root-ca.crt too if it got there first.
        mine = [c for c in page.items if c.metadata.name != "kube-root-ca.crt"]
        assert page.metadata.shard_info is None and len(mine) == 6
    finally:
        stop_haru(cluster)
