"""With WorkloadWithJob off (the controllers' own gates, as `--feature-gates` sets them), a gang-
shaped Indexed Job is an ordinary Job: no Workload, no PodGroup, pods without `schedulingGroup`,
and its parallelism changes freely."""

from __future__ import annotations

from typing import Any

import pytest

from client.resources import JOBS, PODGROUPS, PODS, WORKLOADS
from controllers import features
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("job",)
SETTINGS = {"job": {"features": features.parse("WorkloadWithJob=false")}}
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"


async def test_no_workload_and_no_group_when_the_gate_is_off(cluster: Cluster) -> None:
    container = {"name": "main", "image": "busybox"}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "plain"},
           "spec": {"completionMode": "Indexed", "completions": 2, "parallelism": 2,
                    "template": {"spec": {"containers": [container], "restartPolicy": "Never"}}}}
    await cluster.client.create(JOBS, job, NS)

    async def pods() -> list[dict[str, Any]] | None:
        items = (await cluster.client.list(PODS, NS, label_selector="batch.kubernetes.io/job-name=plain"))["items"]
        return items if len(items) == 2 else None
    created = await eventually(pods)

    assert all("schedulingGroup" not in p["spec"] for p in created)
    assert (await cluster.client.list(WORKLOADS, NS))["items"] == []
    assert (await cluster.client.list(PODGROUPS, NS))["items"] == []
    code, out, err = await cluster.kubectl("patch", "job", "plain", "--type=merge", "-p", '{"spec":{"parallelism":1}}')
    assert (code, out.strip()) == (0, "job.batch/plain patched"), err
