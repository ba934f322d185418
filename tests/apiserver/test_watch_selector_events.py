"""Watches with selectors share one decode per event (`apiserver/event_objects.py`), and still each
see their own ADDED / MODIFIED / DELETED as objects enter and leave their selection."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import msgspec

from apiserver import event_objects

PODS = "/api/v1/namespaces/default/pods"


def test_the_same_bytes_decode_once() -> None:
    value = b'{"metadata":{"name":"a"}}'
    first = event_objects.shared(value)
    assert event_objects.shared(value) is first
    assert event_objects.shared(bytes(bytearray(value))) is first  # equal bytes: a MODIFIED's previous value
    assert event_objects.shared(b'{"metadata":{"name":"b"}}') == {"metadata": {"name": "b"}}


def test_the_table_keeps_at_most_its_capacity() -> None:
    for i in range(event_objects.CAPACITY + 10):
        event_objects.shared(b'{"i":%d}' % i)
    assert len(event_objects._decoded) <= event_objects.CAPACITY
    assert event_objects.shared(b'{"i":3}') == {"i": 3}


async def _watch(api: Any, rv: str, accept: str = "application/json", **params: str) -> aiohttp.ClientResponse:
    response = await api.session.get(api.url + "/api/v1/pods", headers={"Accept": accept}, params={
        "watch": "true", "resourceVersion": rv, "timeoutSeconds": "20", **params})
    assert response.status == 200, await response.text()
    return response


async def _events(response: aiohttp.ClientResponse, count: int) -> list[tuple[str, dict[str, Any]]]:
    found = []
    while len(found) < count:
        line = await asyncio.wait_for(response.content.readline(), 10)
        event = msgspec.json.decode(line)
        found.append((event["type"], event["object"]))
    return found


async def test_watchers_with_different_selectors_see_objects_enter_and_leave(api: Any) -> None:
    status, body, _ = await api.request("GET", PODS)
    rv = body["metadata"]["resourceVersion"]
    by_node = await _watch(api, rv, fieldSelector="spec.nodeName=n1")
    by_label = await _watch(api, rv, labelSelector="tier=web")
    table = await _watch(api, rv, "application/json;as=Table;v=v1;g=meta.k8s.io", labelSelector="tier=web")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"tier": "web"}},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    status, created, _ = await api.request("POST", PODS, json=pod)
    assert status == 201, created
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    status, _, _ = await api.request("POST", PODS + "/p/binding", json=binding)
    assert status == 201
    status, relabelled, _ = await api.request("PATCH", PODS + "/p", data=b'{"metadata":{"labels":{"tier":"db"}}}',
                                              headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200, relabelled
    status, bound, _ = await api.request("GET", PODS + "/p")

    node_events = await _events(by_node, 2)
    assert [t for t, _ in node_events] == ["ADDED", "MODIFIED"]  # entered with the binding
    assert node_events[0][1]["spec"]["nodeName"] == "n1"
    assert node_events[1][1]["metadata"]["labels"] == {"tier": "db"}

    label_events = await _events(by_label, 3)
    assert [t for t, _ in label_events] == ["ADDED", "MODIFIED", "DELETED"]
    deleted = label_events[2][1]
    # The last state that matched, stamped with the revision of the write that took it out.
    assert deleted["metadata"]["labels"] == {"tier": "web"}
    assert deleted["metadata"]["resourceVersion"] == relabelled["metadata"]["resourceVersion"]
    assert deleted["spec"]["nodeName"] == "n1"
    # What a plain watch sends is the stored object, byte for byte as a GET reads it.
    assert node_events[1][1] == bound
    # kubectl get -w: Tables are built from a private copy, the shared objects stay as stored.
    table_events = await _events(table, 3)
    assert [t for t, _ in table_events] == ["ADDED", "MODIFIED", "DELETED"]
    assert all(obj["kind"] == "Table" for _, obj in table_events)
    assert table_events[2][1]["rows"][0]["object"]["metadata"]["labels"] == {"tier": "web"}
    for response in (by_node, by_label, table):
        response.close()


async def test_a_watch_by_name_sees_only_that_object_in_every_namespace(api: Any) -> None:
    """`metadata.name=` is decided from the event's key before anything is decoded; the other
    terms still apply, and other objects' events (their names share a prefix) never show."""
    status, body, _ = await api.request("GET", "/api/v1/configmaps")
    rv = body["metadata"]["resourceVersion"]

    async def watch(**params: str) -> aiohttp.ClientResponse:
        response = await api.session.get(api.url + "/api/v1/configmaps", params={
            "watch": "true", "resourceVersion": rv, "timeoutSeconds": "20", **params})
        assert response.status == 200, await response.text()
        return response

    by_name = await watch(fieldSelector="metadata.name=ca")
    by_name_and_label = await watch(fieldSelector="metadata.name=ca", labelSelector="keep=yes")
    for ns in ("default", "kube-system"):
        for name in ("ca-not", "ca", "xca"):
            status, made, _ = await api.request("POST", f"/api/v1/namespaces/{ns}/configmaps", json={
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"keep": "yes" if ns == "default" else "no"}}})
            assert status == 201, made
    for name in ("ca-not", "ca"):
        status, _, _ = await api.request("DELETE", f"/api/v1/namespaces/default/configmaps/{name}")
        assert status == 200

    events = await _events(by_name, 3)
    assert [(t, o["metadata"]["namespace"], o["metadata"]["name"]) for t, o in events] == [
        ("ADDED", "default", "ca"), ("ADDED", "kube-system", "ca"), ("DELETED", "default", "ca")]
    events = await _events(by_name_and_label, 2)
    assert [(t, o["metadata"]["namespace"], o["metadata"]["name"]) for t, o in events] == [
        ("ADDED", "default", "ca"), ("DELETED", "default", "ca")]
    for response in (by_name, by_name_and_label):
        response.close()
