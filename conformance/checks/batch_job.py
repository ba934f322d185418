"""Job behaviours of upstream's test/e2e/apps/job.go. Pod commands are ones haru's simulated
runtime and a real busybox both run the same: `sleep`, `exit N`. Left out because haru fails them
(see the conformance helper's report): re-adopting orphans, and /status writes that keep metadata."""

from __future__ import annotations

from typing import Any

from client import errors
from conformance.checks._confcore_support import BUSYBOX, pods, running, template, update_retrying
from conformance.context import Context, Obj
from conformance.registry import conformance

BATCH = "batch/v1"
_LONG = ["sh", "-c", "sleep 3600"]


def _job(name: str, command: list[str], *, parallelism: int = 1, completions: int | None = 1, restart: str = "Never",
         **spec: Any) -> Obj:
    body: dict[str, Any] = {"parallelism": parallelism, "backoffLimit": 6,
                            "template": template({"job": name}, BUSYBOX, command=command, restart=restart, name="c")}
    if completions is not None:
        body["completions"] = completions
    body.update(spec)
    return {"apiVersion": BATCH, "kind": "Job", "metadata": {"name": name}, "spec": body}


async def _job_pods(ctx: Context, name: str) -> list[Obj]:
    return await pods(ctx, {"job-name": name})


async def _active(ctx: Context, name: str, count: int) -> list[Obj]:
    async def probe() -> list[Obj]:
        found = [p for p in await _job_pods(ctx, name) if running(p)]
        assert len(found) == count, f"{len(found)} running pods of job {name}, want {count}"
        return found
    return await ctx.eventually(probe, timeout=45, what=f"{count} active pods of job {name}")


async def _condition(ctx: Context, name: str, kind: str, reason: str | None = None, timeout: float = 45) -> Obj:
    async def probe() -> Obj:
        job = await ctx.get(BATCH, "Job", name)
        conditions = (job.get("status") or {}).get("conditions") or []
        found = [c for c in conditions if c.get("type") == kind and c.get("status") == "True"]
        assert found, f"job {name} conditions {[(c.get('type'), c.get('reason')) for c in conditions]}, want {kind}"
        if reason is not None:
            assert found[0].get("reason") == reason, f"the {kind} condition's reason is {found[0].get('reason')}, want {reason}"
        return job
    return await ctx.eventually(probe, timeout=timeout, what=f"job {name} {kind}")


@conformance("[sig-apps] Job should delete a job [Conformance]", area="batch")
async def job_delete(ctx: Context) -> None:
    name = ctx.name("foo")
    await ctx.create(_job(name, _LONG, parallelism=2, completions=None))
    await _active(ctx, name, 2)
    await ctx.delete(BATCH, "Job", name, propagation_policy="Foreground")

    async def gone() -> bool:
        try:
            await ctx.get(BATCH, "Job", name)
        except errors.APIError as err:
            return errors.is_not_found(err)
        return False
    await ctx.eventually(gone, timeout=45, what=f"job {name} deleted")
    left = await _job_pods(ctx, name)
    assert not left, f"foreground deletion of the job left pods {[p['metadata']['name'] for p in left]}"


@conformance("[sig-apps] Job should allow to use the pod failure policy on exit code to fail the job early "
             "[Conformance]", area="batch")
async def job_failure_policy_exit_code(ctx: Context) -> None:
    name = ctx.name("fail-early")
    await ctx.create(_job(name, ["sh", "-c", "exit 42"], backoffLimit=6, podFailurePolicy={"rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "c", "operator": "In", "values": [42]}}]}))
    job = await _condition(ctx, name, "Failed", "PodFailurePolicy")
    assert job["status"].get("failed") == 1, f"the job failed after {job['status'].get('failed')} pods, want 1 (early)"


@conformance("[sig-apps] Job should create pods for an Indexed job with completion indexes and specified hostname "
             "[Conformance]", area="batch")
async def job_indexed(ctx: Context) -> None:
    name = ctx.name("indexed-job")
    await ctx.create(_job(name, ["sh", "-c", "exit 0"], parallelism=2, completions=4, completionMode="Indexed"))
    job = await _condition(ctx, name, "Complete")
    assert job["status"].get("succeeded") == 4, f"succeeded {job['status'].get('succeeded')}, want 4"
    assert job["status"].get("completedIndexes") == "0-3", f"completedIndexes {job['status'].get('completedIndexes')}"
    found = (await ctx.list("v1", "Pod", label_selector=f"job-name={name}"))["items"]
    indexes = set()
    for pod in found:
        index = pod["metadata"].get("annotations", {}).get("batch.kubernetes.io/job-completion-index")
        assert index is not None, f"pod {pod['metadata']['name']} has no completion-index annotation"
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0].get("env") or []}
        assert "JOB_COMPLETION_INDEX" in env, f"pod {pod['metadata']['name']} has no JOB_COMPLETION_INDEX env"
        assert pod["spec"].get("hostname") == f"{name}-{index}", \
            f"pod of index {index} has hostname {pod['spec'].get('hostname')}, want {name}-{index}"
        indexes.add(int(index))
    assert indexes == {0, 1, 2, 3}, f"the pods' completion indexes are {sorted(indexes)}"


@conformance("[sig-apps] Job should manage the lifecycle of a job [Conformance]", area="batch")
async def job_lifecycle(ctx: Context) -> None:
    name = ctx.name("e2e-job")
    body = _job(name, _LONG, suspend=True)
    body["metadata"]["labels"] = {"e2e-job-label": name}
    await ctx.create(body)
    await ctx.patch(BATCH, "Job", name, {"metadata": {"labels": {name: "patched"}}})
    patched = await ctx.get(BATCH, "Job", name)
    assert patched["metadata"]["labels"].get(name) == "patched", "the label patch did not land"
    assert not await _job_pods(ctx, name), "a suspended job made pods"
    updated = await update_retrying(ctx, BATCH, "Job", name,
                                    lambda job: job["metadata"].setdefault("annotations", {}).update(updated="true"))
    assert updated["metadata"]["annotations"].get("updated") == "true", "the annotation update did not land"
    resource = ctx.api.resource(BATCH, "Job")
    everywhere = await ctx.api.list(resource, None, label_selector=f"e2e-job-label={name}")
    assert [j["metadata"]["name"] for j in everywhere["items"]] == [name], "listing jobs by label did not find one"
    await ctx.api.delete_collection(resource, ctx.namespace, label_selector=f"e2e-job-label={name}")

    async def gone() -> bool:
        listed = await ctx.list(BATCH, "Job", label_selector=f"e2e-job-label={name}")
        return not [j for j in listed["items"] if not j["metadata"].get("deletionTimestamp")]
    await ctx.eventually(gone, what="the jobs deleted by collection")
