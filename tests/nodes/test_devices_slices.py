"""ResourceSlices of the virtual GPUs: the upstream DeviceClass selectors pick them, MIG counters add up.

The selectors are the unmodified expressions of dra-driver-nvidia-gpu's helm chart
(`templates/deviceclass-gpu.yaml`, `deviceclass-mig.yaml`), evaluated with haru's one CEL
environment against each published device as the scheduler sees it (`device.driver`,
`device.attributes[domain][name]`, `device.capacity[domain][name]`).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from admission import cel
from admission.cel.library import semver
from nodes.devices import config, health, inventory, slices

GPU_CLASS = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
MIG_CLASS = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
MIG_NAME = re.compile(r"^gpu-(\d+)-mig-(.+)-(\d+)-(\d+)$")  # canonicalMigNameRegex in mig.go
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
NVIDIA_UUID = re.compile(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
ENV = cel.Environment({"device": cel.DYN})


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.rpartition("/")
    return (domain, ident) if sep else (driver, name)


def cel_device(driver: str, device: dict[str, Any]) -> dict[str, Any]:
    """The `device` variable: attributes and capacity by domain, unqualified names in the driver's."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, value in device.get("attributes", {}).items():
        domain, ident = _split(name, driver)
        (kind, raw), = value.items()
        attrs.setdefault(domain, {})[ident] = semver.parse(raw) if kind == "version" else raw
    caps: dict[str, dict[str, Any]] = {}
    for name, value in device.get("capacity", {}).items():
        domain, ident = _split(name, driver)
        caps.setdefault(domain, {})[ident] = cel.quantity(value["value"])
    return {"driver": driver, "attributes": attrs, "capacity": caps,
            "allowMultipleAllocations": bool(device.get("allowMultipleAllocations"))}


