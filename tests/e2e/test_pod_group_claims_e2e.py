"""One ResourceClaim for a whole PodGroup under `haru up` (KEP-5729), judged by kubectl v1.36.3.

A PodGroup's `resourceClaims` entry with a template: the ResourceClaim controller makes one claim
owned by the PodGroup, the scheduler allocates it once and reserves it for the PodGroup (one
`reservedFor` entry: apiGroup scheduling.k8s.io, resource podgroups, name, uid), every pod of the
group with the same entry shares it (so they land on the node of its GPU), the hollow kubelets
accept pods whose claim is reserved for their group, and the pods run, for a basic group and for a
gang (placed in one PodGroup cycle). A pod outside the group with the same template gets its own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cluster, start_haru, stop_haru

pytestmark = pytest.mark.slow
CLUSTER_FILE = "pools:\n- {name: gpu, count: 2, devices: {gpus: 2, model: h100}}\n"
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}
ENTRY = {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}


@pytest.fixture(scope="module")
def haru(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    data = tmp_path_factory.mktemp("haru-group-claims")
    cluster_file = Path(data) / "cluster.yaml"
    cluster_file.write_text(CLUSTER_FILE)
    cluster = start_haru(str(data / "data"), "-f", str(cluster_file))
    try:
        deadline = time.monotonic() + 60
        while len(cluster.kubectl("get", "nodes", "-o", "name").stdout.split()) < 2:
            assert time.monotonic() < deadline, "the nodes did not register"
            time.sleep(0.2)
        cluster.kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=60s")
        cluster.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                              "items": [CLASS, TEMPLATE]}))
        yield cluster
    finally:
        stop_haru(cluster)


def _pod(name: str, group: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceClaims": [ENTRY], "containers": [
        {"name": "main", "image": "busybox", "command": ["sleep", "3600"], "resources": {"claims": [{"name": "gpu"}]}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _get(haru: Cluster, kind: str, name: str) -> dict[str, Any]:
    return json.loads(haru.kubectl("get", kind, name, "-o", "json").stdout)  # type: ignore[no-any-return]


POLICIES = {"basic": {"basic": {}}, "gang": {"gang": {"minCount": 3}}}


@pytest.mark.parametrize("policy", list(POLICIES))
def test_the_pods_of_a_group_share_one_claim_reserved_for_the_group(haru: Cluster, policy: str) -> None:
    name = f"team-{policy}"
    group = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": name, "namespace": "default"},
             "spec": {"schedulingPolicy": POLICIES[policy], "resourceClaims": [ENTRY]}}
    members = [f"{name}-{i}" for i in range(3)]
    loner = f"loner-{policy}"
    items = [group, *(_pod(m, name) for m in members), _pod(loner, None)]
    haru.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))

    haru.kubectl("wait", "pod", *members, loner, "--for=condition=Ready", "--timeout=60s", timeout=70)

    podgroup = _get(haru, "podgroup", name)
    [status] = podgroup["status"]["resourceClaimStatuses"]
    shared = _get(haru, "resourceclaim", status["resourceClaimName"])
    assert shared["metadata"]["generateName"] == f"{name}-gpu-"
    assert [(o["kind"], o["name"]) for o in shared["metadata"]["ownerReferences"]] == [("PodGroup", name)]
    assert shared["status"]["reservedFor"] == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups",
                                                "name": name, "uid": podgroup["metadata"]["uid"]}]
    [device] = shared["status"]["allocation"]["devices"]["results"]
    pods = [_get(haru, "pod", m) for m in members]
    assert {p["status"]["resourceClaimStatuses"][0]["resourceClaimName"] for p in pods} == {shared["metadata"]["name"]}
    # The GPU is on one node: the group is where it is.
    assert {p["spec"]["nodeName"] for p in pods} == {device["pool"]}
    own = _get(haru, "pod", loner)["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    assert own != shared["metadata"]["name"]
    assert [r["name"] for r in _get(haru, "resourceclaim", own)["status"]["reservedFor"]] == [loner]
    rows = {row.split()[0]: row.split()[1] for row in haru.kubectl("get", "resourceclaims").stdout.splitlines()[1:]}
    assert (rows[shared["metadata"]["name"]], rows[own]) == ("allocated,reserved", "allocated,reserved")
