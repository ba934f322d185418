"""What a pod's containers see of their claims: env, `nvidia-smi -L`, `/dev`, device health, NIC attach."""

from __future__ import annotations

import re
from typing import Any

from nodes.devices import binding, claims, config, container, health, inventory

NODE = "gpu-node-0"
INV = inventory.build(NODE, config.parse({"gpus": 4, "model": "h100", "mig": {"gpus": [3]}, "network": 1}))
SMI_GPU = re.compile(r"^GPU \d+: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\)$")
SMI_MIG = re.compile(r"^  MIG \S+ +Device +\d+: \(UUID: MIG-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\)$")


def result(device: str, request: str = "gpus", driver: str = "gpu.nvidia.com", pool: str = NODE) -> dict[str, Any]:
    return {"request": request, "driver": driver, "pool": pool, "device": device}


def claim(name: str, *results: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": "0b6f0c2e-5d43-4f8e-9b7a-2f3c1d0e9a8b", "generation": 1},
            "status": {"allocation": {"devices": {"results": list(results)}}}}


def test_env_lists_the_uuids_and_cuda_ordinals_of_exactly_the_allocated_gpus() -> None:
    env = container.container_env([result("gpu-2"), result("gpu-0")], INV)
    assert env == {"NVIDIA_VISIBLE_DEVICES": f"{INV.gpus[0].uuid},{INV.gpus[2].uuid}", "CUDA_VISIBLE_DEVICES": "0,1"}
    assert container.container_env([], INV) == {}
    # What the DRA plugin's CDI spec itself sets: the devices come as device nodes instead.
    assert container.container_env([result("gpu-0")], INV, cdi=True) == {"NVIDIA_VISIBLE_DEVICES": "void"}
    # Another node's pool and another driver's devices are not this node's GPUs.
    assert container.container_env([result("gpu-1", pool="gpu-node-1"), result("nic-0", driver="nic.haru.dev")],
                                   INV) == {}


def test_nvidia_smi_lists_the_gpus_in_bus_order_and_mig_devices_under_their_parent() -> None:
    lines = container.nvidia_smi_lines([result("gpu-3-mig-1g10gb-19-2"), result("gpu-1"),
                                        result("gpu-3-mig-3g40gb-9-4")], INV)
    assert len(lines) == 4
    assert lines[0] == f"GPU 0: NVIDIA H100 80GB HBM3 (UUID: {INV.gpus[1].uuid})"
    assert lines[1].startswith("GPU 1: ") and INV.gpus[3].uuid in lines[1]
    assert lines[2].startswith("  MIG 1g.10gb     Device  0: (UUID: MIG-")
    assert lines[3].startswith("  MIG 3g.40gb     Device  1: (UUID: MIG-")
    assert all(SMI_GPU.match(line) for line in lines[:2]) and all(SMI_MIG.match(line) for line in lines[2:])
    env = container.container_env([result("gpu-3-mig-1g10gb-19-2"), result("gpu-1")], INV)
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1" and env["NVIDIA_VISIBLE_DEVICES"].split(",")[1].startswith("MIG-")


def test_dev_entries_name_the_host_minors_of_the_visible_gpus() -> None:
    shown = container.visible([result("gpu-2"), result("gpu-3-mig-7g80gb-0-0")], INV)
    assert container.dev_entries(shown) == ["nvidia2", "nvidia3", "nvidia-uvm", "nvidia-uvm-tools", "nvidiactl",
                                            "nvidia-caps"]


POD = {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                                   {"name": "shared", "resourceClaimName": "team-gpus"}]},
       "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "trainer-gpu-x7k2p"}]}}
CLAIMS = {"trainer-gpu-x7k2p": claim("trainer-gpu-x7k2p", result("gpu-1"), result("gpu-2", request="spare")),
          "team-gpus": claim("team-gpus", result("gpu-0", request="big/h100"))}


