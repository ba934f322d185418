"""The DRA acceptance scenarios of issue 11, end to end: kubectl v1.36.3 against `haru up -f` with a
cluster file of GPU pools, each pod to Running, and `kubectl exec POD -- nvidia-smi -L` showing the
GPUs whose UUIDs the allocated devices publish in their ResourceSlice.

One cluster serves the module, scheduled by the scheduler `haru up` runs, with the ResourceClaim
controller for template claims and for deallocating claims whose pods are gone. The pools are
chosen by nodeSelector, so the module needs the NodeAffinity plugin.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, Cluster, start_haru, stop_haru

pytestmark = pytest.mark.slow
if importlib.util.find_spec("scheduler.plugins.node_affinity") is None:
    # Every pod is pinned to its pool with a nodeSelector, which only NodeAffinity enforces.
    pytest.skip("the NodeAffinity plugin is not in this build", allow_module_level=True)
CLUSTER_FILE = """\
pools:
- {name: h100, count: 3, labels: {pool: h100}, devices: {gpus: 4, model: h100}}  # 12: 1 + 1 + 8 + 1 used
- {name: a100, count: 1, labels: {pool: a100}, devices: {gpus: 2, model: a100}}
- {name: l40s, count: 1, labels: {pool: l40s}, devices: {gpus: 1, model: l40s}}
- {name: shared, count: 1, labels: {pool: shared}, devices: {gpus: 1, model: h100, sharedGpu: true}}
- {name: mig, count: 1, labels: {pool: mig}, devices: {gpus: 1, model: h100, mig: true}}
- {name: taint, count: 1, labels: {pool: taint}, devices: {gpus: 1, model: h100}}
- {name: rule, count: 1, labels: {pool: rule}, devices: {gpus: 1, model: h100}}
- {name: net, count: 1, labels: {pool: net}, devices: {gpus: 1, model: h100, network: {count: 1, attachDelaySeconds: 2}}}
"""
NODES = 10
# NVIDIA's classes (dra-driver-nvidia-gpu deviceclass-*.yaml), and one for haru's late-binding NIC.
CLASSES = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
     "spec": {"selectors": [{"cel": {"expression":
                                     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
              "extendedResourceName": "nvidia.com/gpu"}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "mig.nvidia.com"},
     "spec": {"selectors": [{"cel": {"expression":
                                     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic.haru.dev"},
     "spec": {"selectors": [{"cel": {"expression": "device.driver == 'nic.haru.dev'"}}]}},
]

Obj = dict[str, Any]


@pytest.fixture(scope="module")
def haru(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """`haru up -f` with the GPU pools above and the classes applied."""
    data = tmp_path_factory.mktemp("haru-dra")
    cluster_file = Path(data) / "cluster.yaml"
    cluster_file.write_text(CLUSTER_FILE)
    cluster = start_haru(str(data / "data"), "-f", str(cluster_file))
    try:
        deadline = time.monotonic() + 60
        while len(cluster.kubectl("get", "nodes", "-o", "name").stdout.split()) < NODES:
            assert time.monotonic() < deadline, "the nodes did not register"
            time.sleep(0.2)
        cluster.kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=60s")
        cluster.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": CLASSES}))
        yield cluster
    finally:
        stop_haru(cluster)


# --- objects ----------------------------------------------------------------------------------

def claim(name: str, *requests: Obj) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"devices": {"requests": list(requests)}}}


def exactly(name: str, device_class: str = "gpu.nvidia.com", **fields: Any) -> Obj:
    return {"name": name, "exactly": {"deviceClassName": device_class, **fields}}


def pod(name: str, *, pool: str | None = None, claims: dict[str, str] | None = None,
        templates: dict[str, str] | None = None, limits: Obj | None = None) -> Obj:
    entries = [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    entries += [{"name": k, "resourceClaimTemplateName": v} for k, v in (templates or {}).items()]
    container: Obj = {"name": "main", "image": "cuda", "command": ["sleep", "3600"], "resources": {}}
    if entries:
        container["resources"]["claims"] = [{"name": e["name"]} for e in entries]
    if limits:
        container["resources"]["limits"] = limits
    spec: Obj = {"containers": [container]}
    if entries:
        spec["resourceClaims"] = entries
    if pool:
        spec["nodeSelector"] = {"pool": pool}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def apply(haru: Cluster, *objects: Obj) -> None:
    haru.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))


def get(haru: Cluster, kind: str, name: str) -> Obj:
    return json.loads(haru.kubectl("get", kind, name, "-o", "json").stdout)


def running(haru: Cluster, *names: str) -> None:
    haru.kubectl("wait", *[f"pod/{n}" for n in names], "--for=condition=Ready", "--timeout=60s")


def unschedulable(haru: Cluster, name: str) -> str:
    """The PodScheduled=False message once the scheduler has tried the pod and given up for now."""
    deadline = time.monotonic() + 60
    while True:
        conditions = (get(haru, "pod", name).get("status") or {}).get("conditions") or []
        found = next((c for c in conditions if c["type"] == "PodScheduled"), None)
        if found and found["status"] == "False" and found.get("reason") == "Unschedulable":
            return str(found.get("message", ""))
        assert time.monotonic() < deadline, f"pod {name} was not reported unschedulable: {conditions}"
        time.sleep(0.2)


def smi_uuids(haru: Cluster, name: str) -> list[str]:
    """The UUIDs `nvidia-smi -L` lists in the pod (GPUs, and MIG devices under their GPU)."""
    lines = haru.kubectl("exec", name, "--", "nvidia-smi", "-L").stdout.splitlines()
    return [line.split("(UUID: ")[1].rstrip(")") for line in lines if "(UUID: " in line]


def published_uuid(haru: Cluster, driver: str, pool: str, device: str) -> str:
    listed = json.loads(haru.kubectl("get", "resourceslices", f"--field-selector=spec.nodeName={pool}",
                                     "-o", "json").stdout)
    for s in listed["items"]:
        if s["spec"]["driver"] != driver:
            continue
        for d in s["spec"].get("devices") or []:
            if d["name"] == device:
                return str(d["attributes"]["uuid"]["string"])
    raise AssertionError(f"no device {driver}/{pool}/{device} is published")


def allocated(haru: Cluster, claim_name: str) -> list[Obj]:
    return list(get(haru, "resourceclaim", claim_name)["status"]["allocation"]["devices"]["results"])


def gpu_uuids_of(haru: Cluster, claim_name: str) -> list[str]:
    return [published_uuid(haru, r["driver"], r["pool"], r["device"]) for r in allocated(haru, claim_name)
            if r["driver"] == "gpu.nvidia.com"]


# --- the scenarios ----------------------------------------------------------------------------

def test_a_device_class_a_claim_and_a_pod(haru: Cluster) -> None:
    apply(haru, claim("single-gpu", exactly("gpu")), pod("single", pool="h100", claims={"gpu": "single-gpu"}))
    running(haru, "single")
    stored = get(haru, "resourceclaim", "single-gpu")
    bound = get(haru, "pod", "single")
    assert stored["status"]["reservedFor"] == [{"resource": "pods", "name": "single", "uid": bound["metadata"]["uid"]}]
    assert stored["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    (result,) = stored["status"]["allocation"]["devices"]["results"]
    assert result["pool"] == bound["spec"]["nodeName"]
    assert smi_uuids(haru, "single") == gpu_uuids_of(haru, "single-gpu")


def test_two_pods_naming_one_claim_share_its_devices(haru: Cluster) -> None:
    apply(haru, claim("team-gpu", exactly("gpu")), pod("team-a", pool="h100", claims={"gpu": "team-gpu"}),
          pod("team-b", pool="h100", claims={"gpu": "team-gpu"}))
    running(haru, "team-a", "team-b")
    reserved = get(haru, "resourceclaim", "team-gpu")["status"]["reservedFor"]
    assert sorted(r["name"] for r in reserved) == ["team-a", "team-b"]
    assert get(haru, "pod", "team-a")["spec"]["nodeName"] == get(haru, "pod", "team-b")["spec"]["nodeName"]
    assert smi_uuids(haru, "team-a") == smi_uuids(haru, "team-b") == gpu_uuids_of(haru, "team-gpu")


def test_a_claim_template_for_eight_pods_gives_each_its_own_gpu(haru: Cluster) -> None:
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [exactly("gpu")]}}}}
    names = [f"worker-{i}" for i in range(8)]
    apply(haru, template, *[pod(n, pool="h100", templates={"gpu": "one-gpu"}) for n in names])
    running(haru, *names)
    seen = []
    for name in names:
        (entry,) = get(haru, "pod", name)["status"]["resourceClaimStatuses"]
        assert entry["name"] == "gpu" and entry["resourceClaimName"].startswith(f"{name}-gpu-")
        uuids = smi_uuids(haru, name)
        assert uuids == gpu_uuids_of(haru, entry["resourceClaimName"]) and len(uuids) == 1
        seen += uuids
    assert len(set(seen)) == 8


def test_a_prioritized_list_takes_h100_then_a100_then_any(haru: Cluster) -> None:
    def pick(name: str) -> Obj:
        return claim(name, {"name": "gpu", "firstAvailable": [
            {"name": "h100", "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression":
             "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"}}]},
            {"name": "a100", "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression":
             "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA A100')"}}]},
            {"name": "any", "deviceClassName": "gpu.nvidia.com"}]})
    apply(haru, pick("pick-h100"), pod("pick-h100", pool="h100", claims={"gpu": "pick-h100"}),
          pick("pick-a100"), pod("pick-a100", pool="a100", claims={"gpu": "pick-a100"}),
          pick("pick-any"), pod("pick-any", pool="l40s", claims={"gpu": "pick-any"}))
    running(haru, "pick-h100", "pick-a100", "pick-any")
    for name, request, product in (("pick-h100", "gpu/h100", "NVIDIA H100 80GB HBM3"),
                                   ("pick-a100", "gpu/a100", "NVIDIA A100-SXM4-80GB"),
                                   ("pick-any", "gpu/any", "NVIDIA L40S")):
        (result,) = allocated(haru, name)
        assert result["request"] == request
        assert smi_uuids(haru, name) == gpu_uuids_of(haru, name)
        assert haru.kubectl("exec", name, "--", "nvidia-smi", "-L").stdout.startswith(f"GPU 0: {product} (UUID: ")


def test_two_pods_share_one_gpu_by_memory_and_a_third_does_not_fit(haru: Cluster) -> None:
    def share(name: str) -> Obj:
        return claim(name, exactly("gpu", capacity={"requests": {"memory": "30Gi"}}))
    apply(haru, share("share-a"), pod("share-a", pool="shared", claims={"gpu": "share-a"}),
          share("share-b"), pod("share-b", pool="shared", claims={"gpu": "share-b"}))
    running(haru, "share-a", "share-b")
    (a,), (b,) = allocated(haru, "share-a"), allocated(haru, "share-b")
    assert a["device"] == b["device"] and a["shareID"] != b["shareID"]
    assert a["consumedCapacity"] == b["consumedCapacity"] == {"memory": "30Gi"}
    assert smi_uuids(haru, "share-a") == smi_uuids(haru, "share-b") == gpu_uuids_of(haru, "share-a")

    apply(haru, share("share-c"), pod("share-c", pool="shared", claims={"gpu": "share-c"}))
    message = unschedulable(haru, "share-c")  # an H100 has 79.6Gi, two shares hold 60Gi
    assert message.startswith(f"0/{NODES} nodes are available: 1 cannot allocate all claims, ")


def test_a_mig_partition_and_the_full_gpu_compete_for_one_gpu(haru: Cluster) -> None:
    apply(haru, claim("slice-3g", exactly("mig", "mig.nvidia.com", selectors=[
              {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}}])),
          pod("mig-user", pool="mig", claims={"mig": "slice-3g"}))
    running(haru, "mig-user")
    (part,) = allocated(haru, "slice-3g")
    assert part["device"].startswith("gpu-0-mig-3g40gb-")
    listed = haru.kubectl("exec", "mig-user", "--", "nvidia-smi", "-L").stdout.splitlines()
    assert listed[0].startswith("GPU 0: NVIDIA H100 80GB HBM3 (UUID: ") and listed[1].startswith("  MIG 3g.40gb ")

    apply(haru, claim("whole", exactly("gpu")), pod("whole-user", pool="mig", claims={"gpu": "whole"}))
    assert "1 cannot allocate all claims" in unschedulable(haru, "whole-user")
    haru.kubectl("delete", "pod", "mig-user", "--wait=true", "--timeout=60s")
    haru.kubectl("delete", "resourceclaim", "slice-3g", "--wait=true", "--timeout=60s")
    running(haru, "whole-user")
    assert smi_uuids(haru, "whole-user") == gpu_uuids_of(haru, "whole")


def test_a_tainted_device_is_avoided_and_used_once_tolerated(haru: Cluster) -> None:
    marked = subprocess.run([sys.executable, "-m", "cluster.cli", "fault", "--kubeconfig", haru.kubeconfig,
                             "gpu", "taint-0/gpu-0", "unhealthy", "--xid", "79"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert marked.returncode == 0, marked.stderr
    deadline = time.monotonic() + 30
    while not any(d.get("taints") for s in json.loads(haru.kubectl(
            "get", "resourceslices", "--field-selector=spec.nodeName=taint-0", "-o", "json").stdout)["items"]
            for d in s["spec"].get("devices") or []):
        assert time.monotonic() < deadline, "the taint did not reach the slice"
        time.sleep(0.2)

    apply(haru, claim("avoid", exactly("gpu")), pod("avoid", pool="taint", claims={"gpu": "avoid"}))
    assert "1 cannot allocate all claims" in unschedulable(haru, "avoid")
    toleration = {"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoSchedule"}
    apply(haru, claim("tolerate", exactly("gpu", tolerations=[toleration])),
          pod("tolerate", pool="taint", claims={"gpu": "tolerate"}))
    running(haru, "tolerate")
    (result,) = allocated(haru, "tolerate")
    assert (result["pool"], result["device"]) == ("taint-0", "gpu-0")
    assert smi_uuids(haru, "tolerate") == gpu_uuids_of(haru, "tolerate")
    assert get(haru, "pod", "avoid")["status"]["phase"] == "Pending"


def test_a_device_taint_rule_keeps_pods_off_its_device_until_it_is_deleted(haru: Cluster) -> None:
    rule = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "maintenance"},
            "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "rule-0", "device": "gpu-0"},
                     "taint": {"key": "example.com/maintenance", "value": "firmware", "effect": "NoSchedule"}}}
    apply(haru, rule)
    apply(haru, claim("after-rule", exactly("gpu")), pod("after-rule", pool="rule", claims={"gpu": "after-rule"}))
    assert "1 cannot allocate all claims" in unschedulable(haru, "after-rule")
    haru.kubectl("delete", "devicetaintrule", "maintenance")
    running(haru, "after-rule")  # the rule's deletion is an event that queues the pod again
    assert smi_uuids(haru, "after-rule") == gpu_uuids_of(haru, "after-rule")


def test_an_extended_resource_request_is_served_through_dra_on_a_dra_only_node(haru: Cluster) -> None:
    apply(haru, pod("legacy-gpu", pool="a100", limits={"nvidia.com/gpu": 1}))
    running(haru, "legacy-gpu")
    status = get(haru, "pod", "legacy-gpu")["status"]["extendedResourceClaimStatus"]
    name = status["resourceClaimName"]
    assert name.startswith("legacy-gpu-extended-resources-")
    assert status["requestMappings"] == [{"containerName": "main", "resourceName": "nvidia.com/gpu",
                                          "requestName": "container-0-request-0"}]
    special = get(haru, "resourceclaim", name)
    assert special["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert special["metadata"]["ownerReferences"][0]["name"] == "legacy-gpu"
    uuids = smi_uuids(haru, "legacy-gpu")
    assert uuids == gpu_uuids_of(haru, name) and len(uuids) == 1
    assert haru.kubectl("exec", "legacy-gpu", "--", "nvidia-smi", "-L").stdout.startswith("GPU 0: NVIDIA A100")

    # The kubernetes 36.0.3 client reads the mapping into its typed models.
    from kubernetes import client, config
    api_client = config.new_client_from_config(config_file=haru.kubeconfig)
    try:
        typed = client.CoreV1Api(api_client).read_namespaced_pod("legacy-gpu", "default").status
        mapping = typed.extended_resource_claim_status
        assert mapping.resource_claim_name == name
        assert [(m.container_name, m.resource_name, m.request_name) for m in mapping.request_mappings] == [
            ("main", "nvidia.com/gpu", "container-0-request-0")]
        special_typed = client.ResourceV1Api(api_client).read_namespaced_resource_claim(name, "default")
        assert special_typed.status.reserved_for[0].name == "legacy-gpu"
    finally:
        api_client.close()


def test_a_device_with_binding_conditions_attaches_after_a_delay(haru: Cluster) -> None:
    apply(haru, claim("late-nic", exactly("nic", "nic.haru.dev")), claim("late-gpu", exactly("gpu")),
          pod("late", pool="net", claims={"nic": "late-nic", "gpu": "late-gpu"}))
    running(haru, "late")
    nic = get(haru, "resourceclaim", "late-nic")["status"]
    (result,) = nic["allocation"]["devices"]["results"]
    assert result["bindingConditions"] == ["nic.haru.dev/attached"]
    assert nic["allocation"]["allocationTimestamp"]
    assert nic["allocation"]["nodeSelector"]["nodeSelectorTerms"]  # bindsToNode
    (device,) = nic["devices"]
    assert {c["type"]: c["status"] for c in device["conditions"]}["nic.haru.dev/attached"] == "True"
    events = json.loads(haru.kubectl("get", "events.events.k8s.io", "--field-selector=regarding.name=late",
                                     "-o", "json").stdout)["items"]
    assert any(e["reason"] == "BindingConditionsPending"
               and e["note"] == "waiting for binding conditions for device on node net-0" for e in events)
    assert smi_uuids(haru, "late") == gpu_uuids_of(haru, "late-gpu")
