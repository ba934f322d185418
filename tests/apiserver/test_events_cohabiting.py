"""One Event store, two APIs: core/v1 and events.k8s.io/v1 see the same objects, each in its shape."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from apiserver.kinds import event_shapes

CORE = "/api/v1/namespaces/default/events"
V1 = "/apis/events.k8s.io/v1/namespaces/default/events"


def v1_event(name: str = "web.1", **extra):
    body = {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2026-12-01T10:00:00.000000Z",
        "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-haru",
        "action": "Scheduling", "reason": "Scheduled", "type": "Normal", "note": "Successfully assigned default/web",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u-1", "apiVersion": "v1"},
    }
    body.update(extra)
    return body


def core_event(name: str = "web.2"):
    return {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u-1"},
        "reason": "Pulled", "message": "Pulled the image", "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-12-01T10:00:00Z", "lastTimestamp": "2026-12-01T10:00:05Z", "count": 2,
    }


@pytest.mark.parametrize("event", [v1_event(), {**v1_event(), "series": {"count": 3, "lastObservedTime": "2026-12-01T10:01:00.000000Z"},
                                                "related": {"kind": "Node", "name": "n"}}],
                         ids=["a singleton event", "with a series and a related object"])
def test_an_events_v1_event_survives_the_trip_through_core(event):
    core = event_shapes.to_core(event)
    assert core["involvedObject"] == event["regarding"] and core["message"] == event["note"]
    assert core["reportingComponent"] == "default-scheduler" and core["source"] == {}
    assert core["firstTimestamp"] is None and core["apiVersion"] == "v1"
    back = event_shapes.to_events_v1(core)
    assert back == {**event, "deprecatedSource": {}, "deprecatedFirstTimestamp": None, "deprecatedLastTimestamp": None}


def test_a_core_event_reads_as_events_v1_with_deprecated_fields():
    shown = event_shapes.to_events_v1(core_event())
    assert shown["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert shown["deprecatedCount"] == 2 and shown["deprecatedLastTimestamp"] == "2026-12-01T10:00:05Z"
    assert shown["note"] == "Pulled the image" and shown["regarding"]["name"] == "web"
    assert shown["eventTime"] is None and "reportingController" not in shown and "involvedObject" not in shown


async def test_both_apis_list_and_get_every_event(api):
    status, created, _ = await api.request("POST", V1, json=v1_event())
    assert status == 201, created
    assert created["apiVersion"] == "events.k8s.io/v1" and created["note"] == "Successfully assigned default/web"
    status, _, _ = await api.request("POST", CORE, json=core_event())
    assert status == 201

    _, core_list, _ = await api.request("GET", CORE)
    assert sorted(e["metadata"]["name"] for e in core_list["items"]) == ["web.1", "web.2"]
    scheduled = next(e for e in core_list["items"] if e["metadata"]["name"] == "web.1")
    assert scheduled["involvedObject"]["name"] == "web" and scheduled["reportingComponent"] == "default-scheduler"
    assert scheduled["message"] == "Successfully assigned default/web" and "note" not in scheduled

    _, v1_list, _ = await api.request("GET", V1)
    assert v1_list["kind"] == "EventList" and v1_list["apiVersion"] == "events.k8s.io/v1"
    pulled = next(e for e in v1_list["items"] if e["metadata"]["name"] == "web.2")
    assert pulled["apiVersion"] == "events.k8s.io/v1" and pulled["deprecatedSource"]["component"] == "kubelet"

    status, one, _ = await api.request("GET", CORE + "/web.1")
    assert status == 200 and one["involvedObject"]["uid"] == "u-1"
    status, one, _ = await api.request("GET", V1 + "/web.2")
    assert status == 200 and one["regarding"]["uid"] == "u-1" and one["note"] == "Pulled the image"


@pytest.mark.parametrize("path, selector, expected", [
    (CORE, "involvedObject.name=web,involvedObject.kind=Pod,involvedObject.uid=u-1", ["web.1", "web.2"]),
    (CORE, "reportingComponent=default-scheduler", ["web.1"]),
    (CORE, "source=kubelet", ["web.2"]),
    (CORE, "reason=Pulled,type=Normal", ["web.2"]),
    (V1, "regarding.name=web,regarding.namespace=default", ["web.1", "web.2"]),
    (V1, "reportingController=default-scheduler", ["web.1"]),
    (V1, "reason=Scheduled", ["web.1"]),
], ids=["core: involvedObject", "core: reportingComponent", "core: source", "core: reason and type",
        "events.k8s.io: regarding", "events.k8s.io: reportingController", "events.k8s.io: reason"])
async def test_each_api_selects_by_its_own_field_names(api, path, selector, expected):
    await api.request("POST", V1, json=v1_event())
    await api.request("POST", CORE, json=core_event())
    status, listed, _ = await api.request("GET", f"{path}?fieldSelector={selector}")
    assert status == 200, listed
    assert sorted(e["metadata"]["name"] for e in listed["items"]) == expected


async def test_events_v1_rejects_the_core_field_names_in_selectors(api):
    status, body, _ = await api.request("GET", f"{V1}?fieldSelector=involvedObject.name=web")
    assert status == 400 and body["message"] == 'field label not supported: involvedObject.name'


async def test_an_update_through_either_api_is_seen_by_the_other(api):
    await api.request("POST", CORE, json=core_event())
    patch = {"metadata": {"labels": {"seen": "twice"}}}
    status, patched, _ = await api.request("PATCH", V1 + "/web.2", data=msgspec.json.encode(patch),
                                           headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200, patched
    assert patched["deprecatedCount"] == 2 and patched["apiVersion"] == "events.k8s.io/v1"
    _, core, _ = await api.request("GET", CORE + "/web.2")
    assert core["count"] == 2 and core["metadata"]["labels"] == {"seen": "twice"} and "deprecatedCount" not in core
    # events.k8s.io/v1 keeps the count of an event unchanging; core/v1 (the recorder's API) may bump it.
    status, body, _ = await api.request("PATCH", V1 + "/web.2", data=b'{"deprecatedCount": 5}',
                                        headers={"Content-Type": "application/merge-patch+json"})
    assert status == 422 and body["message"].endswith('count: Invalid value: 5: field is immutable'), body
    status, bumped, _ = await api.request("PATCH", CORE + "/web.2", data=b'{"count": 5}',
                                          headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200 and bumped["count"] == 5

    await api.request("POST", V1, json=v1_event())
    _, current, _ = await api.request("GET", CORE + "/web.1")
    current["metadata"]["annotations"] = {"a": "b"}
    status, put, _ = await api.request("PUT", CORE + "/web.1", json=current)
    assert status == 200, put
    _, shown, _ = await api.request("GET", V1 + "/web.1")
    assert shown["metadata"]["annotations"] == {"a": "b"} and shown["note"] == "Successfully assigned default/web"


async def test_an_invalid_events_v1_write_leaves_the_stored_event_alone(api):
    await api.request("POST", V1, json=v1_event())
    status, body, _ = await api.request("PATCH", V1 + "/web.1", data=b'{"note": "changed"}',
                                        headers={"Content-Type": "application/merge-patch+json"})
    assert status == 422 and "field is immutable" in body["message"]
    _, core, _ = await api.request("GET", CORE + "/web.1")
    assert core["message"] == "Successfully assigned default/web"


async def test_delete_through_one_api_removes_it_from_both(api):
    await api.request("POST", CORE, json=core_event())
    status, body, _ = await api.request("DELETE", V1 + "/web.2")
    assert status == 200, body
    status, _, _ = await api.request("GET", CORE + "/web.2")
    assert status == 404


async def test_a_watch_on_events_v1_sees_core_events_in_its_shape(api):
    async with api.session.get(api.url + V1 + "?watch=true&timeoutSeconds=5") as resp:
        assert resp.status == 200
        await api.request("POST", CORE, json=core_event())
        line = await asyncio.wait_for(resp.content.readline(), 10)
    frame = msgspec.json.decode(line)
    assert frame["type"] == "ADDED" and frame["object"]["apiVersion"] == "events.k8s.io/v1"
    assert frame["object"]["regarding"]["name"] == "web" and frame["object"]["deprecatedCount"] == 2


async def test_tables_of_both_apis_show_the_same_rows(api):
    await api.request("POST", V1, json=v1_event())
    table_type = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    rows = {}
    for path in (CORE, V1):
        status, table, _ = await api.request("GET", path, headers=table_type)
        assert status == 200, table
        rows[path] = [row["cells"][1:4] + row["cells"][6:7] for row in table["rows"]]
    assert rows[CORE] == rows[V1] == [["Normal", "Scheduled", "pod/web", "Successfully assigned default/web"]]