def test_a_container_holds_the_results_of_its_claim_entries_and_requests() -> None:
    cont = {"resources": {"claims": [{"name": "gpu", "request": "gpus"}, {"name": "shared", "request": "big"}]}}
    held = claims.container_results(cont, POD, CLAIMS)
    assert [(h.status_name, h.result["device"]) for h in held] == [("claim:gpu/gpus", "gpu-1"),
                                                                  ("claim:shared/big", "gpu-0")]
    everything = claims.container_results({"resources": {"claims": [{"name": "gpu"}]}}, POD, CLAIMS)
    assert [h.result["device"] for h in everything] == ["gpu-1", "gpu-2"]


def test_extended_resources_served_through_dra_reach_the_container_their_mapping_names() -> None:
    special = claim("p-extended-resources-x7k2q", result("gpu-3", "container-1-request-0"),
                    result("gpu-0", "container-0-request-1"))
    pod = {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}, "status": {"extendedResourceClaimStatus": {
        "resourceClaimName": "p-extended-resources-x7k2q", "requestMappings": [
            {"containerName": "a", "resourceName": "nvidia.com/gpu", "requestName": "container-0-request-1"},
            {"containerName": "b", "resourceName": "nvidia.com/gpu", "requestName": "container-1-request-0"}]}}}
    known = {"p-extended-resources-x7k2q": special}
    assert [h.result["device"] for h in claims.container_results({"name": "a"}, pod, known)] == ["gpu-0"]
    assert [h.result["device"] for h in claims.container_results({"name": "b"}, pod, known)] == ["gpu-3"]
    assert claims.container_results({"name": "a"}, pod, {}) == []


def test_allocated_resources_status_reports_unhealthy_devices_with_a_message() -> None:
    node = health.NodeHealth()
    node.replace({"gpu-2": health.Fault(xid=79)})
    cont = {"resources": {"claims": [{"name": "gpu"}]}}
    status = health.allocated_resources_status(cont, POD, CLAIMS, node, container.uuids(INV))
    assert status == [{"name": "claim:gpu", "resources": [
        {"resourceID": f"gpu.nvidia.com/{NODE}/gpu-1", "health": "Healthy"},
        {"resourceID": f"gpu.nvidia.com/{NODE}/gpu-2", "health": "Unhealthy",
         "message": f"gpu-2 ({INV.gpus[2].uuid}): XID 79 (GPU has fallen off the bus)"}]}]
    node.replace({})
    healed = health.allocated_resources_status(cont, POD, CLAIMS, node)
    assert [r["health"] for r in healed[0]["resources"]] == ["Healthy", "Healthy"]


def test_the_health_annotation_is_parsed_strictly() -> None:
    faults = health.parse_annotation('{"gpu-1":"Unhealthy","gpu-2":{"health":"Unhealthy","effect":"NoExecute"},'
                                     '"gpu-3":"Healthy"}')
    assert faults == {"gpu-1": health.Fault(), "gpu-2": health.Fault(effect="NoExecute")}
    for bad, message in [("[1]", "must be a JSON object"), ('{"gpu-1":"Sick"}', "health must be one of"),
                         ('{"gpu-1":{"effect":"Evict"}}', "effect must be one of"), ("{", "is not JSON")]:
        try:
            health.parse_annotation(bad)
        except health.FaultError as err:
            assert message in str(err)
        else:
            raise AssertionError(f"{bad!r} was accepted")


def test_a_fault_keeps_its_time_until_it_changes() -> None:
    node = health.NodeHealth()
    assert node.replace({"gpu-1": health.Fault()}, at="2026-12-01T10:00:00Z")
    assert not node.replace({"gpu-1": health.Fault()}, at="2026-12-01T11:00:00Z")
    assert node.replace({"gpu-1": health.Fault(), "gpu-2": health.Fault()}, at="2026-12-01T12:00:00Z")
    assert node.since == {"gpu-1": "2026-12-01T10:00:00Z", "gpu-2": "2026-12-01T12:00:00Z"}


