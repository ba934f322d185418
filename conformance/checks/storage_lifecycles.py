"""Lifecycle tests of upstream's test/e2e/storage: CSIDriver (csi_inline.go), CSINode (csi_node.go),
StorageClass (storageclass.go), VolumeAttachment (volume_attachment.go), PersistentVolume and
PersistentVolumeClaim (persistent_volumes.go), and the CSIVolumeSource in the Pod API. Pure API:
create, read, patch, list, update, delete and deletecollection, each confirmed by a later read."""

from __future__ import annotations

from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import gone, pod
from conformance.context import Context, Obj
from conformance.registry import conformance

STORAGE = "storage.k8s.io/v1"


async def _delete_collection_and_confirm(ctx: Context, api_version: str, kind: str, selector: str,
                                         namespace: str | None = None) -> None:
    resource = ctx.api.resource(api_version, kind)
    await ctx.api.delete_collection(resource, namespace if resource.namespaced else None, label_selector=selector)

    async def emptied() -> bool:
        left = await ctx.api.list(resource, namespace if resource.namespaced else None, label_selector=selector)
        return not left["items"]
    await ctx.eventually(emptied, what=f"deletecollection to remove the labelled {kind}s")


async def _patch_label(ctx: Context, api_version: str, kind: str, name: str, key: str, value: str) -> Obj:
    patched = await ctx.patch(api_version, kind, name, {"metadata": {"labels": {key: value}}})
    assert patched["metadata"]["labels"].get(key) == value, f"the patched label {key} did not show on {kind} {name}"
    return patched


async def _update_label(ctx: Context, api_version: str, kind: str, name: str, key: str, value: str) -> Obj:
    async def attempt() -> Obj:
        current = await ctx.get(api_version, kind, name)
        current["metadata"].setdefault("labels", {})[key] = value
        return await ctx.update(current)
    updated = await retry_on_conflict(attempt)
    assert updated["metadata"]["labels"].get(key) == value, f"the updated label {key} did not show on {kind} {name}"
    return updated


@conformance("[sig-storage] CSIInlineVolumes should run through the lifecycle of a CSIDriver [Conformance]",
             area="storage")
async def csidriver_lifecycle(ctx: Context) -> None:
    selector = f"e2e-csidriver={ctx.namespace}"
    names = [f"inline-driver-{ctx.namespace}-{i}.e2e.example.com" for i in range(2)]
    for name in names:
        await ctx.create({"apiVersion": STORAGE, "kind": "CSIDriver",
                          "metadata": {"name": name, "labels": {"e2e-csidriver": ctx.namespace}},
                          "spec": {"attachRequired": True, "podInfoOnMount": True,
                                   "volumeLifecycleModes": ["Ephemeral"]}})
    await _patch_label(ctx, STORAGE, "CSIDriver", names[0], ctx.namespace, "patched")
    await _update_label(ctx, STORAGE, "CSIDriver", names[0], ctx.namespace, "updated")
    listed = await ctx.list(STORAGE, "CSIDriver", label_selector=selector)
    assert sorted(d["metadata"]["name"] for d in listed["items"]) == sorted(names), f"listing found {listed['items']}"
    await ctx.delete(STORAGE, "CSIDriver", names[0])
    await gone(ctx, STORAGE, "CSIDriver", names[0])
    await _delete_collection_and_confirm(ctx, STORAGE, "CSIDriver", selector)


@conformance("[sig-storage] CSINodes CSI Conformance should run through the lifecycle of a csinode [Conformance]",
             area="storage")
async def csinode_lifecycle(ctx: Context) -> None:
    name = f"e2e-csinode-{ctx.namespace}"
    selector = f"e2e-csinode={ctx.namespace}"

    def csinode() -> Obj:
        return {"apiVersion": STORAGE, "kind": "CSINode",
                "metadata": {"name": name, "labels": {"e2e-csinode": ctx.namespace}}, "spec": {"drivers": []}}
    await ctx.create(csinode())
    read = await ctx.get(STORAGE, "CSINode", name)
    assert read["metadata"]["name"] == name
    await _patch_label(ctx, STORAGE, "CSINode", name, "e2e-patched", "true")
    listed = await ctx.list(STORAGE, "CSINode", label_selector=selector)
    assert [n["metadata"]["name"] for n in listed["items"]] == [name], f"listing found {listed['items']}"
    await ctx.delete(STORAGE, "CSINode", name)
    await gone(ctx, STORAGE, "CSINode", name)
    await ctx.create(csinode())
    read = await ctx.get(STORAGE, "CSINode", name)
    assert read["metadata"]["name"] == name
    await _update_label(ctx, STORAGE, "CSINode", name, "e2e-updated", "true")
    await _delete_collection_and_confirm(ctx, STORAGE, "CSINode", selector)


