"""Deployment behaviours of upstream's test/e2e/apps/deployment.go, through the API."""

from __future__ import annotations

from conformance.checks._confcore_support import (APPS, HTTPD, HTTPD_NEW, check_status_subresource, owner_uids, pods,
                                                  rollout_complete, running_pods, update_retrying, workload)
from conformance.context import Context
from conformance.registry import conformance


async def _replica_sets(ctx: Context, deployment_uid: str) -> list[dict]:
    found = await ctx.list(APPS, "ReplicaSet")
    return [rs for rs in found["items"] if deployment_uid in owner_uids(rs)]


@conformance("[sig-apps] Deployment Deployment should have a working scale subresource [Conformance]", area="apps")
async def deployment_scale(ctx: Context) -> None:
    name, labels = ctx.name("test-new-deployment"), {"name": "httpd"}
    await ctx.create(workload("Deployment", name, labels, 1))
    await running_pods(ctx, labels, 1)
    await rollout_complete(ctx, name, 1)
    scale = await ctx.get(APPS, "Deployment", name, subresource="scale")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1, f"scale reads {scale.get('spec')}"
    updated = await update_retrying(ctx, APPS, "Deployment", name, lambda s: s["spec"].update(replicas=2),
                                    subresource="scale")
    assert updated["spec"]["replicas"] == 2, f"PUT scale answered {updated['spec']}"
    deployment = await ctx.get(APPS, "Deployment", name)
    assert deployment["spec"]["replicas"] == 2, "the Deployment's spec.replicas did not follow the scale update"
    await ctx.patch(APPS, "Deployment", name, {"spec": {"replicas": 4}}, subresource="scale")
    deployment = await ctx.get(APPS, "Deployment", name)
    assert deployment["spec"]["replicas"] == 4, "the Deployment's spec.replicas did not follow the scale patch"


@conformance("[sig-apps] Deployment RecreateDeployment should delete old pods and create new ones [Conformance]",
             area="apps")
async def deployment_recreate(ctx: Context) -> None:
    name, labels = ctx.name("test-recreate-deployment"), {"name": "sample-pod-3"}
    created = await ctx.create(workload("Deployment", name, labels, 1, strategy={"type": "Recreate"}))
    await rollout_complete(ctx, name, 1)
    old = await pods(ctx, labels)
    await ctx.patch(APPS, "Deployment", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": HTTPD_NEW}]}}}}, patch_type="strategic")
    # Recreate: every old pod is gone before a pod of the new template exists.
    old_names = {p["metadata"]["name"] for p in old}

    async def new_running() -> bool:
        current = await pods(ctx, labels)
        images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in current}
        mixed = old_names & set(images) and any(i == HTTPD_NEW for i in images.values())
        assert not mixed, f"old and new pods ran side by side under Recreate: {images}"
        return bool(current) and all(i == HTTPD_NEW for i in images.values()) and not old_names & set(images)
    await ctx.eventually(new_running, what="the new template's pods replacing the old ones")
    await rollout_complete(ctx, name, 1)
    sets = await _replica_sets(ctx, created["metadata"]["uid"])
    assert sorted(rs["spec"]["replicas"] for rs in sets) == [0, 1], \
        f"want the old ReplicaSet at 0 and the new at 1, got {[(rs['metadata']['name'], rs['spec']['replicas']) for rs in sets]}"


@conformance("[sig-apps] Deployment RollingUpdateDeployment should delete old pods and create new ones [Conformance]",
             area="apps")
async def deployment_rolling_update(ctx: Context) -> None:
    # A ReplicaSet with pods first; a Deployment selecting the same pods adopts it and rolls it over.
    labels = {"name": "sample-pod", "pod": "httpd"}
    rs_name = ctx.name("test-rolling-update-controller")
    await ctx.create(workload("ReplicaSet", rs_name, labels, 1))
    await running_pods(ctx, labels, 1)
    name = ctx.name("test-rolling-update-deployment")
    created = await ctx.create(workload("Deployment", name, labels, 1, image=HTTPD_NEW))
    await rollout_complete(ctx, name, 1)

    async def old_scaled_down() -> bool:
        sets = await _replica_sets(ctx, created["metadata"]["uid"])
        by_name = {rs["metadata"]["name"]: rs for rs in sets}
        assert rs_name in by_name, f"the Deployment did not adopt ReplicaSet {rs_name}: it owns {list(by_name)}"
        assert by_name[rs_name]["spec"]["replicas"] == 0, "the adopted old ReplicaSet was not scaled to 0"
        return len(sets) == 2
    await ctx.eventually(old_scaled_down, what="the old ReplicaSet adopted and scaled to 0")
    current = await pods(ctx, labels)
    assert current and all(p["spec"]["containers"][0]["image"] == HTTPD_NEW for p in current), \
        "pods of the old template remain"


