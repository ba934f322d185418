"""The Job controller against a real API server (in-process), with pod statuses written by the
test as a kubelet would (no nodes run here).

A Job gets pods shaped as upstream makes them (finalizer, owner, labels, generateName); pods that
succeed are counted through uncountedTerminatedPods and lose the finalizer, and the Job ends with
SuccessCriteriaMet then Complete and the events; an Indexed Job makes one pod per index with the
index annotation, label, hostname and env; failures past backoffLimit fail the Job with
FailureTarget then Failed; a FailJob pod failure policy rule fails it at once; Ignore does not
count; suspend deletes the pods and resume brings them back with a new startTime;
activeDeadlineSeconds fails a running Job; a successPolicy completes an Indexed Job early;
ttlSecondsAfterFinished deletes a finished Job (foreground); a deleted Job's pods lose the
finalizer; an orphaned pod is adopted back and a pod relabelled away is released.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from kubernetes import client as pyclient

from client import errors
from client.resources import EVENTS, JOBS, PODS
from controllers import job_indexes, job_pods, timestamps
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("job", "ttl-after-finished", "garbage-collector")
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"


def _job(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox", "command": ["sh", "-c", "exit 0"]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}, **spec}}


async def _pods(cluster: Cluster, job: str) -> list[dict[str, Any]]:
    items = (await cluster.client.list(PODS, NS, label_selector=f"batch.kubernetes.io/job-name={job}")).get("items") or []
    return sorted(items, key=lambda p: p["metadata"]["name"])


async def _n_pods(cluster: Cluster, job: str, n: int, phase: str = "") -> list[dict[str, Any]] | None:
    pods = [p for p in await _pods(cluster, job) if not p["metadata"].get("deletionTimestamp")
            and (p.get("status") or {}).get("phase", "Pending") in ((phase,) if phase else ("Pending", "", "Running"))]
    return pods if len(pods) >= n else None


async def _finish(cluster: Cluster, pod: dict[str, Any], exit_code: int, conditions: list[dict[str, Any]] | None = None,
                  *, missing_ok: bool = False) -> None:
    phase = "Succeeded" if exit_code == 0 else "Failed"
    state = {"terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
                            "finishedAt": timestamps.format(time.time()), "startedAt": timestamps.format(time.time())}}
    for _ in range(10):  # as a kubelet does, retry when the controller changed the pod meanwhile
        try:
            fresh = await cluster.client.get(PODS, pod["metadata"]["name"], NS)
            fresh["status"] = _terminated(fresh, phase, state, conditions)
            await cluster.client.update(PODS, fresh, subresource="status")
            return
        except errors.APIError as exc:
            if missing_ok and errors.is_not_found(exc):
                return  # deleted meanwhile (an unscheduled pod goes at once)
            if not errors.is_conflict(exc):
                raise
    raise AssertionError(f"pod {pod['metadata']['name']}: status update kept conflicting")


def _terminated(pod: dict[str, Any], phase: str, state: dict[str, Any], conditions: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {**(pod.get("status") or {}), "phase": phase, "conditions": conditions or [],
            "containerStatuses": [{"name": "main", "image": "busybox", "imageID": "", "ready": False,
                                   "restartCount": 0, "state": state}]}


def _condition(job: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (job.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


async def _job_with(cluster: Cluster, name: str, kind: str) -> dict[str, Any] | None:
    job = await cluster.client.get(JOBS, name, NS)
    condition = _condition(job, kind)
    return job if condition and condition["status"] == "True" else None


async def _events(cluster: Cluster, name: str) -> list[tuple[str, str, str]]:
    items = (await cluster.client.list(EVENTS, NS)).get("items") or []
    return [(e["type"], e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == name
            and e["involvedObject"]["kind"] == "Job"]


async def test_a_job_runs_its_pod_and_completes_when_it_succeeds(cluster: Cluster) -> None:
    created = await cluster.client.create(JOBS, _job("hello"), NS)

    [pod] = await eventually(lambda: _n_pods(cluster, "hello", 1))

    meta = pod["metadata"]
    assert meta["generateName"] == "hello-" and meta["finalizers"] == [job_pods.TRACKING_FINALIZER]
    assert meta["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "hello",
                                        "uid": created["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert meta["labels"]["batch.kubernetes.io/controller-uid"] == created["metadata"]["uid"]
    async def counted_active() -> dict[str, Any] | None:
        job = await cluster.client.get(JOBS, "hello", NS)
        return job if (job.get("status") or {}).get("active") == 1 else None
    job = await eventually(counted_active)
    assert job["status"]["startTime"] and job["status"]["ready"] == 0

    await _finish(cluster, pod, 0)
    done = await eventually(lambda: _job_with(cluster, "hello", "Complete"))

    status = done["status"]
    assert [(c["type"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
        ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")]
    assert status["succeeded"] == 1 and "active" not in status and status["uncountedTerminatedPods"] == {}
    assert status["completionTime"] and status["ready"] == 0 and status["terminating"] == 0
    after = await cluster.client.get(PODS, meta["name"], NS)
    assert job_pods.TRACKING_FINALIZER not in (after["metadata"].get("finalizers") or [])
    seen = await eventually(lambda: _has_event(cluster, "hello", "Completed"))
    assert ("Normal", "SuccessfulCreate", f"Created pod: {meta['name']}") in seen
    assert ("Normal", "Completed", "Job completed") in seen
    # The `kubernetes` 36.0.3 client reads the status as a typed V1Job.
    api = pyclient.ApiClient(pyclient.Configuration(host=cluster.url))
    typed = await asyncio.to_thread(pyclient.BatchV1Api(api).read_namespaced_job_status, "hello", NS)
    assert typed.status.succeeded == 1 and [c.type for c in typed.status.conditions] == ["SuccessCriteriaMet", "Complete"]


async def _has_event(cluster: Cluster, name: str, reason: str) -> list[tuple[str, str, str]] | None:
    seen = await _events(cluster, name)
    return seen if any(r == reason for _, r, _ in seen) else None


async def test_an_indexed_job_makes_one_pod_per_index_with_its_index(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("indexed", completions=3, parallelism=3, completionMode="Indexed"), NS)

    pods = await eventually(lambda: _n_pods(cluster, "indexed", 3))

    indexes = sorted(job_indexes.index_of(p) for p in pods)
    assert indexes == [0, 1, 2]
    for pod in pods:
        index = job_indexes.index_of(pod)
        assert pod["metadata"]["generateName"] == f"indexed-{index}-"
        assert pod["metadata"]["labels"][job_indexes.INDEX_KEY] == str(index)
        assert pod["spec"]["hostname"] == f"indexed-{index}"
        assert {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}} \
            in pod["spec"]["containers"][0]["env"]
    for pod in pods[:2]:
        await _finish(cluster, pod, 0)

    async def two_done() -> dict[str, Any] | None:
        job = await cluster.client.get(JOBS, "indexed", NS)
        return job if job["status"].get("succeeded") == 2 else None
    job = await eventually(two_done)
    done = sorted(job_indexes.index_of(p) for p in pods[:2])
    assert job["status"]["completedIndexes"] == job_indexes.format(done) and job["status"]["active"] == 1

    await _finish(cluster, pods[2], 0)
    finished = await eventually(lambda: _job_with(cluster, "indexed", "Complete"))
    assert finished["status"]["completedIndexes"] == "0-2" and finished["status"]["succeeded"] == 3


async def test_failures_past_the_backoff_limit_fail_the_job(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("flaky", backoffLimit=1), NS)

    [first] = await eventually(lambda: _n_pods(cluster, "flaky", 1))
    await _finish(cluster, first, 1)

    async def replacement() -> dict[str, Any] | None:
        pods = await _n_pods(cluster, "flaky", 1)
        return next((p for p in pods or [] if p["metadata"]["name"] != first["metadata"]["name"]), None)
    second = await eventually(replacement)

    async def one_failure() -> dict[str, Any] | None:
        job = await cluster.client.get(JOBS, "flaky", NS)
        return job if job["status"].get("failed") == 1 else None
    job = await eventually(one_failure)
    assert _condition(job, "Failed") is None and _condition(job, "FailureTarget") is None

    await _finish(cluster, second, 1)
    failed = await eventually(lambda: _job_with(cluster, "flaky", "Failed"))

    assert [(c["type"], c["reason"], c["message"]) for c in failed["status"]["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")]
    assert failed["status"]["failed"] == 2 and "completionTime" not in failed["status"]
    seen = await eventually(lambda: _has_event(cluster, "flaky", "BackoffLimitExceeded"))
    assert ("Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit") in seen


async def test_a_fail_job_rule_of_the_pod_failure_policy_fails_the_job_at_once(cluster: Cluster) -> None:
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}}]}
    await cluster.client.create(JOBS, _job("policy", backoffLimit=6, podFailurePolicy=policy), NS)

    [first] = await eventually(lambda: _n_pods(cluster, "policy", 1))
    await _finish(cluster, first, 137, [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}])

    async def replacement() -> dict[str, Any] | None:
        pods = await _n_pods(cluster, "policy", 1)
        return next((p for p in pods or [] if p["metadata"]["name"] != first["metadata"]["name"]), None)
    second = await eventually(replacement)
    job = await cluster.client.get(JOBS, "policy", NS)
    assert "failed" not in job["status"]  # the disruption matched Ignore: not a failure

    await _finish(cluster, second, 42)
    failed = await eventually(lambda: _job_with(cluster, "policy", "Failed"))
    name = second["metadata"]["name"]
    message = f"Container main for pod default/{name} failed with exit code 42 matching FailJob rule at index 1"
    assert (_condition(failed, "Failed") or {}).get("reason") == "PodFailurePolicy"
    assert (_condition(failed, "Failed") or {}).get("message") == message
    assert failed["status"]["failed"] == 1


async def test_suspend_deletes_the_pods_and_resume_starts_again(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("pausing", parallelism=2, completions=2), NS)
    await eventually(lambda: _n_pods(cluster, "pausing", 2))

    async def running() -> dict[str, Any] | None:  # the start is recorded with the pods' count
        job = await cluster.client.get(JOBS, "pausing", NS)
        return job if (job.get("status") or {}).get("active") == 2 else None
    started = (await eventually(running))["status"]["startTime"]

    await cluster.client.patch(JOBS, "pausing", {"spec": {"suspend": True}}, NS)
    suspended = await eventually(lambda: _job_with(cluster, "pausing", "Suspended"))
    assert (_condition(suspended, "Suspended") or {}).get("reason") == "JobSuspended"
    assert (_condition(suspended, "Suspended") or {}).get("message") == "Job suspended"

    async def no_live_pods() -> bool:
        return all(p["metadata"].get("deletionTimestamp") for p in await _pods(cluster, "pausing"))
    await eventually(no_live_pods)

    await cluster.client.patch(JOBS, "pausing", {"spec": {"suspend": False}}, NS)
    pods = await eventually(lambda: _n_pods(cluster, "pausing", 2))

    async def resumed() -> dict[str, Any] | None:
        job = await cluster.client.get(JOBS, "pausing", NS)
        return job if (_condition(job, "Suspended") or {}).get("status") == "False" else None
    job = await eventually(resumed)
    condition = _condition(job, "Suspended") or {}
    assert (condition.get("status"), condition.get("reason"), condition.get("message")) == ("False", "JobResumed", "Job resumed")
    assert job["status"]["startTime"] >= started
    assert "failed" not in job["status"]  # pods removed by the suspension are not failures
    assert len(pods) == 2
    seen = await _events(cluster, "pausing")
    assert ("Normal", "Suspended", "Job suspended") in seen and ("Normal", "Resumed", "Job resumed") in seen


async def test_a_job_active_longer_than_its_deadline_fails(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("slow", activeDeadlineSeconds=1), NS)
    await eventually(lambda: _n_pods(cluster, "slow", 1))

    async def deadline_target() -> dict[str, Any] | None:
        return await _job_with(cluster, "slow", "FailureTarget")
    job = await eventually(deadline_target, timeout=10)
    condition = _condition(job, "FailureTarget") or {}
    assert (condition.get("reason"), condition.get("message")) == ("DeadlineExceeded", "Job was active longer than specified deadline")

    # The pod is being deleted; once the kubelet (here: the test) reports it gone, the Job is Failed.
    for pod in await _pods(cluster, "slow"):  # (unscheduled pods may already be gone)
        if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            await _finish(cluster, pod, 137, missing_ok=True)
    failed = await eventually(lambda: _job_with(cluster, "slow", "Failed"))
    assert (_condition(failed, "Failed") or {}).get("reason") == "DeadlineExceeded"


async def test_a_success_policy_completes_an_indexed_job_early(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("leader", completions=3, parallelism=3, completionMode="Indexed",
                                           successPolicy={"rules": [{"succeededIndexes": "0"}]}), NS)
    pods = await eventually(lambda: _n_pods(cluster, "leader", 3))
    [leader] = [p for p in pods if job_indexes.index_of(p) == 0]

    await _finish(cluster, leader, 0)
    met = await eventually(lambda: _job_with(cluster, "leader", "SuccessCriteriaMet"))
    condition = _condition(met, "SuccessCriteriaMet") or {}
    assert (condition.get("reason"), condition.get("message")) == ("SuccessPolicy", "Matched rules at index 0")

    # The other indexes' pods are deleted; any the API server still holds are reported stopped.
    for pod in await _pods(cluster, "leader"):
        if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            await _finish(cluster, pod, 137, missing_ok=True)
    done = await eventually(lambda: _job_with(cluster, "leader", "Complete"))
    assert (_condition(done, "Complete") or {}).get("reason") == "SuccessPolicy"
    assert done["status"]["completedIndexes"] == "0"


async def test_a_finished_job_with_a_ttl_is_deleted(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("shortlived", ttlSecondsAfterFinished=0), NS)
    [pod] = await eventually(lambda: _n_pods(cluster, "shortlived", 1))
    await _finish(cluster, pod, 0)

    async def gone() -> bool:
        try:
            await cluster.client.get(JOBS, "shortlived", NS)
        except errors.APIError as exc:
            return errors.is_not_found(exc)
        return False
    assert await eventually(gone, timeout=10)
    assert await _pods(cluster, "shortlived") == []  # foreground: the pods went first


async def test_deleting_a_running_job_lets_its_pods_go(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("doomed", parallelism=2, completions=2), NS)
    await eventually(lambda: _n_pods(cluster, "doomed", 2))

    await cluster.client.delete(JOBS, "doomed", NS, propagation_policy="Background")

    async def released() -> bool:
        return await _pods(cluster, "doomed") == []  # the finalizer does not hold them
    assert await eventually(released, timeout=10)


async def test_an_orphan_is_adopted_and_a_pod_whose_labels_go_is_released(cluster: Cluster) -> None:
    created = await cluster.client.create(JOBS, _job("adopter", parallelism=2, completions=2), NS)
    uid = created["metadata"]["uid"]
    pod = (await eventually(lambda: _n_pods(cluster, "adopter", 2)))[0]
    name = pod["metadata"]["name"]
    await cluster.client.patch(PODS, name, {"metadata": {"ownerReferences": None}}, NS, patch_type="merge")

    async def controller_uid() -> str:
        refs = (await cluster.client.get(PODS, name, NS))["metadata"].get("ownerReferences") or []
        return next((r["uid"] for r in refs if r.get("controller")), "")
    async def adopted() -> bool:
        return await controller_uid() == uid
    assert await eventually(adopted)
    assert job_pods.TRACKING_FINALIZER in (await cluster.client.get(PODS, name, NS))["metadata"]["finalizers"]

    await cluster.client.patch(PODS, name, {"metadata": {"labels": None}}, NS, patch_type="merge")
    async def released() -> bool:
        return await controller_uid() == ""
    assert await eventually(released)
    async def finalizer_gone() -> bool:
        return job_pods.TRACKING_FINALIZER not in ((await cluster.client.get(PODS, name, NS))["metadata"].get("finalizers") or [])
    assert await eventually(finalizer_gone)
    await cluster.client.delete(JOBS, "adopter", NS, propagation_policy="Background")
    await cluster.client.delete(PODS, name, NS)


async def _index_pods(cluster: Cluster, job: str, index: int) -> list[dict[str, Any]] | None:
    pods = [p for p in await _n_pods(cluster, job, 0) or [] if job_indexes.index_of(p) == index]
    return pods or None


async def test_an_index_past_its_backoff_limit_fails_alone_and_the_job_ends_with_failed_indexes(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("per-index", completions=2, parallelism=2, completionMode="Indexed",
                                           backoffLimitPerIndex=1), NS)
    [first] = await eventually(lambda: _index_pods(cluster, "per-index", 0))
    [other] = await eventually(lambda: _index_pods(cluster, "per-index", 1))
    assert first["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"] == "0"

    await _finish(cluster, first, 1)
    [retry] = await eventually(lambda: _index_pods(cluster, "per-index", 0))
    assert retry["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"] == "1"

    await _finish(cluster, retry, 1)

    async def index_failed() -> dict[str, Any] | None:
        job = await cluster.client.get(JOBS, "per-index", NS)
        return job if job["status"].get("failedIndexes") == "0" else None
    job = await eventually(index_failed)
    assert _condition(job, "FailureTarget") is None  # index 1 still runs

    await _finish(cluster, other, 0)
    failed = await eventually(lambda: _job_with(cluster, "per-index", "Failed"))
    condition = _condition(failed, "Failed") or {}
    assert (condition.get("reason"), condition.get("message")) == ("FailedIndexes", "Job has failed indexes")
    assert (failed["status"]["completedIndexes"], failed["status"]["failedIndexes"], failed["status"]["failed"]) == ("1", "0", 2)


async def test_more_failed_indexes_than_allowed_fail_the_job(cluster: Cluster) -> None:
    await cluster.client.create(JOBS, _job("max-failed", completions=3, parallelism=3, completionMode="Indexed",
                                           backoffLimitPerIndex=0, maxFailedIndexes=0), NS)
    [first] = await eventually(lambda: _index_pods(cluster, "max-failed", 0))
    await eventually(lambda: _n_pods(cluster, "max-failed", 3))

    await _finish(cluster, first, 1)
    target = await eventually(lambda: _job_with(cluster, "max-failed", "FailureTarget"))
    condition = _condition(target, "FailureTarget") or {}
    assert (condition.get("reason"), condition.get("message")) == (
        "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")

    for pod in await _pods(cluster, "max-failed"):
        if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            await _finish(cluster, pod, 137, missing_ok=True)
    failed = await eventually(lambda: _job_with(cluster, "max-failed", "Failed"))
    assert (_condition(failed, "Failed") or {}).get("reason") == "MaxFailedIndexesExceeded"


@pytest.mark.parametrize(("policy", "replaced_while_terminating"), [("Failed", False), ("TerminatingOrFailed", True)])
async def test_pod_replacement_policy_decides_when_a_deleted_pod_is_replaced(
        cluster: Cluster, policy: str, replaced_while_terminating: bool) -> None:
    name = f"replace-{policy.lower()}"
    await cluster.client.create(JOBS, _job(name, podReplacementPolicy=policy), NS)
    [first] = await eventually(lambda: _n_pods(cluster, name, 1))

    await cluster.client.delete(PODS, first["metadata"]["name"], NS)

    async def settled() -> dict[str, Any] | None:
        job = await cluster.client.get(JOBS, name, NS)
        status = job.get("status") or {}
        pods = await _n_pods(cluster, name, 1)
        if replaced_while_terminating:
            return job if pods and status.get("failed") == 1 else None
        return job if status.get("terminating") == 1 and status.get("active") is None else None
    job = await eventually(settled)

    if replaced_while_terminating:
        assert job["status"]["failed"] == 1  # a deleted pod counts as failed at once
        return
    assert await _n_pods(cluster, name, 1) is None and "failed" not in job["status"]
    await _finish(cluster, first, 137)  # the kubelet reports it stopped: now it is a failure
    await eventually(lambda: _n_pods(cluster, name, 1))

    async def counted() -> bool:
        return (await cluster.client.get(JOBS, name, NS))["status"].get("failed") == 1
    assert await eventually(counted)


async def test_a_fail_index_rule_fails_the_index_without_a_retry(cluster: Cluster) -> None:
    policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [5]}}]}
    await cluster.client.create(JOBS, _job("fail-index", completions=2, parallelism=2, completionMode="Indexed",
                                           backoffLimitPerIndex=3, podFailurePolicy=policy), NS)
    [zero] = await eventually(lambda: _index_pods(cluster, "fail-index", 0))
    [one] = await eventually(lambda: _index_pods(cluster, "fail-index", 1))

    await _finish(cluster, zero, 5)

    async def index_failed() -> dict[str, Any] | None:
        job = await cluster.client.get(JOBS, "fail-index", NS)
        return job if job["status"].get("failedIndexes") == "0" else None
    await eventually(index_failed)
    assert await _index_pods(cluster, "fail-index", 0) is None  # no replacement for a failed index

    await _finish(cluster, one, 0)
    failed = await eventually(lambda: _job_with(cluster, "fail-index", "Failed"))
    assert (_condition(failed, "Failed") or {}).get("reason") == "FailedIndexes"