@conformance("[sig-storage] StorageClasses CSI Conformance should run through the lifecycle of a StorageClass "
             "[Conformance]", area="storage")
async def storageclass_lifecycle(ctx: Context) -> None:
    selector = f"e2e-storageclass={ctx.namespace}"

    def storageclass(name: str) -> Obj:
        return {"apiVersion": STORAGE, "kind": "StorageClass",
                "metadata": {"name": name, "labels": {"e2e-storageclass": ctx.namespace}},
                "provisioner": "e2e-fake-provisioner", "reclaimPolicy": "Delete"}
    first = f"e2e-{ctx.namespace}-sc"
    created = await ctx.create(storageclass(first))
    assert created.get("volumeBindingMode") == "Immediate", f"volumeBindingMode was not defaulted: {created}"
    read = await ctx.get(STORAGE, "StorageClass", first)
    assert read["provisioner"] == "e2e-fake-provisioner"
    await _patch_label(ctx, STORAGE, "StorageClass", first, "e2e-patched", "true")
    await ctx.delete(STORAGE, "StorageClass", first)
    await gone(ctx, STORAGE, "StorageClass", first)
    second = f"e2e-{ctx.namespace}-sc2"
    await ctx.create(storageclass(second))
    await _update_label(ctx, STORAGE, "StorageClass", second, "e2e-updated", "true")
    await _delete_collection_and_confirm(ctx, STORAGE, "StorageClass", selector)


def _attachment(ctx: Context, name: str) -> Obj:
    return {"apiVersion": STORAGE, "kind": "VolumeAttachment",
            "metadata": {"name": name, "labels": {"e2e-va": ctx.namespace}},
            "spec": {"attacher": "e2e-test.storage.k8s.io", "nodeName": "e2e-fake-node",
                     "source": {"persistentVolumeName": f"pv-{name}"}}}


@conformance("[sig-storage] VolumeAttachment Conformance should run through the lifecycle of a VolumeAttachment "
             "[Conformance]", area="storage")
async def volumeattachment_lifecycle(ctx: Context) -> None:
    selector = f"e2e-va={ctx.namespace}"
    first = f"va-{ctx.namespace}-1"
    await ctx.create(_attachment(ctx, first))
    read = await ctx.get(STORAGE, "VolumeAttachment", first)
    assert read["metadata"]["name"] == first
    await _patch_label(ctx, STORAGE, "VolumeAttachment", first, "e2e-patched", "true")
    listed = await ctx.list(STORAGE, "VolumeAttachment", label_selector=f"{selector},e2e-patched=true")
    assert [v["metadata"]["name"] for v in listed["items"]] == [first], f"listing found {listed['items']}"
    await ctx.delete(STORAGE, "VolumeAttachment", first)
    await gone(ctx, STORAGE, "VolumeAttachment", first)
    second, third = f"va-{ctx.namespace}-2", f"va-{ctx.namespace}-3"
    await ctx.create(_attachment(ctx, second))
    await _update_label(ctx, STORAGE, "VolumeAttachment", second, "e2e-updated", "true")
    await ctx.delete(STORAGE, "VolumeAttachment", second)
    await gone(ctx, STORAGE, "VolumeAttachment", second)
    await ctx.create(_attachment(ctx, third))
    await _delete_collection_and_confirm(ctx, STORAGE, "VolumeAttachment", selector)


@conformance("[sig-storage] VolumeAttachment Conformance should apply changes to a volumeattachment status "
             "[Conformance]", area="storage")
