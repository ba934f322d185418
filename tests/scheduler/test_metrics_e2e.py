"""`haru up` with the gang gates: the scheduler co-process's /metrics after kubectl creates a gang.

`haru up` picks the co-process's port and lists it in its summary; the test reads it there, applies
a PodGroup (minCount 3) and its three pods with the real kubectl, waits until all three are bound,
then scrapes /metrics over HTTP and parses it with prometheus_client: one scheduled group attempt,
three scheduled pod attempts, and the algorithm histogram observed once.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import ROOT, Cluster, _drain, stop_haru

pytestmark = pytest.mark.slow
_SERVING = re.compile(r"haru is serving (\S+); kubeconfig: (\S+)")
_SCHEDULER = re.compile(r"^  scheduler   (http://\S+)/metrics")
GANG = """apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: trio}
spec:
  schedulingPolicy:
    gang: {minCount: 3}
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: m{i}}}
spec:
  schedulingGroup: {{podGroupName: trio}}
  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: "1"}}}}}}]
""" for i in range(3))


def _up(data_dir: Path) -> tuple[Cluster, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "cluster.cli", "up", "--data-dir", str(data_dir), "--port", "0", "--nodes", "3",
         "--feature-gates", "GenericWorkload=true,GangScheduling=true"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    serving: re.Match[str] | None = None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        serving = serving or _SERVING.search(line)
        found = _SCHEDULER.search(line)
        if found and serving:
            _drain(process)
            return Cluster(serving.group(1), serving.group(2), str(data_dir), process), found.group(1)
    process.kill()
    _, err = process.communicate(timeout=5)
    raise AssertionError(f"haru up listed no scheduler endpoint:\n{err}")


def _ready(endpoint: str) -> bool:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{endpoint}/readyz", timeout=10) as resp:
                return resp.read() == b"ok"
        except urllib.error.HTTPError:
            time.sleep(0.2)
    return False


def test_the_scheduler_co_process_counts_a_gang_it_scheduled(tmp_path: Path) -> None:
    cluster, endpoint = _up(tmp_path / "haru")
    try:
        with urllib.request.urlopen(f"{endpoint}/healthz", timeout=10) as resp:
            assert resp.read() == b"ok"
        assert _ready(endpoint), "the scheduler never became ready (its informers did not sync)"
        cluster.kubectl("apply", "-f", "-", input=GANG)
        deadline = time.monotonic() + 60
        nodes: list[str] = []
        while time.monotonic() < deadline:
            out = cluster.kubectl("get", "pods", "-o", "jsonpath={.items[*].spec.nodeName}").stdout.split()
            nodes = [n for n in out if n]
            if len(nodes) == 3:
                break
            time.sleep(0.2)
        assert len(nodes) == 3, "the gang did not bind"
        with urllib.request.urlopen(f"{endpoint}/metrics", timeout=10) as resp:
            text = resp.read().decode()
        samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                   for family in text_string_to_metric_families(text) for s in family.samples}
        scheduled = (("profile", "default-scheduler"), ("result", "scheduled"))
        assert samples[("scheduler_podgroup_schedule_attempts_total", scheduled)] == 1.0
        assert samples[("scheduler_schedule_attempts_total", scheduled)] == 3.0
        assert samples[("scheduler_podgroup_scheduling_algorithm_duration_seconds_count", ())] == 1.0
        assert samples[("scheduler_pending_pods", (("queue", "active"),))] == 0.0
    finally:
        stop_haru(cluster)
