"""The scheduler's events.k8s.io/v1 recorder against the in-process API server."""

from __future__ import annotations

from typing import Any

from client import kubeconfig
from client.resources import EVENTS_V1
from client.rest import RestClient
from scheduler.event_recorder import EventRecorder
from tests.scheduler.fakes import pod


async def test_the_same_event_again_becomes_a_series_on_the_first_object(api: Any) -> None:
    async with RestClient(kubeconfig.Config.for_url(api.url, None, None)) as client:
        recorder = EventRecorder(client, "default-scheduler")
        target = pod("web")
        message = "0/4 nodes are available: 4 Insufficient cpu."
        recorder.event(target, "Warning", "FailedScheduling", message, "Scheduling")
        await recorder.flush()
        recorder.event(target, "Warning", "FailedScheduling", message, "Scheduling")
        await recorder.flush()
        recorder.event(target, "Warning", "FailedScheduling", "a different reason", "Scheduling")
        await recorder.flush()
        items = (await client.list(EVENTS_V1, "default"))["items"]
    assert len(items) == 2
    first = next(e for e in items if e["note"] == message)
    assert first["series"]["count"] == 2 and first["series"]["lastObservedTime"]
    assert (first["reason"], first["type"], first["action"]) == ("FailedScheduling", "Warning", "Scheduling")
    assert first["reportingController"] == "default-scheduler"
    assert first["reportingInstance"].startswith("default-scheduler-")
    assert first["regarding"]["kind"] == "Pod" and first["regarding"]["name"] == "web"
    assert first["metadata"]["name"].startswith("web.")


async def test_a_note_longer_than_the_limit_is_cut_as_upstream_cuts_it(api: Any) -> None:
    async with RestClient(kubeconfig.Config.for_url(api.url, None, None)) as client:
        recorder = EventRecorder(client)
        recorder.event(pod("web"), "Warning", "FailedScheduling", "x" * 2000, "Scheduling")
        await recorder.flush()
        (event,) = (await client.list(EVENTS_V1, "default"))["items"]
    assert len(event["note"]) == 1024 and event["note"].endswith(" ...")


def test_series_older_than_the_window_are_forgotten_once_past_4096(monkeypatch: Any) -> None:
    from scheduler import event_recorder

    clock = [1000.0]
    monkeypatch.setattr(event_recorder.time, "time", lambda: clock[0])
    recorder = EventRecorder(None)  # no client: the events go nowhere, the bookkeeping stays
    again = pod("again")
    recorder.event(again, "Warning", "FailedScheduling", "m")
    for i in range(4095):
        recorder.event(pod(f"p{i}"), "Normal", "Scheduled", "m")
    clock[0] += event_recorder.SERIES_WINDOW + 1
    recorder.event(again, "Warning", "FailedScheduling", "m")  # seen again after the window: a new entry
    clock[0] += 10
    recorder.event(pod("new"), "Normal", "Scheduled", "m")  # the 4097th: the 4095 expired ones go
    assert [k[2] for k in recorder._series] == ["again", "new"]
    assert recorder._series[next(iter(recorder._series))][2] == 1  # a fresh series, not a continuation
