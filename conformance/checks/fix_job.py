"""Job behaviours of upstream's test/e2e/apps/job.go that haru failed until the conformance
helper fixed haru: /status writes keep the metadata they carry (the per-kind status rule in
apiserver/strategy.py), and the Job controller adopts matching orphans and releases pods that stop
matching (controllers/job.py). Pods run `sleep` so they stay active on a real cluster and on haru.
"""

from __future__ import annotations

import time

from client import errors
from conformance.checks._confcore_support import BUSYBOX, pods, running, template, update_retrying
from conformance.context import Context, Obj
from conformance.registry import conformance

BATCH = "batch/v1"
_LONG = ["sh", "-c", "sleep 3600"]
_CUSTOM = "CustomConditionType"


def _job(name: str) -> Obj:
    return {"apiVersion": BATCH, "kind": "Job", "metadata": {"name": name},
            "spec": {"parallelism": 2, "completions": 4, "backoffLimit": 6,
                     "template": template({"job": name}, BUSYBOX, command=_LONG, restart="Never", name="c")}}


async def _running(ctx: Context, name: str, count: int) -> list[Obj]:
    async def probe() -> list[Obj]:
        found = [p for p in await pods(ctx, {"job": name}) if running(p)]
        assert len(found) == count, f"{len(found)} running pods of job {name}, want {count}"
        return found
    return await ctx.eventually(probe, timeout=45, what=f"{count} running pods of job {name}")


def _rfc3339(offset: float = 0) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset))


def _custom(job: Obj) -> Obj | None:
    return next((c for c in (job.get("status") or {}).get("conditions") or [] if c.get("type") == _CUSTOM), None)


def _controller_uid(pod: Obj) -> str:
    return next((r.get("uid") or "" for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")), "")


@conformance("[sig-apps] Job should apply changes to a job status [Conformance]", area="batch")
async def job_status_changes(ctx: Context) -> None:
    name = ctx.name("suspend-false-to-true")
    job = await ctx.create(_job(name))
    await _running(ctx, name, 2)

    now1 = _rfc3339()
    patch = {"metadata": {"annotations": {"patchedstatus": "true"}},
             "status": {"conditions": [{"type": _CUSTOM, "status": "True", "lastTransitionTime": now1}]}}
    patched = await ctx.patch(BATCH, "Job", name, patch, patch_type="strategic", subresource="status")
    condition = _custom(patched)
    assert condition is not None, f"the status patch did not add the {_CUSTOM} condition: {patched.get('status')}"
    assert condition.get("lastTransitionTime") == now1, f"the condition's lastTransitionTime is {condition}, want {now1}"
    annotations = patched["metadata"].get("annotations") or {}
    assert annotations.get("patchedstatus") == "true", f"the status patch lost its annotation: {annotations}"

    now2 = _rfc3339(1)

    def move(current: Obj) -> None:
        found = _custom(current)
        assert found is not None, f"the {_CUSTOM} condition is gone: {current.get('status')}"
        found["lastTransitionTime"] = now2
    updated = await update_retrying(ctx, BATCH, "Job", name, move, subresource="status")
    condition = _custom(updated)
    assert condition is not None and condition.get("lastTransitionTime") == now2, \
        f"the status update left {condition}, want lastTransitionTime {now2}"

    resource = ctx.api.resource(BATCH, "Job")
    status = await ctx.api.get(resource, name, ctx.namespace, "status")
    assert status["metadata"]["uid"] == job["metadata"]["uid"], \
        f"GET /status answered uid {status['metadata']['uid']}, want {job['metadata']['uid']}"


@conformance("[sig-apps] Job should adopt matching orphans and release non-matching pods [Conformance]", area="batch")
async def job_adopt_release(ctx: Context) -> None:
    name = ctx.name("adopt-release")
    job = await ctx.create(_job(name))
    uid = job["metadata"]["uid"]
    pod = (await _running(ctx, name, 2))[0]
    pod_name = pod["metadata"]["name"]

    def orphan(current: Obj) -> None:
        current["metadata"]["ownerReferences"] = None
    await update_retrying(ctx, "v1", "Pod", pod_name, orphan)

    async def adopted() -> bool:
        current = await ctx.get("v1", "Pod", pod_name)
        ref = next((r for r in current["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
        assert ref is not None, f"pod {pod_name} has no controller reference yet"
        assert (ref.get("kind"), ref.get("name"), ref.get("uid")) == ("Job", name, uid), \
            f"pod {pod_name} was adopted by {ref}, want Job {name} ({uid})"
        return True
    await ctx.eventually(adopted, timeout=30, what=f"job {name} re-adopts pod {pod_name}")

    def unlabel(current: Obj) -> None:
        current["metadata"]["labels"] = None
    await update_retrying(ctx, "v1", "Pod", pod_name, unlabel)

    async def released() -> bool:
        try:
            current = await ctx.get("v1", "Pod", pod_name)
        except errors.APIError as err:
            if errors.is_not_found(err):
                raise AssertionError(f"pod {pod_name} was deleted instead of released") from None
            raise
        assert not _controller_uid(current), f"pod {pod_name} is still controlled: {current['metadata'].get('ownerReferences')}"
        return True
    await ctx.eventually(released, timeout=30, what=f"job {name} releases pod {pod_name}")