@conformance("[sig-apps] Deployment deployment should delete old replica sets [Conformance]", area="apps")
async def deployment_history_limit(ctx: Context) -> None:
    labels = {"name": "cleanup-pod"}
    name = ctx.name("test-cleanup-deployment")
    created = await ctx.create(workload("Deployment", name, labels, 1, revisionHistoryLimit=0))
    await rollout_complete(ctx, name, 1)
    await ctx.patch(APPS, "Deployment", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": HTTPD_NEW}]}}}}, patch_type="strategic")
    await rollout_complete(ctx, name, 1)

    async def one_left() -> bool:
        sets = await _replica_sets(ctx, created["metadata"]["uid"])
        assert len(sets) == 1, f"revisionHistoryLimit 0 keeps {[rs['metadata']['name'] for rs in sets]}"
        return True
    await ctx.eventually(one_left, what="old ReplicaSets deleted (revisionHistoryLimit 0)")


@conformance("[sig-apps] Deployment should run the lifecycle of a Deployment [Conformance]", area="apps")
async def deployment_lifecycle(ctx: Context) -> None:
    labels = {"test-deployment-static": "true"}
    name = ctx.name("test-deployment")
    await ctx.create(workload("Deployment", name, labels, 1))
    await rollout_complete(ctx, name, 1)
    await ctx.patch(APPS, "Deployment", name, {"metadata": {"labels": {"test-deployment": "patched"}},
                                               "spec": {"replicas": 2, "template": {"spec": {
                                                   "terminationGracePeriodSeconds": 0}}}})
    patched = await ctx.get(APPS, "Deployment", name)
    assert patched["metadata"]["labels"].get("test-deployment") == "patched", "the label patch did not land"
    await rollout_complete(ctx, name, 2)
    everywhere = await ctx.api.list(ctx.api.resource(APPS, "Deployment"), None,
                                    label_selector="test-deployment-static=true")
    assert [d["metadata"]["name"] for d in everywhere["items"] if d["metadata"]["namespace"] == ctx.namespace] \
        == [name], "listing Deployments across namespaces by label did not find it"
    status = await ctx.get(APPS, "Deployment", name, subresource="status")
    assert status["status"].get("replicas") == 2, f"the status subresource reads {status['status']}"
    await ctx.patch(APPS, "Deployment", name, {"metadata": {"labels": {"test-deployment": "updated"}},
                                               "spec": {"replicas": 1}})
    await rollout_complete(ctx, name, 1)
    await ctx.delete(APPS, "Deployment", name)

    async def gone() -> bool:
        listed = await ctx.list(APPS, "Deployment", label_selector="test-deployment-static=true")
        return not listed["items"]
    await ctx.eventually(gone, what="the Deployment deleted")


@conformance("[sig-apps] Deployment should validate Deployment Status endpoints [Conformance]", area="apps")
async def deployment_status(ctx: Context) -> None:
    name = ctx.name("test-deployment")
    await ctx.create(workload("Deployment", name, {"e2e": "testing", "name": "httpd"}, 1))
    await check_status_subresource(ctx, "Deployment", name)


# A template that never becomes ready on any cluster: a real one cannot pull the image, and haru's
# simulated runtime (which pulls nothing) runs the command, which exits 1 over and over.
_BROKEN = {"name": "httpd", "image": "webserver:404", "command": ["sh", "-c", "exit 1"]}


@conformance("[sig-apps] Deployment deployment should support rollover [Conformance]", area="apps")
async def deployment_rollover(ctx: Context) -> None:
    labels = {"name": "rollover-pod"}
    rs_name = ctx.name("test-rollover-controller")
    await ctx.create(workload("ReplicaSet", rs_name, labels, 1))
    await running_pods(ctx, labels, 1)
    name = ctx.name("test-rollover-deployment")
    body = workload("Deployment", name, labels, 1, minReadySeconds=1, strategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}})
    body["spec"]["template"]["spec"]["containers"] = [_BROKEN]
    created = await ctx.create(body)

    async def stuck_rollout() -> bool:
        deployment = await ctx.get(APPS, "Deployment", name)
        status = deployment.get("status") or {}
        assert status.get("observedGeneration") == 1 and status.get("updatedReplicas") == 1, f"status {status}"
        return True
    await ctx.eventually(stuck_rollout, what="the first rollout started (its pod never ready)")
    # Roll over to a good template before the first rollout finishes.
    await ctx.patch(APPS, "Deployment", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": HTTPD_NEW, "command": None}]}}}})
    await rollout_complete(ctx, name, 1, timeout=45)

    async def only_newest() -> bool:
        sets = await _replica_sets(ctx, created["metadata"]["uid"])
        replicas = sorted((rs["spec"]["replicas"], rs["spec"]["template"]["spec"]["containers"][0]["image"]) for rs in sets)
        assert len(sets) == 3 and replicas == [(0, HTTPD), (0, "webserver:404"), (1, HTTPD_NEW)], \
            f"ReplicaSets (replicas, image): {replicas}"
        return True
    await ctx.eventually(only_newest, what="both old ReplicaSets scaled to 0")


@conformance("[sig-apps] Deployment deployment should support proportional scaling [Conformance]", area="apps")
async def deployment_proportional_scaling(ctx: Context) -> None:
    labels = {"name": "proportional"}
    name = ctx.name("webserver-deployment")
    created = await ctx.create(workload("Deployment", name, labels, 10, strategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}))
    await rollout_complete(ctx, name, 10, timeout=45)
    await ctx.patch(APPS, "Deployment", name, {"spec": {"template": {"spec": {"containers": [_BROKEN]}}}})

    async def sizes(want: list[int]) -> bool:
        sets = await _replica_sets(ctx, created["metadata"]["uid"])
        by_image = {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["spec"]["replicas"] for rs in sets}
        got = [by_image.get(HTTPD), by_image.get("webserver:404")]
        assert got == want, f"(first, new) ReplicaSet replicas {got}, want {want}"
        return True
    # maxUnavailable 2 leaves 8 of the first; maxSurge 3 allows 13 in all, so the new one gets 5.
    await ctx.eventually(lambda: sizes([8, 5]), timeout=45, what="the stalled rollout at 8 old + 5 new")
    await update_retrying(ctx, APPS, "Deployment", name, lambda d: d["spec"].update(replicas=30))
    # 30 + 3 surge = 33, shared in proportion to the current sizes: 20 and 13.
    await ctx.eventually(lambda: sizes([20, 13]), timeout=45, what="proportional scaling to 20 old + 13 new")
