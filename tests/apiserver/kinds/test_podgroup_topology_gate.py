"""PodGroup `spec.schedulingConstraints`, a Workload template's, and their gate (TopologyAwareWorkloadScheduling):
with the gate off the API server drops the field silently, as upstream's dropDisabledFields does
(api-1.36.md §1.3); with it on the constraint is stored as sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio

from tests.conftest import InProcess

GROUPS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups"
TOPOLOGY = {"topology": [{"key": "topology.kubernetes.io/rack"}]}


def pod_group(name: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "schedulingConstraints": TOPOLOGY}}


async def _started(tmp_path: Path, gates: str) -> AsyncIterator[InProcess]:
    import aiohttp

    from apiserver import runner

    running = await runner.start(str(tmp_path / "data"), port=0, feature_gates=gates)
    session = aiohttp.ClientSession()
    try:
        yield InProcess(running, session)
    finally:
        await session.close()
        await running.stop()


@pytest_asyncio.fixture
async def gated(tmp_path: Path) -> AsyncIterator[InProcess]:
    async for api in _started(tmp_path, "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"):
        yield api


@pytest_asyncio.fixture
async def ungated(tmp_path: Path) -> AsyncIterator[InProcess]:
    async for api in _started(tmp_path, "GenericWorkload=true,TopologyAwareWorkloadScheduling=false"):
        yield api


@pytest.mark.asyncio
async def test_with_the_gate_on_the_constraint_is_stored(gated: InProcess) -> None:
    status, created, _ = await gated.request("POST", GROUPS, json=pod_group("g1"))
    assert status == 201, created
    assert created["spec"]["schedulingConstraints"] == TOPOLOGY
    status, read, _ = await gated.request("GET", GROUPS + "/g1")
    assert read["spec"]["schedulingConstraints"] == TOPOLOGY


@pytest.mark.asyncio
async def test_with_the_gate_off_the_constraint_is_dropped_and_the_rest_kept(ungated: InProcess) -> None:
    status, created, _ = await ungated.request("POST", GROUPS, json=pod_group("g1"))
    assert status == 201, created
    assert "schedulingConstraints" not in created["spec"]
    assert created["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    assert created["spec"]["disruptionMode"] == "Pod"  # WorkloadAwarePreemption is on: its default stays
    status, read, _ = await ungated.request("GET", GROUPS + "/g1")
    assert "schedulingConstraints" not in read["spec"]


WORKLOADS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/workloads"


def workload(name: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
                                            "schedulingConstraints": TOPOLOGY}]}}


@pytest.mark.asyncio
async def test_a_workload_template_keeps_its_constraint_with_the_gate_on(gated: InProcess) -> None:
    status, created, _ = await gated.request("POST", WORKLOADS, json=workload("w1"))
    assert status == 201, created
    assert created["spec"]["podGroupTemplates"][0]["schedulingConstraints"] == TOPOLOGY


@pytest.mark.asyncio
async def test_a_workload_template_loses_its_constraint_with_the_gate_off(ungated: InProcess) -> None:
    status, created, _ = await ungated.request("POST", WORKLOADS, json=workload("w1"))
    assert status == 201, created
    [template] = created["spec"]["podGroupTemplates"]
    assert "schedulingConstraints" not in template
    assert template["schedulingPolicy"] == {"gang": {"minCount": 4}}