def test_the_nic_attach_step_reports_ready_conditions_and_network_data_once() -> None:
    allocated = claim("net", result("nic-0", request="nic", driver="nic.haru.dev"), result("gpu-0"))
    allocated["status"]["devices"] = [{"driver": "other.example.com", "pool": "p", "device": "d",
                                       "conditions": [{"type": "Ready", "status": "True"}]}]
    patch = binding.attach_status(allocated, NODE, at="2026-12-01T10:00:00Z")
    assert patch is not None
    other, mine = patch["status"]["devices"]
    assert other["driver"] == "other.example.com"
    assert (mine["driver"], mine["pool"], mine["device"]) == ("nic.haru.dev", NODE, "nic-0")
    assert [(c["type"], c["status"], c["reason"]) for c in mine["conditions"]] == [
        ("nic.haru.dev/attached", "True", "Attached"), ("nic.haru.dev/attach-failed", "False", "Attached")]
    assert all(c["observedGeneration"] == 1 and c["lastTransitionTime"] == "2026-12-01T10:00:00Z"
               for c in mine["conditions"])
    assert mine["networkData"]["interfaceName"] == "net1"
    assert re.match(r"^10\.\d+\.\d+\.\d+/16$", mine["networkData"]["ips"][0])
    assert re.match(r"^02(:[0-9a-f]{2}){5}$", mine["networkData"]["hardwareAddress"])
    allocated["status"]["devices"] = patch["status"]["devices"]
    assert binding.attach_status(allocated, NODE) is None  # reported already: nothing to write
    assert binding.attach_status(claim("gpus", result("gpu-0")), NODE) is None


def test_a_failing_attach_sets_the_failure_condition() -> None:
    patch = binding.attach_status(claim("net", result("nic-0", driver="nic.haru.dev")), NODE, fail=True)
    assert patch is not None
    (entry,) = patch["status"]["devices"]
    assert {c["type"]: c["status"] for c in entry["conditions"]} == {"nic.haru.dev/attached": "False",
                                                                     "nic.haru.dev/attach-failed": "True"}
    assert "networkData" not in entry


def test_a_nic_fault_taints_with_its_own_drivers_key_and_shows_in_pod_status() -> None:
    node = health.NodeHealth()
    node.replace({"nic-0": health.Fault()}, at="2026-12-01T00:00:00Z")
    assert node.taints_for("nic-0") == [{"key": "nic.haru.dev/link-down", "effect": "NoSchedule",
                                         "timeAdded": "2026-12-01T00:00:00Z"}]
    pod = {"spec": {"resourceClaims": [{"name": "net", "resourceClaimName": "net-1"}]}}
    claims_by_name = {"net-1": claim("net-1", result("nic-0", request="nic", driver="nic.haru.dev"))}
    status = health.allocated_resources_status({"resources": {"claims": [{"name": "net"}]}}, pod, claims_by_name, node)
    assert status == [{"name": "claim:net", "resources": [
        {"resourceID": f"nic.haru.dev/{NODE}/nic-0", "health": "Unhealthy", "message": "nic-0: link is down"}]}]


def test_the_registry_keeps_one_health_per_node() -> None:
    registry = health.HealthRegistry()
    assert registry.node("a") is registry.node("a") and registry.node("a") is not registry.node("b")
    registry.forget("a")
    assert registry.node("a").faults == {}


def test_an_unknown_device_is_marked_unmonitored_without_keeping_pods_off() -> None:
    node = health.NodeHealth()
    node.replace(health.parse_annotation('{"gpu-0": "Unknown"}'), at="2026-12-01T00:00:00Z")
    assert node.taints_for("gpu-0") == [{"key": "gpu.nvidia.com/unmonitored", "effect": "None",
                                         "timeAdded": "2026-12-01T00:00:00Z"}]