def all_devices(bodies: dict[str, list[dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    return [(driver, d) for driver, items in bodies.items() for b in items for d in b.get("devices", [])]


def build(node: str, raw: dict[str, Any], faults: dict[str, health.Fault] | None = None) -> dict[str, list[dict[str, Any]]]:
    node_health = health.NodeHealth()
    node_health.replace(faults or {}, at="2026-12-01T00:00:00Z")
    return slices.desired(inventory.build(node, config.parse(raw)), node_health)


@pytest.mark.parametrize("model", ["h100", "h200", "a100", "l40s"])
def test_the_upstream_gpu_device_class_selects_every_full_gpu_of_every_model(model: str) -> None:
    bodies = build("gpu-node-0", {"gpus": 8, "model": model})
    devices = all_devices(bodies)
    assert [d["name"] for _, d in devices] == [f"gpu-{i}" for i in range(8)]
    for driver, device in devices:
        assert ENV.compile(GPU_CLASS).evaluate({"device": cel_device(driver, device)}) is True
        assert ENV.compile(MIG_CLASS).evaluate({"device": cel_device(driver, device)}) is False


def test_a_full_gpu_carries_the_attributes_the_nvidia_plugin_publishes() -> None:
    (_, gpu), *_ = all_devices(build("gpu-node-0", {"gpus": 8, "model": "a100"}))
    attrs = gpu["attributes"]
    assert attrs["type"] == {"string": "gpu"}
    assert NVIDIA_UUID.match(attrs["uuid"]["string"])
    assert attrs["productName"] == {"string": "NVIDIA A100-SXM4-80GB"}
    assert attrs["brand"] == {"string": "Nvidia"} and attrs["architecture"] == {"string": "Ampere"}
    assert attrs["cudaComputeCapability"] == {"version": "8.0.0"}
    assert attrs["driverVersion"] == {"version": "575.57.8"} and attrs["cudaDriverVersion"] == {"version": "12.9.0"}
    assert attrs["pcieBusID"] == attrs["resource.kubernetes.io/pciBusID"] == {"string": "0000:18:00.0"}
    assert re.match(r"^pci[0-9a-f]{4}:[0-9a-f]{2}$", attrs["resource.kubernetes.io/pcieRoot"]["string"])
    assert attrs["resource.kubernetes.io/numaNode"] == {"int": 0}
    assert gpu["capacity"] == {"memory": {"value": "80Gi"}}  # 81920 MiB, as Go's BinarySI writes it
    assert attrs["gpuModuleID"] == {"int": 1} and attrs["partition8"] == {"int": 0} and attrs["partition1"] == {"int": 7}


def test_selectors_on_versions_capacity_and_topology_work_on_published_values() -> None:
    bodies = build("gpu-node-0", {"gpus": 8, "model": "h100"})
    checks = {
        "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.9.0'))": True,
        # An H100 80GB reports 81559 MiB, a little under 80 GiB.
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0": False,
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('79Gi')) >= 0": True,
        "device.attributes['resource.kubernetes.io'].numaNode in [0, 1]": True,
    }
    for driver, device in all_devices(bodies):
        for text, want in checks.items():
            assert ENV.compile(text).evaluate({"device": cel_device(driver, device)}) is want, text


def test_uuids_are_stable_per_node_and_differ_between_nodes() -> None:
    first = [d["attributes"]["uuid"]["string"] for _, d in all_devices(build("n1", {"gpus": 4}))]
    again = [d["attributes"]["uuid"]["string"] for _, d in all_devices(build("n1", {"gpus": 4}))]
    other = [d["attributes"]["uuid"]["string"] for _, d in all_devices(build("n2", {"gpus": 4}))]
    assert first == again and len(set(first)) == 4 and not set(first) & set(other)


def test_mig_puts_counters_in_their_own_slice_first_then_one_device_slice_per_gpu() -> None:
    bodies = build("gpu-node-0", {"gpus": 2, "model": "h100", "mig": True})["gpu.nvidia.com"]
    assert list(bodies[0]) == ["sharedCounters"] and all(list(b) == ["devices"] for b in bodies[1:])
    assert [s["name"] for s in bodies[0]["sharedCounters"]] == ["gpu-0-counter-set", "gpu-1-counter-set"]
    assert len(bodies) == 3
    names = [d["name"] for d in bodies[1]["devices"]]
    assert names[0] == "gpu-0" and "gpu-0-mig-1g10gb-19-0" in names and "gpu-0-mig-7g80gb-0-0" in names
    assert len(names) == 1 + 7 + 4 + 3 + 2 + 1 + 1  # the full GPU and every placement of every profile
    for name in names[1:]:
        minor, _, profile_id, start = MIG_NAME.match(name).groups()  # type: ignore[union-attr]
        assert minor == "0" and DNS_LABEL.match(name) and len(name) <= 63


def test_the_full_gpu_and_its_partitions_consume_one_counter_set_and_the_sums_fit() -> None:
    bodies = build("gpu-node-0", {"gpus": 1, "model": "h100", "mig": True})["gpu.nvidia.com"]
    counters = {k: v["value"] for k, v in bodies[0]["sharedCounters"][0]["counters"].items()}
    devices = {d["name"]: d for d in bodies[1]["devices"]}

    def consumed(names: list[str]) -> dict[str, int]:
        total: dict[str, int] = {}
        for name in names:
            (use,) = devices[name]["consumesCounters"]
            assert use["counterSet"] == "gpu-0-counter-set"
            for key, value in use["counters"].items():
                assert key in counters, key
                total[key] = total.get(key, 0) + slices._parse_binary(value["value"])
        return total

    def fits(names: list[str]) -> bool:
        return all(v <= slices._parse_binary(counters[k]) for k, v in consumed(names).items())

    sevens = [f"gpu-0-mig-1g10gb-19-{i}" for i in range(7)]
    assert fits(sevens) and fits(["gpu-0-mig-3g40gb-9-0", "gpu-0-mig-3g40gb-9-4"]) and fits(["gpu-0"])
    assert not fits(["gpu-0", "gpu-0-mig-1g10gb-19-6"])  # the smallest partition blocks the full GPU
    assert not fits(["gpu-0-mig-4g40gb-5-0", "gpu-0-mig-2g20gb-14-2"])  # overlapping memory slices
    mig = devices["gpu-0-mig-1g10gb-19-0"]
    assert mig["attributes"]["type"] == {"string": "mig"} and mig["attributes"]["profile"] == {"string": "1g.10gb"}
    assert mig["attributes"]["parentUUID"] == devices["gpu-0"]["attributes"]["uuid"]
    assert set(mig["capacity"]) == {"multiprocessors", "copyEngines", "decoders", "encoders", "jpegEngines",
                                    "ofaEngines", "memory"}
    assert ENV.compile(MIG_CLASS).evaluate({"device": cel_device("gpu.nvidia.com", mig)}) is True
    assert ENV.compile(GPU_CLASS).evaluate({"device": cel_device("gpu.nvidia.com", mig)}) is False


def test_slices_respect_the_api_limits_on_devices_and_counter_sets() -> None:
    bodies = build("big", {"gpus": 16, "model": "h100", "mig": True})["gpu.nvidia.com"]
    counter_slices = [b for b in bodies if "sharedCounters" in b]
    assert [len(b["sharedCounters"]) for b in counter_slices] == [8, 8]
    for body in bodies:
        assert len(body.get("devices", [])) <= 64
        for device in body.get("devices", []):
            assert len(device["attributes"]) + len(device.get("capacity", {})) <= 32


def test_an_unhealthy_gpu_is_tainted_with_the_drivers_keys_and_takes_its_partitions_along() -> None:
    faults = {"gpu-0": health.Fault(), "gpu-1": health.Fault(effect="NoExecute", xid=79)}
    bodies = build("n", {"gpus": 2, "model": "h100", "mig": {"gpus": [0], "profiles": ["7g.80gb"]}}, faults)
    devices = {d["name"]: d for _, d in all_devices(bodies)}
    assert devices["gpu-0"]["taints"] == [{"key": "gpu.nvidia.com/gpu-lost", "effect": "NoSchedule",
                                           "timeAdded": "2026-12-01T00:00:00Z"}]
    assert devices["gpu-0-mig-7g80gb-0-0"]["taints"] == devices["gpu-0"]["taints"]
    assert devices["gpu-1"]["taints"] == [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute",
                                           "timeAdded": "2026-12-01T00:00:00Z"}]


def test_a_shared_gpu_allows_many_allocations_with_a_memory_request_policy() -> None:
    bodies = build("n", {"gpus": 2, "sharedGpu": {"gpus": [1], "mode": 4}})
    devices = {d["name"]: d for _, d in all_devices(bodies)}
    assert "allowMultipleAllocations" not in devices["gpu-0"]
    shared = devices["gpu-1"]
    assert shared["allowMultipleAllocations"] is True
    assert shared["capacity"]["memory"]["requestPolicy"] == {
        "default": "0", "validRange": {"min": "0", "max": "81559Mi", "step": "1Mi"}}
    assert shared["capacity"]["shares"]["value"] == "4"
    assert ENV.compile("device.allowMultipleAllocations").evaluate({"device": cel_device("gpu.nvidia.com", shared)})


def test_nics_bind_late_in_their_own_drivers_pool() -> None:
    bodies = build("n", {"gpus": 0, "network": 2})
    assert list(bodies) == ["nic.haru.dev"]
    nic = bodies["nic.haru.dev"][0]["devices"][0]
    assert nic["bindsToNode"] is True
    assert nic["bindingConditions"] == ["nic.haru.dev/attached"]
    assert nic["bindingFailureConditions"] == ["nic.haru.dev/attach-failed"]
    assert ENV.compile(GPU_CLASS).evaluate({"device": cel_device("nic.haru.dev", nic)}) is False


def test_quantities_are_written_as_go_writes_binary_si() -> None:
    assert [slices.quantity(n) for n in (0, 1, 132, 1024, 9984 << 20, 81559 << 20, 80 << 30, 1000)] == [
        "0", "1", "132", "1Ki", "9984Mi", "81559Mi", "80Gi", "1000"]
