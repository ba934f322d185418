"""PodGroup priority and disruption mode (KEP-5710, gate WorkloadAwarePreemption) through the API.

The Priority admission plugin resolves `spec.priorityClassName` to `spec.priority` on create, with
the global default class when unset; the strategy defaults `disruptionMode` to Pod, refuses a
PodGroup disruption mode for a basic group and drops the three fields while the gate is off. The
last test drives kubectl v1.36.3 (and reads back with the Python client 36.0.3) against `haru up`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio

from tests.conftest import InProcess

Obj = dict[str, Any]
GROUPS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups"
CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"


def pod_group(name: str, **spec: Any) -> Obj:
    body: Obj = {"schedulingPolicy": {"gang": {"minCount": 2}}, **spec}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": body}


def priority_class(name: str, value: int, *, default: bool = False) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default}


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
    async for api in _started(tmp_path, "GenericWorkload=true,WorkloadAwarePreemption=true"):
        yield api


@pytest_asyncio.fixture
async def ungated(tmp_path: Path) -> AsyncIterator[InProcess]:
    async for api in _started(tmp_path, "GenericWorkload=true,WorkloadAwarePreemption=false"):
        yield api


async def _create(api: InProcess, path: str, body: Obj) -> tuple[int, Any]:
    status, answer, _ = await api.request("POST", path, json=body)
    return status, answer


@pytest.mark.asyncio
async def test_a_named_class_gives_the_group_its_value_and_the_default_disruption_mode(gated: InProcess) -> None:
    assert (await _create(gated, CLASSES, priority_class("high", 1000)))[0] == 201
    status, created = await _create(gated, GROUPS, pod_group("g1", priorityClassName="high"))
    assert status == 201, created
    assert created["spec"]["priority"] == 1000
    assert created["spec"]["priorityClassName"] == "high"
    assert created["spec"]["disruptionMode"] == "Pod"


@pytest.mark.asyncio
async def test_an_unnamed_group_takes_the_global_default_class_and_without_one_priority_zero(gated: InProcess) -> None:
    status, created = await _create(gated, GROUPS, pod_group("before-default"))
    assert status == 201, created
    assert created["spec"]["priority"] == 0 and "priorityClassName" not in created["spec"]
    assert (await _create(gated, CLASSES, priority_class("everyone", 7, default=True)))[0] == 201
    status, created = await _create(gated, GROUPS, pod_group("after-default"))
    assert status == 201, created
    assert (created["spec"]["priorityClassName"], created["spec"]["priority"]) == ("everyone", 7)


@pytest.mark.asyncio
async def test_a_missing_class_or_a_different_priority_is_refused_and_nothing_is_stored(gated: InProcess) -> None:
    status, answer = await _create(gated, GROUPS, pod_group("g1", priorityClassName="nope"))
    assert (status, answer["reason"]) == (403, "Forbidden")
    assert answer["message"] == ('podgroups.scheduling.k8s.io "g1" is forbidden: '
                                 "no PriorityClass with name nope was found")
    assert (await _create(gated, CLASSES, priority_class("high", 1000)))[0] == 201
    status, answer = await _create(gated, GROUPS, pod_group("g2", priorityClassName="high", priority=5))
    assert status == 403
    assert "the integer value of priority (5) must not be provided in pod group spec" in answer["message"]
    status, listed, _ = await gated.request("GET", GROUPS)
    assert status == 200 and listed["items"] == []


@pytest.mark.asyncio
async def test_a_matching_priority_is_accepted(gated: InProcess) -> None:
    assert (await _create(gated, CLASSES, priority_class("high", 1000)))[0] == 201
    status, created = await _create(gated, GROUPS, pod_group("g1", priorityClassName="high", priority=1000))
    assert status == 201, created


@pytest.mark.asyncio
async def test_a_basic_group_may_not_be_disrupted_as_a_whole(gated: InProcess) -> None:
    body = pod_group("b1", disruptionMode="PodGroup")
    body["spec"]["schedulingPolicy"] = {"basic": {}}
    status, answer = await _create(gated, GROUPS, body)
    assert (status, answer["reason"]) == (422, "Invalid"), answer
    assert answer["details"]["causes"][0]["field"] == "spec.disruptionMode"
    body["spec"]["disruptionMode"] = "Pod"
    assert (await _create(gated, GROUPS, body))[0] == 201
    gang = pod_group("g1", disruptionMode="PodGroup")
    status, created = await _create(gated, GROUPS, gang)
    assert status == 201 and created["spec"]["disruptionMode"] == "PodGroup"


@pytest.mark.asyncio
async def test_the_priority_fields_are_immutable(gated: InProcess) -> None:
    assert (await _create(gated, CLASSES, priority_class("high", 1000)))[0] == 201
    assert (await _create(gated, CLASSES, priority_class("low", 1)))[0] == 201
    status, created = await _create(gated, GROUPS, pod_group("g1", priorityClassName="high"))
    assert status == 201
    created["spec"]["priorityClassName"] = "low"
    created["spec"]["priority"] = 1
    status, answer, _ = await gated.request("PUT", f"{GROUPS}/g1", json=created)
    assert status == 422, answer
    fields = sorted(c["field"] for c in answer["details"]["causes"])
    assert fields == ["spec.priority", "spec.priorityClassName"]
    status, stored, _ = await gated.request("GET", f"{GROUPS}/g1")
    assert stored["spec"]["priority"] == 1000


@pytest.mark.asyncio
async def test_with_the_gate_off_the_fields_are_dropped_and_no_class_is_looked_up(ungated: InProcess) -> None:
    status, created = await _create(ungated, GROUPS, pod_group(
        "g1", priorityClassName="nope", priority=5, disruptionMode="PodGroup"))
    assert status == 201, created
    assert not {"priorityClassName", "priority", "disruptionMode"} & set(created["spec"])


def test_kubectl_shows_the_resolved_priority_and_refuses_a_basic_whole_group(tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.conftest import start_haru, stop_haru

    cluster = start_haru(str(tmp_path_factory.mktemp("haru")), "--feature-gates",
                         "GenericWorkload=true,WorkloadAwarePreemption=true")
    try:
        cluster.kubectl("create", "priorityclass", "high", "--value=1000")
        manifest = json.dumps(pod_group("train", priorityClassName="high", disruptionMode="PodGroup"))
        cluster.kubectl("apply", "-f", "-", input=manifest)
        shown = cluster.kubectl("get", "podgroup", "train", "-o",
                                "jsonpath={.spec.priority} {.spec.disruptionMode}").stdout
        assert shown == "1000 PodGroup"
        basic = pod_group("loose", disruptionMode="PodGroup")
        basic["spec"]["schedulingPolicy"] = {"basic": {}}
        refused = cluster.kubectl("apply", "-f", "-", input=json.dumps(basic), check=False)
        assert refused.returncode != 0
        assert 'The PodGroup "loose" is invalid: spec.disruptionMode: Invalid value: "PodGroup"' in refused.stderr
        missing = cluster.kubectl("apply", "-f", "-", check=False,
                                  input=json.dumps(pod_group("orphan", priorityClassName="nope")))
        assert "no PriorityClass with name nope was found" in missing.stderr
        assert cluster.kubectl("get", "podgroup", "loose", check=False).returncode != 0
        # The Python client 36.0.3 reads the resolved fields into its typed model.
        from kubernetes import client, config

        api_client = config.new_client_from_config(config_file=cluster.kubeconfig)
        try:
            read = client.SchedulingV1alpha2Api(api_client).read_namespaced_pod_group("train", "default")
            assert (read.spec.priority, read.spec.priority_class_name, read.spec.disruption_mode) == (
                1000, "high", "PodGroup")
        finally:
            api_client.close()
    finally:
        stop_haru(cluster)


WORKLOADS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/workloads"


def workload(name: str, *templates: Obj) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"podGroupTemplates": list(templates)}}


def template(name: str, **fields: Any) -> Obj:
    return {"name": name, "schedulingPolicy": {"gang": {"minCount": 2}}, **fields}


@pytest.mark.asyncio
async def test_a_workloads_templates_are_resolved_as_pod_groups_are(gated: InProcess) -> None:
    assert (await _create(gated, CLASSES, priority_class("high", 1000)))[0] == 201
    # Without a default class a template without a class keeps no priority.
    status, created = await _create(gated, WORKLOADS, workload("early", template("workers")))
    assert status == 201 and "priority" not in created["spec"]["podGroupTemplates"][0]
    assert (await _create(gated, CLASSES, priority_class("everyone", 7, default=True)))[0] == 201
    status, created = await _create(gated, WORKLOADS, workload(
        "train", template("workers", priorityClassName="high"), template("driver")))
    assert status == 201, created
    resolved = [(t.get("priorityClassName"), t.get("priority")) for t in created["spec"]["podGroupTemplates"]]
    assert resolved == [("high", 1000), ("everyone", 7)]
    status, answer = await _create(gated, WORKLOADS, workload("bad", template("workers", priorityClassName="nope")))
    assert (status, answer["reason"]) == (403, "Forbidden")
    assert answer["message"].endswith("no PriorityClass with name nope was found")
    status, answer = await _create(gated, WORKLOADS, workload("set", template("w", priorityClassName="high",
                                                                              priority=3)))
    assert status == 403 and "must not be provided in pod group template" in answer["message"]
    status, listed, _ = await gated.request("GET", WORKLOADS)
    assert sorted(w["metadata"]["name"] for w in listed["items"]) == ["early", "train"]
