"""ReplicaSet and ReplicationController behaviours of upstream's test/e2e/apps/replica_set.go and rc.go."""

from __future__ import annotations

from client import errors
from conformance.checks._confcore_support import (APPS, HTTPD, check_status_subresource, owner_uids, running_pods,
                                                  status_reaches, template, update_retrying, workload)
from conformance.context import Context, Obj
from conformance.registry import conformance


def _rc(name: str, labels: dict[str, str], replicas: int) -> Obj:
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name, "labels": dict(labels)},
            "spec": {"replicas": replicas, "selector": dict(labels), "template": template(labels)}}


def _bare_pod(name: str, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": dict(labels)},
            "spec": template(labels)["spec"]}


async def _adopted(ctx: Context, pod_name: str, owner_uid: str) -> Obj:
    async def probe() -> Obj:
        pod = await ctx.get("v1", "Pod", pod_name)
        assert owner_uid in owner_uids(pod), f"pod {pod_name} has owners {pod['metadata'].get('ownerReferences')}"
        return pod
    return await ctx.eventually(probe, what=f"pod {pod_name} adopted")


async def _released(ctx: Context, labels: dict[str, str], owner_uid: str, count: int) -> None:
    # Relabel one owned pod out of the selector: the controller drops its ownerReference and makes a new one.
    owned = await running_pods(ctx, labels, count)
    victim = owned[0]["metadata"]["name"]
    await ctx.patch("v1", "Pod", victim, {"metadata": {"labels": {"name": "not-matching-name"}}})

    async def probe() -> bool:
        pod = await ctx.get("v1", "Pod", victim)
        assert owner_uid not in owner_uids(pod), f"pod {victim} still has its controller ownerReference"
        return True
    await ctx.eventually(probe, what=f"pod {victim} released")
    await running_pods(ctx, labels, count)


@conformance("[sig-apps] ReplicaSet Replace and Patch tests [Conformance]", area="apps")
async def replicaset_replace_and_patch(ctx: Context) -> None:
    name, labels = ctx.name("test-rs"), {"name": "sample-pod"}
    await ctx.create(workload("ReplicaSet", name, labels, 1))
    await running_pods(ctx, labels, 1)
    await update_retrying(ctx, APPS, "ReplicaSet", name, lambda rs: rs["spec"].update(replicas=2))
    await running_pods(ctx, labels, 2)
    await status_reaches(ctx, "ReplicaSet", name, {"replicas": 2, "readyReplicas": 2})
    patched = await ctx.patch(APPS, "ReplicaSet", name, {"spec": {"replicas": 3, "template": {"spec": {
        "containers": [{"name": "httpd", "image": HTTPD}]}}}}, patch_type="strategic")
    assert patched["spec"]["replicas"] == 3, "the patch did not set replicas"
    await running_pods(ctx, labels, 3)
    await status_reaches(ctx, "ReplicaSet", name, {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3})


@conformance("[sig-apps] ReplicaSet Replicaset should have a working scale subresource [Conformance]", area="apps")
async def replicaset_scale(ctx: Context) -> None:
    name, labels = ctx.name("test-rs"), {"name": "sample-pod"}
    await ctx.create(workload("ReplicaSet", name, labels, 1))
    await running_pods(ctx, labels, 1)
    await status_reaches(ctx, "ReplicaSet", name, {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1})
    scale = await ctx.get(APPS, "ReplicaSet", name, subresource="scale")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1, f"scale reads {scale.get('spec')}"
    assert scale["status"].get("selector") == "name=sample-pod", f"scale status {scale['status']}"
    updated = await update_retrying(ctx, APPS, "ReplicaSet", name, lambda s: s["spec"].update(replicas=2),
                                    subresource="scale")
    assert updated["spec"]["replicas"] == 2
    assert (await ctx.get(APPS, "ReplicaSet", name))["spec"]["replicas"] == 2, "spec.replicas did not follow"
    await ctx.patch(APPS, "ReplicaSet", name, {"spec": {"replicas": 4}}, subresource="scale")
    assert (await ctx.get(APPS, "ReplicaSet", name))["spec"]["replicas"] == 4, "spec.replicas did not follow the patch"
    await running_pods(ctx, labels, 4)