async def volumeattachment_status(ctx: Context) -> None:
    name = f"va-{ctx.namespace}"
    await ctx.create(_attachment(ctx, name))
    await _patch_label(ctx, STORAGE, "VolumeAttachment", name, "e2e-patched", "true")
    status = await ctx.get(STORAGE, "VolumeAttachment", name, subresource="status")
    assert not (status.get("status") or {}).get("attached"), f"a new VolumeAttachment reads attached: {status}"
    patched = await ctx.patch(STORAGE, "VolumeAttachment", name, {"status": {"attached": True}},
                              subresource="status")
    assert patched["status"]["attached"] is True, f"the status patch did not show: {patched['status']}"
    patched["status"]["attached"] = False
    updated = await ctx.update(patched, subresource="status")
    assert updated["status"]["attached"] is False, f"the status update did not show: {updated['status']}"
    await ctx.delete(STORAGE, "VolumeAttachment", name)
    await gone(ctx, STORAGE, "VolumeAttachment", name)


def _pv(ctx: Context, name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {"e2e-pv-pool": ctx.namespace}},
            "spec": {"storageClassName": "e2e-manual", "accessModes": ["ReadWriteOnce"],
                     "capacity": {"storage": "3Mi"}, "persistentVolumeReclaimPolicy": "Retain",
                     "hostPath": {"path": "/tmp/e2e-pv"}}}


def _pvc(name: str, volume: str) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"storageClassName": "e2e-manual", "accessModes": ["ReadWriteOnce"], "volumeName": volume,
                     "resources": {"requests": {"storage": "1Mi"}}}}


@conformance("[sig-storage] PersistentVolumes CSI Conformance should run through the lifecycle of a PV and a PVC "
             "[Conformance]", area="storage")
async def pv_pvc_lifecycle(ctx: Context) -> None:
    selector = f"e2e-pv-pool={ctx.namespace}"
    pv_name, pvc_name = f"pv-{ctx.namespace}", ctx.name("pvc")
    pv = await ctx.create(_pv(ctx, pv_name))
    pvc = await ctx.create(_pvc(pvc_name, pv_name))
    pvs = await ctx.list("v1", "PersistentVolume", label_selector=selector)
    assert [p["metadata"]["name"] for p in pvs["items"]] == [pv_name], f"listing PVs found {pvs['items']}"
    pvcs = await ctx.list("v1", "PersistentVolumeClaim")
    assert [p["metadata"]["name"] for p in pvcs["items"]] == [pvc_name], f"listing PVCs found {pvcs['items']}"
    await _patch_label(ctx, "v1", "PersistentVolume", pv_name, "e2e-patched", "true")
    await _patch_label(ctx, "v1", "PersistentVolumeClaim", pvc_name, "e2e-patched", "true")
    read_pv = await ctx.get("v1", "PersistentVolume", pv_name)
    read_pvc = await ctx.get("v1", "PersistentVolumeClaim", pvc_name)
    assert read_pv["metadata"]["uid"] == pv["metadata"]["uid"] and read_pvc["metadata"]["uid"] == pvc["metadata"]["uid"]
    await ctx.delete("v1", "PersistentVolumeClaim", pvc_name)
    await gone(ctx, "v1", "PersistentVolumeClaim", pvc_name)
    await ctx.delete("v1", "PersistentVolume", pv_name)
    await gone(ctx, "v1", "PersistentVolume", pv_name)

    pv_name, pvc_name = f"pv-{ctx.namespace}-2", ctx.name("pvc")
    await ctx.create(_pv(ctx, pv_name))
    await ctx.create({**_pvc(pvc_name, pv_name), "metadata": {"name": pvc_name, "labels": {"e2e-pvc": "true"}}})
    await _update_label(ctx, "v1", "PersistentVolume", pv_name, "e2e-updated", "true")
    await _update_label(ctx, "v1", "PersistentVolumeClaim", pvc_name, "e2e-updated", "true")
    await _delete_collection_and_confirm(ctx, "v1", "PersistentVolumeClaim", "e2e-pvc=true", ctx.namespace)
    await _delete_collection_and_confirm(ctx, "v1", "PersistentVolume", selector)


@conformance("[sig-storage] PersistentVolumes CSI Conformance should apply changes to a pv/pvc status [Conformance]",
             area="storage")
