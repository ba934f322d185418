"""A node's driver as the kubelet starts it, against a real `haru up`: slices, NIC attach, container view."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

import nodes.devices
from client import kubeconfig
from client.rest import RestClient
from nodes.devices import driver, publisher
from tests.conftest import Cluster
from tests.nodes.polling import until

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]
NODE = "devtest-nic-0"
DEVICES = {"gpus": 2, "model": "h100", "network": 1}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def rest(haru: Cluster) -> AsyncIterator[RestClient]:
    client = RestClient(kubeconfig.load(haru.kubeconfig))
    await client.create(publisher.NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
    try:
        yield client
    finally:
        await client.close()


async def test_a_node_without_devices_gets_no_driver(rest: RestClient) -> None:
    node = await rest.get(publisher.NODES, NODE)
    assert await nodes.devices.publish(client=rest, node=node, devices={}) is None
    assert await nodes.devices.publish(client=rest, node=node, devices={"gpus": 0}) is None


async def test_the_driver_publishes_attaches_nics_and_answers_the_kubelet(rest: RestClient) -> None:
    node = await rest.get(publisher.NODES, NODE)
    running = await nodes.devices.publish(client=rest, node=node, devices=DEVICES)
    assert isinstance(running, driver.Driver)
    try:
        async def both_pools() -> bool:
            listed = await rest.list(publisher.RESOURCE_SLICES, field_selector=f"spec.nodeName={NODE}")
            return {s["spec"]["driver"] for s in listed["items"]} == {"gpu.nvidia.com", "nic.haru.dev"}
        assert await until(both_pools)

        # A claim allocated by hand to the NIC: the driver reports the attach in status.devices.
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "net"},
                "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "nic.haru.dev"}}]}}}
        made = await rest.create(driver.RESOURCE_CLAIMS, body, "default")
        made["status"] = {"allocation": {"devices": {"results": [
            {"request": "nic", "driver": "nic.haru.dev", "pool": NODE, "device": "nic-0",
             "bindingConditions": ["nic.haru.dev/attached"],
             "bindingFailureConditions": ["nic.haru.dev/attach-failed"]}]}}}
        await rest.update(driver.RESOURCE_CLAIMS, made, "default", subresource="status")

        async def reported() -> list[dict[str, Any]]:
            got = await rest.get(driver.RESOURCE_CLAIMS, "net", "default")
            return (got.get("status") or {}).get("devices") or []
        (entry,) = await until(reported)
        assert (entry["driver"], entry["pool"], entry["device"]) == ("nic.haru.dev", NODE, "nic-0")
        assert {c["type"]: c["status"] for c in entry["conditions"]} == {"nic.haru.dev/attached": "True",
                                                                         "nic.haru.dev/attach-failed": "False"}
        assert entry["networkData"]["interfaceName"] == "net1"

        # The kubelet's questions, with claims keyed by the pod's claim names.
        gpu_claim = {"metadata": {"name": "trainer-gpu-abcde"}, "status": {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-1"}]}}}}
        pod = {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}]},
               "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "trainer-gpu-abcde"}]}}
        cont = {"name": "main", "resources": {"claims": [{"name": "gpu"}]}}
        claims = {"gpu": gpu_claim}
        uuid = running.inventory.gpus[1].uuid
        assert running.container_env(pod, cont, claims) == {"NVIDIA_VISIBLE_DEVICES": uuid, "CUDA_VISIBLE_DEVICES": "0"}
        lines, dev = running.shell_devices(pod, cont, claims)
        assert lines == [f"GPU 0: NVIDIA H100 80GB HBM3 (UUID: {uuid})"] and dev[0] == "nvidia1"
        assert running.allocated_resources_status(pod, cont, claims) == [
            {"name": "claim:gpu", "resources": [{"resourceID": f"gpu.nvidia.com/{NODE}/gpu-1", "health": "Healthy"}]}]
        assert running.allocated_resources_status(pod, {"name": "other"}, claims) is None
    finally:
        await running.stop()
    assert not running._tasks



async def test_a_nic_with_an_attach_delay_reports_the_attach_later(rest: RestClient) -> None:
    await rest.create(publisher.NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE + "-slow"}})
    node = await rest.get(publisher.NODES, NODE + "-slow")
    running = await nodes.devices.publish(client=rest, node=node, devices={"network": {"count": 1, "attachDelaySeconds": 1}})
    assert isinstance(running, driver.Driver)
    try:
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "slow-net"},
                "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "nic.haru.dev"}}]}}}
        made = await rest.create(driver.RESOURCE_CLAIMS, body, "default")
        made["status"] = {"allocation": {"devices": {"results": [
            {"request": "nic", "driver": "nic.haru.dev", "pool": NODE + "-slow", "device": "nic-0",
             "bindingConditions": ["nic.haru.dev/attached"],
             "bindingFailureConditions": ["nic.haru.dev/attach-failed"]}]}}}
        await rest.update(driver.RESOURCE_CLAIMS, made, "default", subresource="status")

        async def reported() -> list[dict[str, Any]]:
            got = await rest.get(driver.RESOURCE_CLAIMS, "slow-net", "default")
            return (got.get("status") or {}).get("devices") or []
        (entry,) = await until(reported)
        assert {c["type"]: c["status"] for c in entry["conditions"]}["nic.haru.dev/attached"] == "True"

        async def let_go() -> bool:
            return not running._delayed
        assert await until(let_go)  # the delayed attach ran and was let go
    finally:
        await running.stop()
