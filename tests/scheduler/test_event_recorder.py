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