@conformance("[sig-apps] ReplicaSet should adopt matching pods on creation and release no longer matching pods "
             "[Conformance]", area="apps")
async def replicaset_adopt_release(ctx: Context) -> None:
    labels = {"name": "pod-adoption-release"}
    pod_name = ctx.name("pod-adoption-release")
    await ctx.create(_bare_pod(pod_name, labels))
    await running_pods(ctx, labels, 1)
    created = await ctx.create(workload("ReplicaSet", pod_name, labels, 1))
    await _adopted(ctx, pod_name, created["metadata"]["uid"])
    await _released(ctx, labels, created["metadata"]["uid"], 1)


@conformance("[sig-apps] ReplicaSet should list and delete a collection of ReplicaSets [Conformance]", area="apps")
async def replicaset_collection(ctx: Context) -> None:
    labels = {"e2e": "rs-collection"}
    name = ctx.name("test-rs")
    await ctx.create(workload("ReplicaSet", name, labels, 1))
    await running_pods(ctx, labels, 1)
    resource = ctx.api.resource(APPS, "ReplicaSet")
    everywhere = await ctx.api.list(resource, None, label_selector="e2e=rs-collection")
    assert [rs["metadata"]["name"] for rs in everywhere["items"] if rs["metadata"]["namespace"] == ctx.namespace] \
        == [name], "listing ReplicaSets in all namespaces by label did not find it"
    await ctx.api.delete_collection(resource, ctx.namespace, label_selector="e2e=rs-collection")

    async def gone() -> bool:
        return not (await ctx.list(APPS, "ReplicaSet", label_selector="e2e=rs-collection"))["items"]
    await ctx.eventually(gone, what="the ReplicaSets deleted by collection")


@conformance("[sig-apps] ReplicaSet should validate Replicaset Status endpoints [Conformance]", area="apps")
async def replicaset_status(ctx: Context) -> None:
    name = ctx.name("test-rs")
    await ctx.create(workload("ReplicaSet", name, {"name": "sample-pod"}, 1))
    await status_reaches(ctx, "ReplicaSet", name, {"replicas": 1, "readyReplicas": 1})
    await check_status_subresource(ctx, "ReplicaSet", name)


@conformance("[sig-apps] ReplicationController should adopt matching pods on creation [Conformance]", area="apps")
async def rc_adopt(ctx: Context) -> None:
    labels = {"name": "pod-adoption"}
    pod_name = ctx.name("pod-adoption")
    await ctx.create(_bare_pod(pod_name, labels))
    await running_pods(ctx, labels, 1)
    created = await ctx.create(_rc(pod_name, labels, 1))
    await _adopted(ctx, pod_name, created["metadata"]["uid"])
    await running_pods(ctx, labels, 1)


@conformance("[sig-apps] ReplicationController should release no longer matching pods [Conformance]", area="apps")
async def rc_release(ctx: Context) -> None:
    labels = {"name": "pod-release"}
    created = await ctx.create(_rc(ctx.name("pod-release"), labels, 1))
    await _released(ctx, labels, created["metadata"]["uid"], 1)


@conformance("[sig-apps] ReplicationController should get and update a ReplicationController scale [Conformance]",
             area="apps")
async def rc_scale(ctx: Context) -> None:
    name, labels = ctx.name("e2e-rc"), {"name": "e2e-rc-pods"}
    await ctx.create(_rc(name, labels, 1))
    await status_reaches(ctx, "ReplicationController", name, {"replicas": 1, "readyReplicas": 1}, api_version="v1")
    scale = await ctx.get("v1", "ReplicationController", name, subresource="scale")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1, f"scale reads {scale.get('spec')}"
    await update_retrying(ctx, "v1", "ReplicationController", name, lambda s: s["spec"].update(replicas=2),
                          subresource="scale")
    await status_reaches(ctx, "ReplicationController", name, {"replicas": 2, "readyReplicas": 2}, api_version="v1")
    assert (await ctx.get("v1", "ReplicationController", name))["spec"]["replicas"] == 2


