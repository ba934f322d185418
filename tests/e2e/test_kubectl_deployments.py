"""Deployments under `haru up`, driven by kubectl v1.36.3 as a person would.

`kubectl create deployment web --image=nginx --replicas=3`, `rollout status` returning, `get
rs,pods` with upstream's names and columns, `set image` rolling to a second ReplicaSet, `rollout
history`, `rollout undo` (client-side in 1.36: the old ReplicaSet's template comes back), `scale`,
`rollout pause`/`resume`, `rollout restart`, `delete --cascade=foreground`; a Deployment whose pods
each claim a GPU from a ResourceClaimTemplate; helm v4.2.3's `install --wait`. The pods are the
scheduler's to bind and the hollow nodes' to run: nothing here stands in for them.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from tests.conftest import Cluster

pytestmark = pytest.mark.slow
HASHED = re.compile(r"^web-[bcdfghjklmnpqrstvwxz2456789]{6,10}$")


def _json(haru: Cluster, *args: str) -> Any:
    return json.loads(haru.kubectl(*args, "-o", "json").stdout)


def _rollout_status(haru: Cluster) -> str:
    out = haru.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=90).stdout
    assert out.strip().endswith('deployment "web" successfully rolled out'), out
    return out


def _replica_sets(haru: Cluster) -> dict[str, dict[str, Any]]:
    items = _json(haru, "get", "rs", "-l", "app=web")["items"]
    return {rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: rs for rs in items}


def _image(haru: Cluster) -> str:
    return str(_json(haru, "get", "deployment", "web")["spec"]["template"]["spec"]["containers"][0]["image"])


def test_create_deployment_rolls_out_with_upstream_names_and_columns(haru: Cluster) -> None:
    haru.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=3")
    _rollout_status(haru)
    waited = haru.kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=30s", timeout=60).stdout
    assert waited.strip() == "deployment.apps/web condition met"

    rs_lines = haru.kubectl("get", "rs").stdout.splitlines()
    assert rs_lines[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    [row] = rs_lines[1:]
    name, desired, current, ready, _ = row.split()
    assert HASHED.match(name) and (desired, current, ready) == ("3", "3", "3")
    pod_lines = haru.kubectl("get", "pods").stdout.splitlines()
    assert pod_lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert len(pod_lines) == 4
    for line in pod_lines[1:]:
        pod, ready_col, status = line.split()[:3]
        assert re.match(rf"^{name}-[bcdfghjklmnpqrstvwxz2456789]{{5}}$", pod) and (ready_col, status) == ("1/1", "Running")
    deploy = haru.kubectl("get", "deployment", "web").stdout.splitlines()
    assert deploy[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"] and deploy[1].split()[1:4] == ["3/3", "3", "3"]
    described = haru.kubectl("describe", "deployment", "web").stdout
    assert f"Scaled up replica set {name} from 0 to 3" in described
    assert re.search(r"Available\s+True\s+MinimumReplicasAvailable", described)
    assert re.search(r"Progressing\s+True\s+NewReplicaSetAvailable", described)
    # The `kubernetes` 36.0.3 client reads the status as typed objects.
    typed = client.AppsV1Api(config.new_client_from_config(haru.kubeconfig)).read_namespaced_deployment_status(
        "web", "default")
    assert (typed.status.observed_generation, typed.status.updated_replicas, typed.status.available_replicas) == (1, 3, 3)
    assert [(c.type, c.reason) for c in typed.status.conditions] == [
        ("Available", "MinimumReplicasAvailable"), ("Progressing", "NewReplicaSetAvailable")]
    assert typed.metadata.annotations["deployment.kubernetes.io/revision"] == "1"


def test_set_image_rolls_to_a_second_revision_and_history_lists_both(haru: Cluster) -> None:
    haru.kubectl("set", "image", "deployment/web", "nginx=nginx:1.27")
    _rollout_status(haru)

    sets = _replica_sets(haru)
    assert (sets["1"]["spec"]["replicas"], sets["2"]["spec"]["replicas"]) == (0, 3)
    assert sets["2"]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    history = haru.kubectl("rollout", "history", "deployment/web").stdout.splitlines()
    assert [line.split()[0] for line in history[2:] if line.strip()] == ["1", "2"]
    shown = haru.kubectl("rollout", "history", "deployment/web", "--revision=2").stdout
    assert "nginx:1.27" in shown


def test_rollout_undo_brings_the_previous_template_back_as_revision_3(haru: Cluster) -> None:
    out = haru.kubectl("rollout", "undo", "deployment/web").stdout
    assert out.strip() == "deployment.apps/web rolled back"
    _rollout_status(haru)

    assert _image(haru) == "nginx"
    sets = _replica_sets(haru)
    assert sorted(sets) == ["2", "3"]  # revision 1's ReplicaSet is revision 3 now
    assert sets["3"]["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert sets["3"]["spec"]["replicas"] == 3 and sets["2"]["spec"]["replicas"] == 0


def test_scale_changes_only_the_size(haru: Cluster) -> None:
    haru.kubectl("scale", "deployment/web", "--replicas=5")
    _rollout_status(haru)

    sets = _replica_sets(haru)
    assert sorted(sets) == ["2", "3"] and sets["3"]["spec"]["replicas"] == 5
    assert sets["3"]["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "5"


def test_pause_holds_a_new_template_until_resume(haru: Cluster) -> None:
    haru.kubectl("rollout", "pause", "deployment/web")
    haru.kubectl("set", "image", "deployment/web", "nginx=nginx:1.28")

    def paused_condition() -> dict[str, Any] | None:
        status = _json(haru, "get", "deployment", "web").get("status") or {}
        return next((c for c in status.get("conditions") or [] if c["type"] == "Progressing"
                     and c["reason"] == "DeploymentPaused"), None)

    deadline = time.monotonic() + 20
    while (condition := paused_condition()) is None:
        assert time.monotonic() < deadline, "no DeploymentPaused condition"
        time.sleep(0.2)
    assert (condition["status"], condition["message"]) == ("Unknown", "Deployment is paused")
    assert sorted(_replica_sets(haru)) == ["2", "3"]  # no ReplicaSet for the paused template

    haru.kubectl("rollout", "resume", "deployment/web")
    _rollout_status(haru)
    sets = _replica_sets(haru)
    assert sets["4"]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"


def test_rollout_restart_makes_a_new_revision_with_the_restarted_at_annotation(haru: Cluster) -> None:
    haru.kubectl("rollout", "restart", "deployment/web")
    _rollout_status(haru)

    sets = _replica_sets(haru)
    newest = sets[max(sets, key=int)]
    assert max(sets, key=int) == "5"
    assert "kubectl.kubernetes.io/restartedAt" in newest["spec"]["template"]["metadata"]["annotations"]
    pods = _json(haru, "get", "pods", "-l", "app=web")["items"]
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert len(live) == 5 and all(p["metadata"]["labels"]["pod-template-hash"] ==
                                  newest["metadata"]["labels"]["pod-template-hash"] for p in live)


def test_foreground_deletion_takes_the_replica_sets_and_pods_first(haru: Cluster) -> None:
    haru.kubectl("delete", "deployment", "web", "--cascade=foreground", "--timeout=60s", timeout=90)

    assert haru.kubectl("get", "deployment", "web", check=False).returncode != 0
    assert _json(haru, "get", "rs", "-l", "app=web")["items"] == []
    assert _json(haru, "get", "pods", "-l", "app=web")["items"] == []


DRA = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com'"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer}
spec:
  replicas: 8
  selector: {matchLabels: {app: trainer}}
  template:
    metadata: {labels: {app: trainer}}
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
      containers:
      - name: main
        image: cuda
        resources: {claims: [{name: gpu}]}
"""


