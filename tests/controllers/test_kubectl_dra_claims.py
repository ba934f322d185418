"""The DRA controllers under `haru up`, seen through kubectl v1.36.3; no scheduler is needed.

A pod with a ResourceClaimTemplate entry (its schedulerName served by no one) gets its claim,
`<pod>-<entry>-xxxxx` owned by the pod, recorded in `status.resourceClaimStatuses`, and deleting
the pod removes the claim. A pod bound by hand to a GPU node, whose claim is allocated by writing
the status, gets the claim reserved; `haru fault gpu NODE/DEV unhealthy --effect NoExecute` then
taints the device and the pod is evicted with DisruptionTarget (a finalizer of the test keeps the
deleted pod readable).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from tests.conftest import ROOT, Cluster

pytestmark = pytest.mark.slow
T = TypeVar("T")
KEEP = "haru.test/keep"


def _until(check: Callable[[], T | None], what: str, timeout: float = 30) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what}: not after {timeout}s (last: {value!r})"
        time.sleep(0.2)


def _get(haru: Cluster, *what: str) -> Any:
    return json.loads(haru.kubectl("get", *what, "-o", "json").stdout)


@pytest.fixture(scope="module", autouse=True)
def nodes_up(haru: Cluster) -> None:
    _until(lambda: len(haru.kubectl("get", "nodes", "-o", "name").stdout.split()) >= 4, "the nodes registered")
    haru.kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=30s")


TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}


def test_a_template_entry_gets_a_claim_owned_by_the_pod_and_goes_with_it(haru: Cluster) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer"}, "spec": {
        "schedulerName": "nobody", "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        "containers": [{"name": "main", "image": "cuda", "resources": {"claims": [{"name": "gpu"}]}}]}}
    haru.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [TEMPLATE, pod]}))
    uid = _get(haru, "pod", "trainer")["metadata"]["uid"]

    listed = _until(lambda: haru.kubectl("get", "resourceclaims", "--no-headers").stdout.split(), "the claim")
    name = listed[0]
    assert re.fullmatch(r"trainer-gpu-[a-z0-9]{5}", name), listed
    assert listed[1] == "pending"  # the STATE column
    claim = _get(haru, "resourceclaim", name)
    assert claim["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": uid,
                                                     "controller": True, "blockOwnerDeletion": True}]
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    statuses = _until(lambda: _get(haru, "pod", "trainer")["status"].get("resourceClaimStatuses"), "the pod status")
    assert statuses == [{"name": "gpu", "resourceClaimName": name}]

    haru.kubectl("delete", "pod", "trainer", "--wait=true", "--timeout=30s")

    _until(lambda: haru.kubectl("get", "resourceclaims", "--no-headers", "--ignore-not-found").stdout.strip() == ""
           or None, "the claim deleted with its pod")


def _haru_fault(haru: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cluster.cli", "fault", "--kubeconfig", haru.kubeconfig, "gpu", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_a_pod_on_a_device_tainted_no_execute_is_evicted_with_disruption_target(haru: Cluster) -> None:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "by-hand"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "finalizers": [KEEP]}, "spec": {
        "nodeName": "gpu-0", "resourceClaims": [{"name": "gpu", "resourceClaimName": "by-hand"}],
        "containers": [{"name": "main", "image": "cuda", "command": ["sleep", "3600"],
                        "resources": {"claims": [{"name": "gpu"}]}}]}}
    haru.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [claim, pod]}))
    uid = _get(haru, "pod", "worker")["metadata"]["uid"]
    allocation = {"status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-0", "device": "gpu-3"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["gpu-0"]}]}]}}}}
    haru.kubectl("patch", "resourceclaim", "by-hand", "--subresource=status", "--type=merge", "-p", json.dumps(allocation))

    # The controller reserves the allocated claim for the pod bound by hand; then the kubelet runs it.
    reserved = _until(lambda: _get(haru, "resourceclaim", "by-hand")["status"].get("reservedFor"), "the reservation")
    assert reserved == [{"resource": "pods", "name": "worker", "uid": uid}]
    haru.kubectl("wait", "pod/worker", "--for=condition=Ready", "--timeout=30s")
    assert haru.kubectl("get", "resourceclaim", "by-hand", "--no-headers").stdout.split()[1] == "allocated,reserved"

    marked = _haru_fault(haru, "gpu-0/gpu-3", "unhealthy", "--effect", "NoExecute")
    assert marked.returncode == 0, marked.stderr
    assert marked.stdout.endswith(":NoExecute)\n"), marked.stdout

    evicted = _until(lambda: (p := _get(haru, "pod", "worker"))["metadata"].get("deletionTimestamp") and p,
                     "the eviction")
    [condition] = [c for c in evicted["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True", "DeletionByDeviceTaintManager", "Device Taint manager: deleting due to NoExecute taint")
    described = haru.kubectl("get", "events", "--field-selector", "involvedObject.name=worker",
                             "-o", "jsonpath={range .items[*]}{.reason}:{.message}{'\\n'}{end}").stdout
    assert "DeviceTaintManagerEviction:Marking for deletion\n" in described

    # Let the pod go; with it gone, the reservation goes too.
    haru.kubectl("patch", "pod", "worker", "--type=json", "-p", json.dumps([{"op": "remove", "path": "/metadata/finalizers"}]))
    _until(lambda: haru.kubectl("get", "pod", "worker", "--ignore-not-found", "-o", "name").stdout.strip() == "" or None,
           "the pod gone")
    _until(lambda: not _get(haru, "resourceclaim", "by-hand")["status"].get("reservedFor") or None,
           "the reservation released")
    assert _haru_fault(haru, "gpu-0/gpu-3", "healthy").returncode == 0
