"""`kubectl top` against `haru up`: the hollow kubelets' simulated usage, scraped by the API server.

One `haru up` for the module; pods bound by hand to `cpu-0` in namespace `top` run there. kubectl
v1.36.3 `top nodes` shows every Ready node, `top pods -n top` (and `--containers`) the pods, an
annotated container exactly its annotation, a plain one about its requests; the Python client
36.0.3's `utils.get_nodes_metrics` / `get_pods_metrics` return the same objects.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client as pyclient, config as pyconfig, utils as pyutils

from tests.conftest import Cluster

pytestmark = pytest.mark.slow


def _pod(name: str, containers: list[dict[str, Any]], annotations: dict[str, str] | None = None) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "namespace": "top", "labels": {"app": name},
                                    "annotations": annotations or {}},
                       "spec": {"nodeName": "cpu-0", "containers": [{"image": "nginx", **c} for c in containers]}})


@pytest.fixture(scope="module", autouse=True)
def pods(haru: Cluster) -> None:
    deadline = time.monotonic() + 30
    while len(haru.kubectl("get", "nodes", "-o", "name").stdout.split()) < 4:
        assert time.monotonic() < deadline, "the nodes did not register"
        time.sleep(0.1)
    haru.kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=30s")
    haru.kubectl("create", "namespace", "top")
    haru.kubectl("apply", "-f", "-", input=_pod("web", [{"name": "app"}, {"name": "sidecar"}], {
        "usage.haru.dev/app": "cpu=250m,memory=64Mi", "usage.haru.dev/sidecar": "cpu=50m,memory=16Mi"}))
    haru.kubectl("apply", "-f", "-", input=_pod("api", [{"name": "main", "resources": {
        "requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}}}]))
    haru.kubectl("wait", "pod", "--all", "-n", "top", "--for=condition=Ready", "--timeout=30s")


def _top(haru: Cluster, *args: str) -> list[list[str]]:
    """kubectl top's rows, once metrics are there (the first answers may precede the second scrape)."""
    deadline = time.monotonic() + 20  # a round is a scrape, half a second, a scrape
    while True:
        result = haru.kubectl("top", *args, check=False)
        if result.returncode == 0:
            return [line.split() for line in result.stdout.splitlines()]
        assert "metrics not available yet" in result.stderr or "Metrics not available" in result.stderr, result.stderr
        assert time.monotonic() < deadline, result.stderr
        time.sleep(0.5)


def test_kubectl_top_nodes_shows_every_ready_node(haru: Cluster) -> None:
    rows = _top(haru, "nodes")

    assert rows[0] == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    usage = {row[0]: row[1:] for row in rows[1:]}
    assert sorted(usage) == ["cpu-0", "cpu-1", "gpu-0", "gpu-1"]
    # cpu-0 runs 300m annotated plus ~500m requested plus the system's ~100m; an idle node ~100m.
    assert 850 <= int(usage["cpu-0"][0].rstrip("m")) <= 950
    assert 90 <= int(usage["cpu-1"][0].rstrip("m")) <= 110
    assert all(cells[1].endswith("%") and cells[2].endswith("Mi") for cells in usage.values())


def test_kubectl_top_pods_shows_annotated_usage_exactly_and_requests_roughly(haru: Cluster) -> None:
    rows = _top(haru, "pods", "-n", "top")

    assert rows[0] == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    usage = {row[0]: row[1:] for row in rows[1:]}
    assert usage["web"] == ["300m", "80Mi"]
    cpu, memory = int(usage["api"][0].rstrip("m")), int(usage["api"][1].rstrip("Mi"))
    assert 450 <= cpu <= 500 and 230 <= memory <= 256  # its requests, wobbling under the limits


def test_kubectl_top_pods_containers(haru: Cluster) -> None:
    rows = _top(haru, "pods", "-n", "top", "--containers", "-l", "app=web")

    assert rows == [["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"], ["web", "app", "250m", "64Mi"],
                    ["web", "sidecar", "50m", "16Mi"]]


def test_the_python_clients_metrics_helpers(haru: Cluster) -> None:
    _top(haru, "pods", "-n", "top")
    api = pyconfig.new_client_from_config(config_file=haru.kubeconfig)

    nodes = pyutils.get_nodes_metrics(api)
    pods = pyutils.get_pods_metrics(api, "top", label_selector="app=web")

    assert sorted(n["metadata"]["name"] for n in nodes["items"]) == ["cpu-0", "cpu-1", "gpu-0", "gpu-1"]
    assert [(p["metadata"]["name"], p["containers"]) for p in pods["items"]] == [
        ("web", [{"name": "app", "usage": {"cpu": "250m", "memory": "64Mi"}},
                 {"name": "sidecar", "usage": {"cpu": "50m", "memory": "16Mi"}}])]
    assert isinstance(api, pyclient.ApiClient)
