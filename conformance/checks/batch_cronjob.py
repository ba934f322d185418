"""CronJob behaviours of upstream's test/e2e/apps/cronjob.go that need no minute-long waits."""

from __future__ import annotations

from client import errors
from conformance.checks._confcore_support import BUSYBOX, template, update_retrying
from conformance.context import Context, Obj
from conformance.registry import conformance

BATCH = "batch/v1"


def _cron_job(name: str, label: str) -> Obj:
    return {"apiVersion": BATCH, "kind": "CronJob", "metadata": {"name": name, "labels": {"special-label": label}},
            "spec": {"schedule": "*/1 * * * ?", "suspend": True, "concurrencyPolicy": "Allow",
                     "jobTemplate": {"spec": {"template": template({"cj": name}, BUSYBOX, command=["sleep", "300"],
                                                                   restart="OnFailure", name="c")}}}}


@conformance("[sig-apps] CronJob should support CronJob API operations [Conformance]", area="batch")
async def cronjob_api(ctx: Context) -> None:
    label = ctx.namespace
    names = [ctx.name("test-cronjob") for _ in range(2)]
    created = [await ctx.create(_cron_job(n, label)) for n in names]
    assert all(c["spec"]["schedule"] == "*/1 * * * ?" for c in created)
    got = await ctx.get(BATCH, "CronJob", names[0])
    assert got["metadata"]["uid"] == created[0]["metadata"]["uid"]
    listed = await ctx.list(BATCH, "CronJob", label_selector=f"special-label={label}")
    assert sorted(c["metadata"]["name"] for c in listed["items"]) == sorted(names)
    resource = ctx.api.resource(BATCH, "CronJob")
    everywhere = await ctx.api.list(resource, None, label_selector=f"special-label={label}")
    assert len(everywhere["items"]) == 2, f"cluster-wide list found {len(everywhere['items'])}"
    # Watch from the list's resourceVersion sees the patch that follows.
    watch = ctx.api.watch(resource, ctx.namespace, resource_version=listed["metadata"]["resourceVersion"],
                          label_selector=f"special-label={label}")
    patched = await ctx.patch(BATCH, "CronJob", names[0], {"metadata": {"annotations": {"patched": "true"}}})
    assert patched["metadata"]["annotations"]["patched"] == "true"
    async for event in watch:
        if event["type"] == "MODIFIED" and event["object"]["metadata"]["name"] == names[0]:
            assert event["object"]["metadata"]["annotations"].get("patched") == "true"
            break
    await watch.aclose()
    updated = await update_retrying(ctx, BATCH, "CronJob", names[0],
                                    lambda cj: cj["metadata"]["annotations"].update(updated="true"))
    assert updated["metadata"]["annotations"]["updated"] == "true"
    # /status: get, update, patch.
    status = await ctx.get(BATCH, "CronJob", names[0], subresource="status")
    assert status["kind"] == "CronJob"
    written = await update_retrying(ctx, BATCH, "CronJob", names[0],
                                    lambda cj: cj["status"].update(lastScheduleTime="2026-01-01T00:00:00Z"),
                                    subresource="status")
    assert written["status"].get("lastScheduleTime") == "2026-01-01T00:00:00Z", f"PUT status answered {written['status']}"
    patched_status = await ctx.patch(BATCH, "CronJob", names[0], {"status": {"lastSuccessfulTime": "2026-01-01T00:00:01Z"}},
                                     subresource="status")
    assert patched_status["status"].get("lastSuccessfulTime") == "2026-01-01T00:00:01Z"
    await ctx.delete(BATCH, "CronJob", names[0])
    try:
        await ctx.get(BATCH, "CronJob", names[0])
    except errors.APIError as err:
        assert errors.is_not_found(err), f"expected NotFound after delete, got {err}"
    else:
        raise AssertionError("the CronJob is still there after delete")
    await ctx.api.delete_collection(resource, ctx.namespace, label_selector=f"special-label={label}")
    left = await ctx.list(BATCH, "CronJob", label_selector=f"special-label={label}")
    assert not left["items"], "deletecollection left CronJobs"
