"""Publishing a node's slices against a real `haru up`, checked with kubectl v1.36.3.

The publisher names, owns and versions slices as the kubelet plugin's resourceslice controller
does; a restart writes nothing; `haru fault`'s function marks a device through the Node and the
running publisher taints it. The unmodified `gpu.nvidia.com` DeviceClass from NVIDIA's chart is
applied with kubectl and its selector evaluated on what `kubectl get resourceslices` returns.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from admission import cel
from client import kubeconfig
from client.rest import RestClient
from nodes.devices import config, fault, health, inventory, publisher
from tests.conftest import Cluster
from tests.nodes.test_devices_slices import cel_device
from tests.nodes.polling import until

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]
NODE = "devtest-gpu-0"
SLICE_NAME = re.compile(r"^0000[0-9a-f]-gpu\.nvidia\.com-devtest-gpu-0-[a-z0-9]{5}$")
# deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml, rendered for resource.k8s.io/v1.
DEVICE_CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
  extendedResourceName: nvidia.com/gpu
"""


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def rest(haru: Cluster) -> AsyncIterator[RestClient]:
    client = RestClient(kubeconfig.load(haru.kubeconfig))
    await client.create(publisher.NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
    try:
        yield client
    finally:
        await client.close()


async def slices_of(rest: RestClient) -> list[dict[str, Any]]:
    listed = await rest.list(publisher.RESOURCE_SLICES, field_selector=f"spec.nodeName={NODE}")
    return sorted(listed["items"], key=lambda s: s["metadata"]["name"])


async def pass_once(rest: RestClient, raw: dict[str, Any], node_health: health.NodeHealth | None = None) -> int:
    node = await rest.get(publisher.NODES, NODE)
    return await publisher.reconcile(rest, node, inventory.build(NODE, config.parse(raw)),
                                     node_health or health.NodeHealth())


async def test_slices_are_named_owned_and_versioned_as_the_plugin_does(rest: RestClient) -> None:
    node = await rest.get(publisher.NODES, NODE)
    assert await pass_once(rest, {"gpus": 8}) == 1
    (only,) = await slices_of(rest)
    assert SLICE_NAME.match(only["metadata"]["name"])
    assert only["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": NODE,
                                                    "uid": node["metadata"]["uid"], "controller": True}]
    assert only["spec"]["driver"] == "gpu.nvidia.com" and only["spec"]["nodeName"] == NODE
    assert only["spec"]["pool"] == {"name": NODE, "generation": 1, "resourceSliceCount": 1}
    assert [d["name"] for d in only["spec"]["devices"]] == [f"gpu-{i}" for i in range(8)]
    # Nothing changed: nothing is written.
    assert await pass_once(rest, {"gpus": 8}) == 0


async def test_a_changed_layout_bumps_the_generation_and_removes_stale_slices(rest: RestClient) -> None:
    writes = await pass_once(rest, {"gpus": 8, "mig": {"gpus": [0, 1]}})
    mig = await slices_of(rest)
    assert len(mig) == 9 and writes == 9  # one updated in place, eight created
    assert {s["spec"]["pool"]["generation"] for s in mig} == {2}
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in mig} == {9}
    assert "sharedCounters" in mig[0]["spec"] and "devices" not in mig[0]["spec"]
    assert await pass_once(rest, {"gpus": 8, "mig": {"gpus": [0, 1]}}) == 0
    # Eight deleted and one rewritten in place: a single update keeps the generation (upstream's rule).
    assert await pass_once(rest, {"gpus": 4}) == 9
    (back,) = await slices_of(rest)
    assert back["spec"]["pool"] == {"name": NODE, "generation": 2, "resourceSliceCount": 1}
    assert len(back["spec"]["devices"]) == 4


