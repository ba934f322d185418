"""StatefulSet behaviours of upstream's test/e2e/apps/statefulset.go that need no storage provisioner."""

from __future__ import annotations

from conformance.checks._confcore_support import (APPS, HTTPD, HTTPD_NEW, check_status_subresource, pods,
                                                  running_pods, status_reaches, update_retrying, workload)
from conformance.context import Context, Obj
from conformance.registry import conformance

_BASIC = "[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] "


def _stateful_set(ctx: Context, name: str, labels: dict[str, str], replicas: int, **spec: object) -> Obj:
    body = workload("StatefulSet", name, labels, replicas, serviceName="test", **spec)
    return body


async def _ready(ctx: Context, name: str, replicas: int, timeout: float = 45) -> Obj:
    async def probe() -> Obj:
        sts = await ctx.get(APPS, "StatefulSet", name)
        status = sts.get("status") or {}
        assert status.get("observedGeneration", 0) >= sts["metadata"]["generation"], "generation not observed yet"
        assert status.get("readyReplicas", 0) == replicas and status.get("replicas") == replicas, \
            f"status replicas {status.get('replicas')} ready {status.get('readyReplicas')}, want {replicas}"
        return sts
    return await ctx.eventually(probe, timeout=timeout, what=f"StatefulSet {name} with {replicas} ready")


def _image(pod: Obj) -> str:
    return pod["spec"]["containers"][0]["image"]


@conformance(_BASIC + "should have a working scale subresource [Conformance]", area="apps")
async def statefulset_scale(ctx: Context) -> None:
    name, labels = ctx.name("ss"), {"baz": "blah", "foo": "bar"}
    await ctx.create(_stateful_set(ctx, name, labels, 1))
    await _ready(ctx, name, 1)
    scale = await ctx.get(APPS, "StatefulSet", name, subresource="scale")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1, f"scale reads {scale.get('spec')}"
    updated = await update_retrying(ctx, APPS, "StatefulSet", name, lambda s: s["spec"].update(replicas=2),
                                    subresource="scale")
    assert updated["spec"]["replicas"] == 2
    assert (await ctx.get(APPS, "StatefulSet", name))["spec"]["replicas"] == 2, "spec.replicas did not follow"
    await ctx.patch(APPS, "StatefulSet", name, {"spec": {"replicas": 4}}, subresource="scale")
    assert (await ctx.get(APPS, "StatefulSet", name))["spec"]["replicas"] == 4, "spec.replicas did not follow the patch"


@conformance(_BASIC + "should list, patch and delete a collection of StatefulSets [Conformance]", area="apps")
async def statefulset_collection(ctx: Context) -> None:
    name, labels = ctx.name("test-ss"), {"test-ss": "true"}
    await ctx.create(_stateful_set(ctx, name, labels, 1))
    await _ready(ctx, name, 1)
    resource = ctx.api.resource(APPS, "StatefulSet")
    everywhere = await ctx.api.list(resource, None, label_selector="test-ss=true")
    assert name in [s["metadata"]["name"] for s in everywhere["items"] if s["metadata"]["namespace"] == ctx.namespace]
    patched = await ctx.patch(APPS, "StatefulSet", name, {"metadata": {"labels": {"test-ss": "patched"}},
                                                          "spec": {"template": {"spec": {"containers": [
                                                              {"name": "httpd", "image": HTTPD_NEW}]}}}},
                              patch_type="strategic")
    assert patched["metadata"]["labels"]["test-ss"] == "patched" and _image(patched["spec"]["template"]) == HTTPD_NEW
    await ctx.api.delete_collection(resource, ctx.namespace, label_selector="test-ss=patched")

    async def gone() -> bool:
        return not (await ctx.list(APPS, "StatefulSet"))["items"]
    await ctx.eventually(gone, what="the StatefulSets deleted by collection")


@conformance(_BASIC + "should validate Statefulset Status endpoints [Conformance]", area="apps")
async def statefulset_status(ctx: Context) -> None:
    name = ctx.name("test-ss")
    await ctx.create(_stateful_set(ctx, name, {"e2e": "testing"}, 1))
    await _ready(ctx, name, 1)
    await check_status_subresource(ctx, "StatefulSet", name)


