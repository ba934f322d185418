"""The Job controller's Workload and PodGroup for a gang-shaped Indexed Job (KEP-5547), against an
in-process API server, judged by kubectl v1.36.3.

An Indexed Job with completions == parallelism > 1 gets a Workload (controllerRef and owner the
Job, one template `<job>-pgt-0` with a gang of minCount = parallelism), then a PodGroup from that
template, then pods that name it in `spec.schedulingGroup`, in that order; upstream's names. Other
Jobs get none. `kubectl patch` of such a Job's parallelism is refused with JobValidation's text,
while a plain Indexed Job still scales. With WorkloadWithJob off (a second controller, gates from
its settings) nothing is made.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from client.errors import is_not_found
from client.resources import EVENTS, JOBS, PODGROUPS, PODS, WORKLOADS
from controllers import job_workload
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("job",)
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"


def _job(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox", "command": ["sh", "-c", "exit 0"]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}, **spec}}


async def _pods(cluster: Cluster, job: str, n: int) -> list[dict[str, Any]] | None:
    items = (await cluster.client.list(PODS, NS, label_selector=f"batch.kubernetes.io/job-name={job}"))["items"]
    return items if len(items) >= n else None


def _rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


async def test_a_gang_job_gets_its_workload_then_podgroup_then_pods(cluster: Cluster) -> None:
    job = await cluster.client.create(JOBS, _job("train", completionMode="Indexed", completions=3, parallelism=3), NS)
    uid = job["metadata"]["uid"]

    pods = await eventually(lambda: _pods(cluster, "train", 3))

    [workload] = (await cluster.client.list(WORKLOADS, NS))["items"]
    assert workload["metadata"]["name"] == job_workload.workload_name(job)
    assert workload["metadata"]["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
                                                        "uid": uid, "controller": True, "blockOwnerDeletion": True}]
    assert workload["spec"] == {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
                                "podGroupTemplates": [{"name": "train-pgt-0",
                                                       "schedulingPolicy": {"gang": {"minCount": 3}}}]}
    [group] = (await cluster.client.list(PODGROUPS, NS))["items"]
    assert group["metadata"]["name"] == job_workload.pod_group_name(workload["metadata"]["name"], "train-pgt-0")
    assert group["spec"]["podGroupTemplateRef"] == {"workload": {"workloadName": workload["metadata"]["name"],
                                                                 "podGroupTemplateName": "train-pgt-0"}}
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    owners = group["metadata"]["ownerReferences"]
    assert [(o["kind"], o["uid"], o.get("controller", False)) for o in owners] == [
        ("Job", uid, True), ("Workload", workload["metadata"]["uid"], False)]
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {group["metadata"]["name"]}
    # Workload → PodGroup → Pods: each written after the one it refers to.
    assert _rv(workload) < _rv(group) < min(_rv(p) for p in pods)
    events = (await cluster.client.list(EVENTS, NS, field_selector="involvedObject.name=train"))["items"]
    assert ("WorkloadCreated", f"Created Workload {workload['metadata']['name']} for Job train") in {
        (e["reason"], e["message"]) for e in events}


async def test_other_jobs_get_no_workload(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("wide", completionMode="Indexed", completions=4, parallelism=2), NS)
    pods = await eventually(lambda: _pods(cluster, "wide", 2))
    assert all("schedulingGroup" not in p["spec"] for p in pods)
    refs = [w["spec"]["controllerRef"]["name"] for w in (await cluster.client.list(WORKLOADS, NS))["items"]]
    assert "wide" not in refs


async def test_kubectl_cannot_change_a_gang_jobs_parallelism(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("fixed", completionMode="Indexed", completions=2, parallelism=2), NS)
    await eventually(lambda: _pods(cluster, "fixed", 2))
    group = next(g["metadata"]["name"] for g in (await cluster.client.list(PODGROUPS, NS))["items"]
                 if g["metadata"]["ownerReferences"][0]["name"] == "fixed")

    code, out, err = await cluster.kubectl("patch", "job", "fixed", "--type=merge", "-p",
                                           '{"spec":{"parallelism":1}}')

    assert code == 1 and out == ""
    assert err.strip() == (f'Error from server (Forbidden): jobs.batch "fixed" is forbidden: cannot change '
                           f'parallelism for a Job referencing gang-scheduled PodGroup "{group}"')
    assert (await cluster.client.get(JOBS, "fixed", NS))["spec"]["parallelism"] == 2
    # A Job without a gang still scales (here: its parallelism down to 1). Its own Job, so the test
    # does not lean on another one's.
    await cluster.client.create(JOBS, _job("scalable", completionMode="Indexed", completions=4, parallelism=2), NS)
    code, out, err = await cluster.kubectl("patch", "job", "scalable", "--type=merge", "-p",
                                           '{"spec":{"parallelism":1}}')
    assert (code, out.strip()) == (0, "job.batch/scalable patched"), err


async def test_kubectl_get_podgroups_and_workloads(cluster: Cluster) -> None:
    code, out, err = await cluster.kubectl("get", "podgroups", "-o", "wide")
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split() == ["NAME", "POLICY", "WORKLOAD", "STATUS", "AGE"]
    train = next(r.split() for r in rows if "-train-pgt-0-" in r)
    assert train[1:4] == ["Gang(minCount=3)", train[0].split("-train-pgt-0-")[0], "Pending"]
    code, out, err = await cluster.kubectl("get", "workloads", "-o", "json")
    assert code == 0, err
    assert sorted(w["spec"]["controllerRef"]["name"] for w in json.loads(out)["items"]) == ["fixed", "train"]


async def test_a_resumed_gang_job_keeps_its_one_group(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("pause", completionMode="Indexed", completions=2, parallelism=2), NS)
    first = await eventually(lambda: _pods(cluster, "pause", 2))
    group = first[0]["spec"]["schedulingGroup"]["podGroupName"]

    await cluster.client.patch(JOBS, "pause", {"spec": {"suspend": True}}, NS)

    async def gone() -> bool:
        items = (await cluster.client.list(PODS, NS, label_selector="batch.kubernetes.io/job-name=pause"))["items"]
        return all(p["metadata"].get("deletionTimestamp") for p in items)
    await eventually(gone)
    for pod in first:  # no kubelet here: finish the deletion as one would
        try:
            await cluster.client.delete(PODS, pod["metadata"]["name"], NS, grace_period_seconds=0)
        except Exception as exc:  # an unbound pod goes as soon as the Job controller drops its finalizer
            if not is_not_found(exc):
                raise
    await cluster.client.patch(JOBS, "pause", {"spec": {"suspend": False}}, NS)

    async def replaced() -> list[dict[str, Any]] | None:
        items = (await cluster.client.list(PODS, NS, label_selector="batch.kubernetes.io/job-name=pause"))["items"]
        fresh = [p for p in items if p["metadata"]["uid"] not in {f["metadata"]["uid"] for f in first}]
        return fresh if len(fresh) == 2 else None
    again = await eventually(replaced)
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in again} == {group}
    owned = [g for g in (await cluster.client.list(PODGROUPS, NS))["items"]
             if g["metadata"]["ownerReferences"][0]["name"] == "pause"]
    assert [g["metadata"]["name"] for g in owned] == [group]