async def test_a_taint_on_one_slice_keeps_the_generation(rest: RestClient) -> None:
    node_health = health.NodeHealth()
    node_health.replace({"gpu-1": health.Fault()})
    assert await pass_once(rest, {"gpus": 4}, node_health) == 1
    (tainted,) = await slices_of(rest)
    assert tainted["spec"]["pool"]["generation"] == 2
    gpu1 = tainted["spec"]["devices"][1]
    assert gpu1["taints"][0]["key"] == "gpu.nvidia.com/gpu-lost" and gpu1["taints"][0]["timeAdded"]
    # The same fault seen by a restarted process (a fresh time) keeps the stored timeAdded: no write.
    again = health.NodeHealth()
    again.replace({"gpu-1": health.Fault()}, at="2030-01-01T00:00:00Z")
    assert await pass_once(rest, {"gpus": 4}, again) == 0
    assert await pass_once(rest, {"gpus": 4}) == 1


async def test_haru_fault_marks_a_device_through_the_node_and_publish_taints_it(rest: RestClient) -> None:
    registry = health.HealthRegistry()
    node = await rest.get(publisher.NODES, NODE)
    task = asyncio.create_task(publisher.publish(rest, node, config.parse({"gpus": 4}), registry=registry))
    try:
        line = await fault.set_device_health(rest, f"{NODE}/gpu-3", "unhealthy", effect="NoExecute")
        assert line == f"node/{NODE} gpu-3: Unhealthy (taint gpu.nvidia.com/gpu-lost:NoExecute)"
        annotated = await rest.get(publisher.NODES, NODE)
        assert json.loads(annotated["metadata"]["annotations"][health.ANNOTATION]) == {
            "gpu-3": {"effect": "NoExecute", "health": "Unhealthy"}}

        async def gpu3_taints() -> list[dict[str, Any]]:
            (s,) = await slices_of(rest)
            return s["spec"]["devices"][3].get("taints") or []
        taints = await until(gpu3_taints)
        assert [(t["key"], t["effect"]) for t in taints] == [("gpu.nvidia.com/gpu-lost", "NoExecute")]
        assert registry.node(NODE).fault_for("gpu-3") == health.Fault(effect="NoExecute")

        assert await fault.set_device_health(rest, f"{NODE}/gpu-3", "healthy") == f"node/{NODE} gpu-3: Healthy (taint removed)"

        async def healed() -> bool:
            return not await gpu3_taints()
        assert await until(healed)
        assert health.ANNOTATION not in ((await rest.get(publisher.NODES, NODE))["metadata"].get("annotations") or {})
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    # Restarted with the same devices, the publisher writes nothing.
    before = [s["metadata"]["resourceVersion"] for s in await slices_of(rest)]
    assert await pass_once(rest, {"gpus": 4}) == 0
    assert [s["metadata"]["resourceVersion"] for s in await slices_of(rest)] == before


@pytest.mark.parametrize(("target", "state", "message"), [
    (f"{NODE}/gpu-9", "unhealthy", f'node "{NODE}" publishes no device "gpu-9" (devices: gpu-0, gpu-1, gpu-2, gpu-3)'),
    ("no-such-node/gpu-0", "unhealthy", 'node "no-such-node" not found'),
    ("gpu-3", "unhealthy", "expected NODE/DEVICE such as gpu-node-0/gpu-3, got 'gpu-3'"),
    (f"{NODE}/gpu-0", "broken", "state must be one of unhealthy, healthy, unknown, got 'broken'"),
])
async def test_haru_fault_refuses_what_it_cannot_mark(rest: RestClient, target: str, state: str, message: str) -> None:
    with pytest.raises(fault.FaultCommandError) as caught:
        await fault.set_device_health(rest, target, state)
    assert str(caught.value) == message