async def pv_pvc_status(ctx: Context) -> None:
    pv_name, pvc_name = f"pv-{ctx.namespace}", ctx.name("pvc")
    await ctx.create(_pv(ctx, pv_name))
    await ctx.create(_pvc(pvc_name, pv_name))
    pvs = await ctx.list("v1", "PersistentVolume", label_selector=f"e2e-pv-pool={ctx.namespace}")
    assert len(pvs["items"]) == 1
    phases = {"Pending", "Bound", "Available", "Released", "Failed", "Lost"}

    async def phased(kind: str, name: str) -> str:
        status = (await ctx.get("v1", kind, name, subresource="status")).get("status") or {}
        return status.get("phase") in phases and status["phase"]
    await ctx.eventually(lambda: phased("PersistentVolumeClaim", pvc_name), what="a PVC phase")
    await ctx.eventually(lambda: phased("PersistentVolume", pv_name), what="a PV phase")
    condition = {"type": "StatusPatched", "status": "True", "reason": "E2E", "message": "Set from an e2e test"}
    patched = await ctx.patch("v1", "PersistentVolumeClaim", pvc_name, {"status": {"conditions": [condition]}},
                              subresource="status")
    assert any(c["type"] == "StatusPatched" for c in patched["status"].get("conditions") or []), \
        f"the PVC status patch did not show: {patched['status']}"
    patched_pv = await ctx.patch("v1", "PersistentVolume", pv_name,
                                 {"status": {"reason": "E2E patchedStatus", "message": "Updated by an e2e test"}},
                                 subresource="status")
    assert patched_pv["status"].get("reason") == "E2E patchedStatus", f"the PV status patch did not show: {patched_pv}"
    async def update_pvc() -> Obj:
        current = await ctx.get("v1", "PersistentVolumeClaim", pvc_name)
        current["status"]["conditions"] = [{**condition, "type": "StatusUpdated"}]
        return await ctx.update(current, subresource="status")
    updated = await retry_on_conflict(update_pvc)
    assert any(c["type"] == "StatusUpdated" for c in updated["status"].get("conditions") or []), \
        f"the PVC status update did not show: {updated['status']}"
    async def update_pv() -> Obj:
        current_pv = await ctx.get("v1", "PersistentVolume", pv_name)
        current_pv["status"].update({"reason": "E2E updatedStatus", "message": "Updated again by an e2e test"})
        return await ctx.update(current_pv, subresource="status")
    updated_pv = await retry_on_conflict(update_pv)
    assert updated_pv["status"]["reason"] == "E2E updatedStatus", f"the PV status update did not show: {updated_pv}"


@conformance("[sig-storage] CSIInlineVolumes should support CSIVolumeSource in Pod API [Conformance]", area="storage")
async def csi_volume_source_in_pod(ctx: Context) -> None:
    name = ctx.name("pod-csi-inline-volumes")
    manifest = pod(name, labels={"e2e-csi-inline": "true"})
    # Never scheduled: no node runs this driver; the test is about the API accepting the source.
    manifest["spec"]["nodeSelector"] = {"e2e.example.com/no-such-node": "true"}
    manifest["spec"]["volumes"] = [{"name": "vol", "csi": {"driver": "e2e.example.com",
                                                          "volumeAttributes": {"foo": "bar"}}}]
    manifest["spec"]["containers"][0]["volumeMounts"] = [{"name": "vol", "mountPath": "/mnt/vol"}]
    created = await ctx.create(manifest)
    assert created["spec"]["volumes"][0]["csi"]["driver"] == "e2e.example.com", f"the CSI source was lost: {created}"
    read = await ctx.get("v1", "Pod", name)
    assert read["spec"]["volumes"][0]["csi"]["volumeAttributes"] == {"foo": "bar"}
    listed = await ctx.list("v1", "Pod", label_selector="e2e-csi-inline=true")
    assert [p["metadata"]["name"] for p in listed["items"]] == [name]
    patched = await ctx.patch("v1", "Pod", name, {"metadata": {"labels": {"e2e-patched": "true"}}})
    assert patched["metadata"]["labels"]["e2e-patched"] == "true"
    await ctx.delete("v1", "Pod", name, grace_period_seconds=0)
    await gone(ctx, "v1", "Pod", name)
