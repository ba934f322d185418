"""`python -m scheduler --record-results` end to end: after a pod is scheduled, kubectl v1.36.3 shows
kube-scheduler-simulator's annotations on it, naming the node that was chosen and the one filtered out.

An API server child (plain HTTP) and the scheduler child with `--record-results`; kubectl creates
two Nodes (one cordoned) and a Pod, then reads the Pod back. Skipped until the core's
`python -m scheduler` and the NodeUnschedulable plugin are on main.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from bench._nodes_side import write_kubeconfig
from bench._server_process import REPO, ServerProcess, child_env
from scheduler import record_results as rr
from scheduler.registry import REGISTRY
from tests import realclients

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (REPO / "scheduler" / "__main__.py").exists(),
                                 reason="python -m scheduler arrives with the scheduler core (git merge main)"),
              pytest.mark.skipif("NodeUnschedulable" not in REGISTRY,
                                 reason="the cordoned node is filtered by NodeUnschedulable (basic plugins)")]

NODES = """
apiVersion: v1
kind: Node
metadata: {name: ready-node, labels: {kubernetes.io/hostname: ready-node}}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata: {name: cordoned-node, labels: {kubernetes.io/hostname: cordoned-node}}
spec: {unschedulable: true}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m}}}]
"""


async def kubectl(kubeconfig: Path, *args: str, stdin: str | None = None) -> str:
    proc = await asyncio.create_subprocess_exec(
        realclients.kubectl(), *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, "KUBECONFIG": str(kubeconfig)})
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 60)
    assert proc.returncode == 0, f"kubectl {' '.join(args)}: {err.decode()}"
    return out.decode()


async def test_a_scheduled_pod_carries_every_plugin_answer(tmp_path: Path) -> None:
    apiserver = await ServerProcess.start_apiserver(tmp_path / "data")
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", apiserver.url)
    log = open(tmp_path / "scheduler.log", "wb")
    scheduler = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "scheduler", "--kubeconfig", str(kubeconfig), "--record-results",
        "--secure-port", "0",  # a free port: tests side by side must not fight over 10259
        cwd=str(REPO), env=child_env(), stdout=log, stderr=log)
    try:
        await kubectl(kubeconfig, "create", "-f", "-", stdin=NODES)
        pod: dict = {}
        for _ in range(300):
            pod = json.loads(await kubectl(kubeconfig, "get", "pod", "web", "-o", "json"))
            if rr.SELECTED_NODE in (pod["metadata"].get("annotations") or {}):
                break
            await asyncio.sleep(0.1)
        annotations = pod["metadata"].get("annotations") or {}
        assert pod["spec"].get("nodeName") == "ready-node", (tmp_path / "scheduler.log").read_text()
        assert annotations[rr.SELECTED_NODE] == "ready-node"
        filtered = json.loads(annotations[rr.FILTER])
        assert filtered["cordoned-node"]["NodeUnschedulable"] == "node(s) were unschedulable", filtered
        assert filtered["ready-node"]["NodeUnschedulable"] == "passed", filtered
        assert json.loads(annotations[rr.BIND]) == {"DefaultBinder": "success"}
        history = json.loads(annotations[rr.HISTORY])
        assert history and history[-1][rr.SELECTED_NODE] == "ready-node"
    finally:
        scheduler.terminate()
        await scheduler.wait()
        log.close()
        await apiserver.stop()