@conformance("[sig-apps] ReplicationController should surface a failure condition on a common issue like exceeded "
             "quota [Conformance]", area="apps")
async def rc_exceeded_quota(ctx: Context) -> None:
    name = ctx.name("condition-test")
    await ctx.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name},
                      "spec": {"hard": {"pods": "2"}}})

    async def quota_counted() -> bool:
        quota = await ctx.get("v1", "ResourceQuota", name)
        return (quota.get("status") or {}).get("hard", {}).get("pods") == "2"
    await ctx.eventually(quota_counted, what="the ResourceQuota's status.hard")
    await ctx.create(_rc(name, {"name": name}, 3))

    async def failure_condition() -> Obj:
        rc = await ctx.get("v1", "ReplicationController", name)
        conditions = (rc.get("status") or {}).get("conditions") or []
        found = [c for c in conditions if c.get("type") == "ReplicaFailure" and c.get("status") == "True"]
        assert found, f"no ReplicaFailure condition yet: {conditions}"
        return rc
    await ctx.eventually(failure_condition, what="a ReplicaFailure condition on the ReplicationController")
    await ctx.patch("v1", "ReplicationController", name, {"spec": {"replicas": 2}})

    async def condition_cleared() -> bool:
        rc = await ctx.get("v1", "ReplicationController", name)
        conditions = (rc.get("status") or {}).get("conditions") or []
        assert not [c for c in conditions if c.get("type") == "ReplicaFailure"], f"still {conditions}"
        return True
    await ctx.eventually(condition_cleared, what="the ReplicaFailure condition removed after scaling to the quota")


@conformance("[sig-apps] ReplicationController should test the lifecycle of a ReplicationController [Conformance]",
             area="apps")
async def rc_lifecycle(ctx: Context) -> None:
    name, labels = ctx.name("rc-test"), {"test-rc-static": "true"}
    await ctx.create(_rc(name, labels, 1))
    await status_reaches(ctx, "ReplicationController", name, {"replicas": 1, "readyReplicas": 1,
                                                               "availableReplicas": 1}, api_version="v1")
    await ctx.patch("v1", "ReplicationController", name, {"metadata": {"labels": {"test-rc": "patched"}}})
    patched = await ctx.get("v1", "ReplicationController", name)
    assert patched["metadata"]["labels"].get("test-rc") == "patched", "the label patch did not land"
    status = await ctx.get("v1", "ReplicationController", name, subresource="status")
    assert status["kind"] == "ReplicationController" and status["status"].get("replicas") == 1, \
        f"GET status answered {status.get('kind')} {status.get('status')}"
    await ctx.patch("v1", "ReplicationController", name, {"spec": {"replicas": 2}}, subresource="scale")
    await status_reaches(ctx, "ReplicationController", name, {"replicas": 2, "readyReplicas": 2}, api_version="v1")
    everywhere = await ctx.api.list(ctx.api.resource("v1", "ReplicationController"), None,
                                    label_selector="test-rc-static=true")
    assert name in [rc["metadata"]["name"] for rc in everywhere["items"]], "the RC was not found by label"
    await ctx.api.delete_collection(ctx.api.resource("v1", "ReplicationController"), ctx.namespace,
                                    label_selector="test-rc-static=true")
    try:
        await ctx.get("v1", "ReplicationController", name)
    except errors.APIError as err:
        assert errors.is_not_found(err), f"expected NotFound after deletecollection, got {err}"
    else:
        # Deletion may wait on the orphan/foreground finalizers; it must be going.
        rc = await ctx.get("v1", "ReplicationController", name)
        assert rc["metadata"].get("deletionTimestamp"), "the RC is neither gone nor being deleted"
