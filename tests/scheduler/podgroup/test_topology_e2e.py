"""Acceptance (issue 13, topology-aware placement) with kubectl v1.36.3 against `haru up`: a gang
with a rack constraint lands in one rack, and a gang no rack can hold stays unbound while its
PodGroup says why.

Four hollow 16-CPU nodes; the test labels them into two racks of two with `kubectl label node`.
Three 12-CPU pods (first, on the empty cluster) would fit three nodes, but no rack has three.
Four 6-CPU pods would spread one per node without the constraint (LeastAllocated); with it they
pack two per node inside one rack. With TopologyAwareWorkloadScheduling=false both tests fail.
`--record-results` is on: the bound pods carry the placement points' answers too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Cluster, start_haru, stop_haru

GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
RACK = "example.com/rack"
RACKS = {"cpu-0": "r1", "cpu-1": "r1", "cpu-2": "r2", "cpu-3": "r2"}
PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = start_haru(str(tmp_path_factory.mktemp("haru-tas")), "--nodes", "4", "--gpus-per-node", "0",
                   "--feature-gates", GATES, "--record-results", timeout=60)
    try:
        for node, rack in RACKS.items():
            c.kubectl("label", "node", node, f"{RACK}={rack}")
        yield c
    finally:
        stop_haru(c)


def gang(name: str, pods: int, cpu: str, min_count: int) -> str:
    docs = [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": name, "namespace": "default"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}},
                      "schedulingConstraints": {"topology": [{"key": RACK}]}}}]
    for i in range(pods):
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{name}-{i}", "namespace": "default"},
                     "spec": {"schedulingGroup": {"podGroupName": name},
                              "containers": [{"name": "c", "image": "busybox",
                                              "resources": {"requests": {"cpu": cpu}}}]}})
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": docs})


def pods_of(cluster: Cluster, name: str) -> list[dict[str, Any]]:
    out = cluster.kubectl("get", "pods", "-n", "default", "-o", "json").stdout
    return [p for p in json.loads(out)["items"] if p["metadata"]["name"].startswith(f"{name}-")]


def wait_for(what: str, check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def condition(cluster: Cluster, name: str) -> dict[str, Any] | None:
    out = cluster.kubectl("get", "podgroup", name, "-n", "default", "-o", "json").stdout
    conditions = (json.loads(out).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "PodGroupScheduled"), None)


def test_a_gang_no_rack_can_hold_stays_unbound_and_its_podgroup_says_why(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", "-", input=gang("wide", 3, "12", 3))
    said = wait_for("the PodGroup to say why", lambda: (c := condition(cluster, "wide")) and c["status"] == "False"
                    and c)
    assert said["reason"] == "Unschedulable"
    # r1 is tried first (domains in sorted order); the room pre-check turns it down.
    assert said["message"] == ("0/2 placements are available, first placement status: pod group is "
                               "unschedulable: needs 3, at most 2 fit: 1 pods Insufficient cpu")
    assert not any(p["spec"].get("nodeName") for p in pods_of(cluster, "wide"))
    described = cluster.kubectl("describe", "podgroup", "wide", "-n", "default").stdout
    assert "0/2 placements are available" in described


def all_bound(cluster: Cluster, name: str, count: int) -> list[dict[str, Any]] | None:
    pods = pods_of(cluster, name)
    return pods if len(pods) == count and all(p["spec"].get("nodeName") for p in pods) else None


def test_a_gang_with_a_rack_constraint_lands_in_one_rack(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", "-", input=gang("train", 4, "6", 4))
    bound = wait_for("the gang to bind", lambda: all_bound(cluster, "train", 4))
    racks = {RACKS[p["spec"]["nodeName"]] for p in bound}
    assert len(racks) == 1, [p["spec"]["nodeName"] for p in bound]
    said = wait_for("PodGroupScheduled", lambda: (c := condition(cluster, "train")) and c["status"] == "True" and c)
    assert said["message"].endswith(f"in placement {RACK}={racks.pop()}"), said["message"]
    assert not any(p["spec"].get("nodeName") for p in pods_of(cluster, "wide"))  # still not one pod of it

    def recorded() -> dict[str, Any] | None:
        notes = pods_of(cluster, "train")[0]["metadata"].get("annotations") or {}
        return notes if PREFIX + "placementscore-result" in notes else None
    notes = wait_for("the recorded results", recorded)
    assert json.loads(notes[PREFIX + "placementgenerate-result"]) == {
        "TopologyPlacementGenerator": [f"{RACK}=r1", f"{RACK}=r2"]}
    scores = json.loads(notes[PREFIX + "placementscore-result"])
    assert sorted(scores) == [f"{RACK}=r1", f"{RACK}=r2"]  # both racks held the gang, so both were scored
    assert all(set(by_plugin) == {"NodeResourcesFit", "PodGroupPodsCount"} for by_plugin in scores.values())
