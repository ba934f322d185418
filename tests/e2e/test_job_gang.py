"""A Job-created gang under `haru up` (KEP-5547), judged by kubectl v1.36.3: an Indexed Job with
completions == parallelism gets its Workload and PodGroup, its pods name the group, the scheduler
places them, the hollow nodes run them (`sh -c "exit 0"`) and the Job completes; `kubectl get
podgroups` shows the group; `kubectl patch` of the parallelism is refused. With
`--feature-gates WorkloadWithJob=false` the controllers make none.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import Cluster, start_haru, stop_haru

pytestmark = pytest.mark.slow

GANG = """
apiVersion: batch/v1
kind: Job
metadata: {name: gang}
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: [sh, -c, "exit 0"]}
"""


def test_a_job_created_gang_completes(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "gangs")
    haru.kubectl("-n", "gangs", "apply", "-f", "-", input=GANG)

    waited = haru.kubectl("-n", "gangs", "wait", "--for=condition=complete", "job/gang", "--timeout=90s", timeout=100)

    assert waited.stdout.strip() == "job.batch/gang condition met"
    job = json.loads(haru.kubectl("-n", "gangs", "get", "job", "gang", "-o", "json").stdout)
    assert (job["status"]["succeeded"], job["status"]["completedIndexes"]) == (3, "0-2")
    [workload] = json.loads(haru.kubectl("-n", "gangs", "get", "workloads", "-o", "json").stdout)["items"]
    assert workload["spec"]["controllerRef"] == {"apiGroup": "batch", "kind": "Job", "name": "gang"}
    assert workload["spec"]["podGroupTemplates"] == [{"name": "gang-pgt-0", "schedulingPolicy": {"gang": {"minCount": 3}}}]
    [group] = json.loads(haru.kubectl("-n", "gangs", "get", "podgroups", "-o", "json").stdout)["items"]
    name = group["metadata"]["name"]
    assert name.startswith(workload["metadata"]["name"] + "-gang-pgt-0-")
    pods = json.loads(haru.kubectl("-n", "gangs", "get", "pods", "-o", "json").stdout)["items"]
    assert sorted((p["spec"]["schedulingGroup"]["podGroupName"], p["status"]["phase"]) for p in pods) == \
        [(name, "Succeeded")] * 3
    table = haru.kubectl("-n", "gangs", "get", "podgroups").stdout.splitlines()
    assert table[0].split() == ["NAME", "POLICY", "WORKLOAD", "STATUS", "AGE"]
    assert table[1].split()[:3] == [name, "Gang(minCount=3)", workload["metadata"]["name"]]

    refused = haru.kubectl("-n", "gangs", "patch", "job", "gang", "--type=merge", "-p", '{"spec":{"parallelism":2}}',
                           check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (f'Error from server (Forbidden): jobs.batch "gang" is forbidden: cannot change '
                                      f'parallelism for a Job referencing gang-scheduled PodGroup "{name}"')


def test_haru_up_feature_gates_reach_the_controllers_co_process(tmp_path: Path) -> None:
    """`haru up --feature-gates WorkloadWithJob=false`: the controllers' part of the flag reaches
    `python -m controllers`, so the same Job gets no Workload and no PodGroup (the API still serves them)."""
    cluster = start_haru(str(tmp_path / "data"), "--feature-gates", "WorkloadWithJob=false")
    try:
        cluster.kubectl("apply", "-f", "-", input=GANG)
        deadline = time.monotonic() + 30
        while len(json.loads(cluster.kubectl("get", "pods", "-o", "json").stdout)["items"]) < 3:
            assert time.monotonic() < deadline, "the Job made no pods"
            time.sleep(0.1)
        pods = json.loads(cluster.kubectl("get", "pods", "-o", "json").stdout)["items"]
        assert all("schedulingGroup" not in p["spec"] for p in pods)
        assert cluster.kubectl("get", "workloads,podgroups").stderr.strip() == "No resources found in default namespace."
    finally:
        stop_haru(cluster)