@conformance(_BASIC + "should perform rolling updates and roll backs of template modifications [Conformance]",
             area="apps")
async def statefulset_rolling_update(ctx: Context) -> None:
    name, labels = ctx.name("ss2"), {"baz": "blah", "foo": "bar"}
    await ctx.create(_stateful_set(ctx, name, labels, 3))
    first = await _ready(ctx, name, 3)
    original = first["status"]["currentRevision"]
    assert original == first["status"]["updateRevision"], "a new StatefulSet has two revisions"
    await ctx.patch(APPS, "StatefulSet", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": HTTPD_NEW}]}}}}, patch_type="strategic")

    async def rolled(image: str, old_revision: str) -> Obj:
        sts = await ctx.get(APPS, "StatefulSet", name)
        status = sts.get("status") or {}
        assert status.get("updateRevision") != old_revision, "no new updateRevision"
        assert status.get("currentRevision") == status.get("updateRevision"), \
            f"currentRevision {status.get('currentRevision')} not yet updateRevision {status.get('updateRevision')}"
        current = await pods(ctx, labels)
        assert len(current) == 3 and all(_image(p) == image for p in current), \
            f"pods run {[_image(p) for p in current]}"
        assert all(p["metadata"]["labels"].get("controller-revision-hash") == status["updateRevision"]
                   for p in current), "a pod's controller-revision-hash is not the update revision"
        return sts

    updated = await ctx.eventually(lambda: rolled(HTTPD_NEW, original), timeout=45, what="the rolling update")
    await _ready(ctx, name, 3)
    # Back to the first template: the controller reuses the first revision instead of making a third.
    await ctx.patch(APPS, "StatefulSet", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": HTTPD}]}}}}, patch_type="strategic")
    back = await ctx.eventually(lambda: rolled(HTTPD, updated["status"]["updateRevision"]), timeout=45,
                                what="the roll back")
    assert back["status"]["updateRevision"] == original, \
        f"rolling back made revision {back['status']['updateRevision']} instead of reusing {original}"


@conformance(_BASIC + "should perform canary updates and phased rolling updates of template modifications "
             "[Conformance]", area="apps")
async def statefulset_partition(ctx: Context) -> None:
    name, labels = ctx.name("ss2"), {"baz": "blah", "foo": "bar"}
    await ctx.create(_stateful_set(ctx, name, labels, 3, updateStrategy={
        "type": "RollingUpdate", "rollingUpdate": {"partition": 3}}))
    await _ready(ctx, name, 3)
    await ctx.patch(APPS, "StatefulSet", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "httpd", "image": HTTPD_NEW}]}}}}, patch_type="strategic")

    async def images_are(want: dict[str, str]) -> bool:
        current = {p["metadata"]["name"]: _image(p) for p in await pods(ctx, labels)}
        assert current == want, f"pods run {current}, want {want}"
        return True

    names = [f"{name}-{i}" for i in range(3)]
    # The partition holds every ordinal below 3: nothing changes (checked once the controller saw the update).
    await status_reaches(ctx, "StatefulSet", name, {"observedGeneration": 2})
    await images_are({n: HTTPD for n in names})
    # Canary: partition 2 updates ordinal 2 only.
    await ctx.patch(APPS, "StatefulSet", name, {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}}})
    await ctx.eventually(lambda: images_are({names[0]: HTTPD, names[1]: HTTPD, names[2]: HTTPD_NEW}), timeout=45,
                         what="the canary (ordinal 2) updated")
    # A pod below the partition that is deleted comes back with the old template.
    await ctx.delete("v1", "Pod", names[0])
    await ctx.eventually(lambda: images_are({names[0]: HTTPD, names[1]: HTTPD, names[2]: HTTPD_NEW}), timeout=45,
                         what="the deleted pod restored at the current revision")
    await running_pods(ctx, labels, 3, timeout=45)
    # Phased: partition 0 updates the rest.
    await ctx.patch(APPS, "StatefulSet", name, {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}})
    await ctx.eventually(lambda: images_are({n: HTTPD_NEW for n in names}), timeout=45, what="every ordinal updated")