async def test_kubectl_shows_the_slices_and_the_upstream_device_class_selects_every_gpu(
        rest: RestClient, haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=DEVICE_CLASS)
    table = haru.kubectl("get", "resourceslices").stdout.splitlines()
    assert table[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    row = next(line.split() for line in table[1:] if NODE in line)
    assert SLICE_NAME.match(row[0]) and row[1:4] == [NODE, "gpu.nvidia.com", NODE]
    klass = json.loads(haru.kubectl("get", "deviceclass", "gpu.nvidia.com", "-o", "json").stdout)
    (selector,) = klass["spec"]["selectors"]
    program = cel.Environment({"device": cel.DYN}).compile(selector["cel"]["expression"])
    listed = json.loads(haru.kubectl("get", "resourceslices", f"--field-selector=spec.nodeName={NODE}",
                                     "-o", "json").stdout)
    devices = [(s["spec"]["driver"], d) for s in listed["items"] for d in s["spec"].get("devices", [])]
    assert len(devices) == 4
    assert all(program.evaluate({"device": cel_device(driver, d)}) is True for driver, d in devices)


async def test_the_python_client_reads_every_device_kind_into_its_models(rest: RestClient, haru: Cluster) -> None:
    """kubernetes 36.0.3 deserializes MIG counters, a shared GPU's request policy and a late-binding NIC."""
    from kubernetes import client
    from kubernetes import config as kconfig

    raw = {"gpus": 2, "mig": {"gpus": [0], "profiles": ["1g.10gb", "7g.80gb"]}, "sharedGpu": {"gpus": [1]},
           "network": 1}
    await pass_once(rest, raw)
    api = client.ResourceV1Api(kconfig.new_client_from_config(config_file=haru.kubeconfig))
    items = await asyncio.to_thread(lambda: api.list_resource_slice(field_selector=f"spec.nodeName={NODE}").items)
    by_driver: dict[str, list[Any]] = {}
    for item in items:
        by_driver.setdefault(item.spec.driver, []).append(item)
    gpu_slices = sorted(by_driver["gpu.nvidia.com"], key=lambda s: s.metadata.name)
    (counter_set,) = gpu_slices[0].spec.shared_counters
    assert counter_set.name == "gpu-0-counter-set" and counter_set.counters["memory-slice-7"].value == "1"
    devices = {d.name: d for s in gpu_slices[1:] for d in s.spec.devices}
    assert devices["gpu-0-mig-1g10gb-19-6"].consumes_counters[0].counter_set == "gpu-0-counter-set"
    assert devices["gpu-0-mig-1g10gb-19-6"].attributes["profile"].string == "1g.10gb"
    assert devices["gpu-0"].attributes["cudaComputeCapability"].version == "9.0.0"
    shared = devices["gpu-1"]
    assert shared.allow_multiple_allocations is True
    assert shared.capacity["memory"].request_policy.valid_range.step == "1Mi"
    (nic_slice,) = by_driver["nic.haru.dev"]
    (nic,) = nic_slice.spec.devices
    assert nic.binds_to_node is True and nic.binding_conditions == ["nic.haru.dev/attached"]
    assert nic.binding_failure_conditions == ["nic.haru.dev/attach-failed"]
    # Back to four plain GPUs: the NIC pool goes away entirely.
    await pass_once(rest, {"gpus": 4})
    assert {s["spec"]["driver"] for s in await slices_of(rest)} == {"gpu.nvidia.com"}


async def test_the_fault_command_runs_as_a_process(haru: Cluster) -> None:
    def fault_cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "nodes.devices.fault", "--kubeconfig", haru.kubeconfig, *args],
                              capture_output=True, text=True, timeout=60)

    done = fault_cli("gpu", f"{NODE}/gpu-2", "unhealthy", "--xid", "79")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"node/{NODE} gpu-2: Unhealthy (taint gpu.nvidia.com/xid=79:NoSchedule)\n", "")
    node = json.loads(haru.kubectl("get", "node", NODE, "-o", "json").stdout)
    assert json.loads(node["metadata"]["annotations"][health.ANNOTATION]) == {
        "gpu-2": {"effect": "NoSchedule", "health": "Unhealthy", "xid": 79}}
    missing = fault_cli("gpu", f"{NODE}/gpu-7", "unhealthy")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr == f'error: node "{NODE}" publishes no device "gpu-7" (devices: gpu-0, gpu-1, gpu-2, gpu-3)\n'
    healed = fault_cli("gpu", f"{NODE}/gpu-2", "healthy")
    assert healed.returncode == 0 and healed.stdout == f"node/{NODE} gpu-2: Healthy (taint removed)\n"