def test_a_deployment_of_8_replicas_with_a_claim_template_gets_a_gpu_per_pod(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=DRA)
    out = haru.kubectl("rollout", "status", "deployment/trainer", "--timeout=60s", timeout=90).stdout
    assert out.strip().endswith('deployment "trainer" successfully rolled out'), out

    pods = _json(haru, "get", "pods", "-l", "app=trainer")["items"]
    claims = _json(haru, "get", "resourceclaims")["items"]
    assert len(pods) == 8 and len(claims) == 8
    devices = set()
    for claim in claims:
        [result] = claim["status"]["allocation"]["devices"]["results"]
        devices.add((result["pool"], result["device"]))
        [owner] = claim["metadata"]["ownerReferences"]
        assert owner["kind"] == "Pod" and claim["status"]["reservedFor"][0]["name"] == owner["name"]
    assert len(devices) == 8  # every pod its own GPU
    assert {p["spec"]["nodeName"] for p in pods} <= {"gpu-0", "gpu-1"}


def test_helm_install_wait_returns_once_the_chart_deployment_is_available(haru: Cluster) -> None:
    chart = str(Path(__file__).resolve().parent.parent / "charts" / "small")
    haru.kubectl("create", "namespace", "helm-wait")

    haru.helm("install", "waited", chart, "-n", "helm-wait", "--set", "replicas=2", "--wait", "--timeout=60s")

    status = _json(haru, "-n", "helm-wait", "get", "deployment", "waited-web")["status"]
    assert (status["availableReplicas"], status["updatedReplicas"]) == (2, 2)
