"""Controller events through the EventCorrelator, as `kubectl get events` shows them.

The ReplicaSet controller runs against a real API server; a ReplicaSet of 12 gets nine
"Created pod" events and one combined event counted three times, as kube-controller-manager's.
A repeated event is one object: COUNT 3 in `kubectl get events -o wide`, "(x3 over …)" in `kubectl events`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import kubernetes.client as pyclient
import pytest

from client.event_correlator import AGGREGATE_PREFIX
from client.event_recorder import CoreEventRecorder
from client.resources import EVENTS, NAMESPACES, PODS, REPLICASETS
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("replicaset",)
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _events_about(cluster: Cluster, namespace: str, name: str) -> list[dict[str, Any]]:
    items = (await cluster.client.list(EVENTS, namespace)).get("items") or []
    return [e for e in items if e["involvedObject"]["name"] == name]


async def test_a_replica_set_of_twelve_gets_nine_events_and_one_combined(cluster: Cluster) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "many"}})
    await cluster.client.create(REPLICASETS, {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "metadata": {"name": "dozen"}, "spec": {
                                                  "replicas": 12, "selector": {"matchLabels": {"app": "dozen"}},
                                                  "template": {"metadata": {"labels": {"app": "dozen"}}, "spec": {
                                                      "containers": [{"name": "main", "image": "busybox"}]}}}},
                                "many")

    async def twelve() -> bool:
        return len((await cluster.client.list(PODS, "many")).get("items") or []) == 12

    await eventually(twelve, timeout=20)

    async def settled() -> list[dict[str, Any]] | None:
        events = await _events_about(cluster, "many", "dozen")
        combined = [e for e in events if e["message"].startswith(AGGREGATE_PREFIX)]
        return events if combined and combined[0]["count"] == 3 else None

    events = await eventually(settled, timeout=20)
    singles = [e for e in events if not e["message"].startswith(AGGREGATE_PREFIX)]
    assert len(singles) == 9 and all(e["count"] == 1 and e["reason"] == "SuccessfulCreate" for e in singles)
    assert len(events) == 10

    code, out, err = await cluster.kubectl("get", "events", "-n", "many", "-o", "wide")
    assert code == 0, err
    combined = [line.split() for line in out.splitlines() if AGGREGATE_PREFIX in line]
    assert len(combined) == 1 and combined[0][-2:-1] == ["3"], out  # COUNT, then NAME


async def test_a_repeated_event_is_counted_and_kubectl_shows_the_count(cluster: Cluster) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "repeat"}})
    pod = await cluster.client.create(PODS, {"metadata": {"name": "flaky"}, "spec": {
        "containers": [{"name": "main", "image": "busybox"}]}}, "repeat")
    recorder = CoreEventRecorder(cluster.client, "test-controller")
    for _ in range(3):
        await recorder.record({**pod, "kind": "Pod", "apiVersion": "v1"}, "Warning", "BackOff", "Back-off restarting")

    events = await _events_about(cluster, "repeat", "flaky")
    assert [(e["reason"], e["count"], e["source"]["component"]) for e in events] == [("BackOff", 3, "test-controller")]
    code, out, err = await cluster.kubectl("get", "events", "-n", "repeat", "-o", "wide")
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()[1:]]
    assert len(rows) == 1 and rows[0][-2] == "3", out
    code, out, err = await cluster.kubectl("events", "-n", "repeat")
    assert code == 0, err
    assert "(x3 over" in out and "Back-off restarting" in out, out
    # The Python client reads the same one event, counted.
    core = pyclient.CoreV1Api(pyclient.ApiClient(pyclient.Configuration(host=cluster.url)))
    listed = await asyncio.to_thread(core.list_namespaced_event, "repeat")
    assert [(e.reason, e.count, e.source.component) for e in listed.items] == [("BackOff", 3, "test-controller")]
