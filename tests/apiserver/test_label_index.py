"""The label index answers selective LISTs exactly as a full scan of the store would.

Each case runs the same LIST twice against one in-process server: once through the index, once with
the index switched off (a plain scan), after creates, label changes and deletes.
"""

from __future__ import annotations

import asyncio
import random

import pytest

from apiserver import labels
from tests.conftest import InProcess

CMS = "/api/v1/namespaces/default/configmaps"
SELECTORS = ["app=a", "app in (a,b)", "app=a,tier!=front", "tier", "app=nothing", "app=a,tier=back",
             "app notin (a),tier", "!tier,app=b"]


async def _names(api: InProcess, query: str) -> list[str]:
    status, body, _ = await api.request("GET", f"{CMS}?{query}")
    assert status == 200, body
    return [item["metadata"]["name"] for item in body["items"]]


async def _both_ways(api: InProcess, query: str) -> tuple[list[str], list[str]]:
    index = api.running.server.label_index
    indexed = await _names(api, query)
    api.running.server.label_index = None
    try:
        scanned = await _names(api, query)
    finally:
        api.running.server.label_index = index
    return indexed, scanned


@pytest.mark.parametrize("selector", SELECTORS)
async def test_indexed_lists_equal_scanned_lists(api: InProcess, selector: str) -> None:
    rng = random.Random(7)
    for i in range(60):
        labels = {"app": rng.choice("abc")}
        if rng.random() < 0.6:
            labels["tier"] = rng.choice(["front", "back"])
        await api.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap",
                                             "metadata": {"name": f"c{i:02d}", "labels": labels}})
    indexed, scanned = await _both_ways(api, f"labelSelector={selector}")  # builds the index
    assert indexed == scanned
    for i in range(0, 60, 7):  # relabel some, delete others: the index must follow
        await api.request("PATCH", f"{CMS}/c{i:02d}", json={"metadata": {"labels": {"app": "b", "tier": None}}},
                          headers={"Content-Type": "application/merge-patch+json"})
    for i in range(3, 60, 11):
        await api.request("DELETE", f"{CMS}/c{i:02d}")
    query = f"labelSelector={selector}"
    indexed, scanned = await _both_ways(api, query)
    assert indexed == scanned
    # With a limit, the first page is the same too, and the continue token carries on from it.
    first_indexed, first_scanned = await _both_ways(api, query + "&limit=5")
    assert first_indexed == first_scanned == scanned[:5]
    # A page much smaller than its candidates is read off a heap rather than a sort: same answer.
    small_indexed, small_scanned = await _both_ways(api, query + "&limit=2")
    assert small_indexed == small_scanned == scanned[:2]


async def test_the_index_is_built_from_what_was_stored_before_the_server_started(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from apiserver import runner

    first = await runner.start(str(tmp_path / "d"), port=0)
    try:
        for name, app in (("x", "a"), ("y", "b")):
            await first.server.store.create(f"/registry/core/configmaps/default/{name}", {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default",
                                                                      "labels": {"app": app}}})
    finally:
        await first.stop()
    second = await runner.start(str(tmp_path / "d"), port=0)
    try:
        index = second.server.label_index
        # The bootstrap has just moved default/kubernetes to the new port: let the index follow.
        for _ in range(1000):
            if index.revision == second.server.store.revision:
                break
            await asyncio.sleep(0.005)
        assert list(index.candidates("/registry/core/configmaps/", labels.parse("app=b")) or ()) \
            == ["/registry/core/configmaps/default/y"]
    finally:
        await second.stop()


async def test_an_indexed_page_reads_only_its_own_records_and_one_more(api: InProcess) -> None:
    for i in range(40):
        await api.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap",
                                             "metadata": {"name": f"p{i:02d}", "labels": {"page": "yes"}}})
    await _names(api, "labelSelector=page=yes")  # builds the index
    store = api.running.server.store
    reads: list[str] = []
    real_get = store.get

    def counting_get(key, *args, **kwargs):  # type: ignore[no-untyped-def]
        reads.append(key)
        return real_get(key, *args, **kwargs)

    store.get = counting_get
    try:
        status, body, _ = await api.request("GET", f"{CMS}?labelSelector=page%3Dyes&limit=3")
    finally:
        del store.get
    assert status == 200, body
    assert [item["metadata"]["name"] for item in body["items"]] == ["p00", "p01", "p02"]
    assert body["metadata"].get("continue")  # 37 more follow
    assert len(reads) <= 4  # three for the page, one to know that more follow (was: all 40)


async def test_one_label_across_namespaces_and_resources_lists_each_prefix_alone(api: InProcess) -> None:
    """The index keeps a label's keys apart by resource and namespace: a namespace's LIST, an
    all-namespaces LIST and another resource's LIST with the same selector each get their own."""
    for ns in ("lx-a", "lx-b"):
        await api.request("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                             "metadata": {"name": ns}})
        for i in range(3):
            for kind, plural in (("ConfigMap", "configmaps"), ("Secret", "secrets")):
                await api.request("POST", f"/api/v1/namespaces/{ns}/{plural}", json={
                    "apiVersion": "v1", "kind": kind, "metadata": {"name": f"{ns}-{i}", "labels": {"team": f"t{i % 2}"}}})
    await api.request("DELETE", "/api/v1/namespaces/lx-b/configmaps/lx-b-0")
    for path in ("/api/v1/namespaces/lx-a/configmaps", "/api/v1/namespaces/lx-b/configmaps", "/api/v1/configmaps",
                 "/api/v1/namespaces/lx-b/secrets", "/api/v1/secrets", "/api/v1/namespaces/lx-none/configmaps"):
        for selector in ("team=t0", "team", "team in (t0,t1)", "team=t1,team!=t0"):
            index = api.running.server.label_index
            status, indexed, _ = await api.request("GET", f"{path}?labelSelector={selector}")
            api.running.server.label_index = None
            try:
                _, scanned, _ = await api.request("GET", f"{path}?labelSelector={selector}")
            finally:
                api.running.server.label_index = index
            assert status == 200, indexed
            names = [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in indexed["items"]]
            assert names == [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in scanned["items"]], (path, selector)
    _, body, _ = await api.request("GET", "/api/v1/configmaps?labelSelector=team=t0")
    assert [i["metadata"]["name"] for i in body["items"]] == ["lx-a-0", "lx-a-2", "lx-b-2"]
