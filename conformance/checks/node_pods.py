"""Pod behaviours of upstream's test/e2e/common/node/pods.go, test/e2e/node/pods.go, runtimeclass.go
and kubelet.go that haru's hollow kubelets really show: pods scheduled and running, labels, status
writes, QoS class, host IP, collections, RuntimeClass admission, and a failing command's
terminated state."""

from __future__ import annotations

import ipaddress

from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import gone, pod, refused, run_pod, saw, wait_phase, watch_events
from conformance.context import Context, Obj
from conformance.registry import conformance


@conformance("[sig-node] Pods should be submitted and removed [NodeConformance] [Conformance]", area="node")
async def pod_submitted_removed(ctx: Context) -> None:
    pods = ctx.api.resource("v1", "Pod")
    name = ctx.name("pod-submit-remove")
    selector = f"name={name}"
    since = (await ctx.list("v1", "Pod"))["metadata"]["resourceVersion"]
    await ctx.create(pod(name, labels={"name": name}))
    found = await ctx.list("v1", "Pod", label_selector=selector)
    assert [p["metadata"]["name"] for p in found["items"]] == [name], "the new pod is not found by its label"
    await watch_events(ctx, pods, ctx.namespace, since, lambda evs: saw(evs, "ADDED", name), label_selector=selector)
    await wait_phase(ctx, name, "Running")
    since = (await ctx.list("v1", "Pod", label_selector=selector))["metadata"]["resourceVersion"]
    await ctx.delete("v1", "Pod", name, grace_period_seconds=30)
    events = await watch_events(ctx, pods, ctx.namespace, since, lambda evs: saw(evs, "DELETED", name),
                                label_selector=selector, timeout=45)
    assert any(e["object"]["metadata"].get("deletionTimestamp") for e in events), \
        "no event showed the pod's deletionTimestamp before it went"
    left = await ctx.list("v1", "Pod", label_selector=selector)
    assert not left["items"], "the deleted pod is still listed"


@conformance("[sig-node] Pods should be updated [NodeConformance] [Conformance]", area="node")
async def pod_updated(ctx: Context) -> None:
    name = ctx.name("pod-update")
    await run_pod(ctx, pod(name, labels={"name": name, "time": "1"}))

    async def relabel() -> Obj:
        current = await ctx.get("v1", "Pod", name)
        current["metadata"]["labels"]["time"] = "2"
        return await ctx.update(current)
    await retry_on_conflict(relabel)
    found = await ctx.list("v1", "Pod", label_selector="time=2")
    assert [p["metadata"]["name"] for p in found["items"]] == [name], "the updated label does not select the pod"


@conformance("[sig-node] Pods should delete a collection of pods [Conformance]", area="node")
async def pod_delete_collection(ctx: Context) -> None:
    for i in range(3):
        await ctx.create(pod(f"test-pod-{i + 1}", labels={"type": "Testing"}))
    found = await ctx.list("v1", "Pod", label_selector="type=Testing")
    assert len(found["items"]) == 3
    await ctx.api.delete_collection(ctx.api.resource("v1", "Pod"), ctx.namespace, label_selector="type=Testing")

    async def emptied() -> bool:
        return not (await ctx.list("v1", "Pod", label_selector="type=Testing"))["items"]
    await ctx.eventually(emptied, timeout=45, what="the labelled pods to be deleted")


@conformance("[sig-node] Pods should get a host IP [NodeConformance] [Conformance]", area="node")
async def pod_host_ip(ctx: Context) -> None:
    running = await run_pod(ctx, pod(ctx.name("pod-hostip")))
    host_ip = running["status"].get("hostIP")
    assert host_ip, f"a running pod has no hostIP: {running['status']}"
    ipaddress.ip_address(host_ip)
    assert [h["ip"] for h in running["status"].get("hostIPs") or []][:1] == [host_ip], \
        f"hostIPs does not start with hostIP: {running['status']}"


@conformance("[sig-node] Pods should patch a pod status [Conformance]", area="node")
async def pod_status_patch(ctx: Context) -> None:
    name = ctx.name("pod-status")
    await run_pod(ctx, pod(name))
    patched = await ctx.patch("v1", "Pod", name, {"status": {"conditions": [
        {"type": "StatusPatched", "status": "True"}]}}, patch_type="strategic", subresource="status")
    types = [c["type"] for c in patched["status"]["conditions"]]
    assert "StatusPatched" in types and "Ready" in types, f"the status patch did not merge into the conditions: {types}"


@conformance("[sig-node] Pods should run through the lifecycle of Pods and PodStatus [Conformance]", area="node")
async def pod_lifecycle(ctx: Context) -> None:
    pods = ctx.api.resource("v1", "Pod")
    name = ctx.name("pod-test")
    since = (await ctx.list("v1", "Pod"))["metadata"]["resourceVersion"]
    await ctx.create(pod(name, labels={"test-pod-static": "true"}))
    await watch_events(ctx, pods, ctx.namespace, since, lambda evs: saw(evs, "ADDED", name),
                       label_selector="test-pod-static=true")
    await wait_phase(ctx, name, "Running")
    patched = await ctx.patch("v1", "Pod", name, {"metadata": {"labels": {"test-pod": "patched"}},
                                                  "spec": {"containers": [{"name": "main",
                                                                           "image": "registry.k8s.io/pause:3.9"}]}},
                              patch_type="strategic")
    assert patched["metadata"]["labels"]["test-pod"] == "patched"
    assert patched["spec"]["containers"][0]["image"] == "registry.k8s.io/pause:3.9", "the image patch did not show"
    everywhere = await ctx.api.list(pods, None, label_selector="test-pod-static=true")
    assert name in [p["metadata"]["name"] for p in everywhere["items"]], "listing across namespaces misses the pod"

    async def replace_status() -> Obj:
        current = await ctx.get("v1", "Pod", name, subresource="status")
        current["status"]["conditions"] = [
            {**c, "status": "True"} if c["type"] == "Ready" else c for c in current["status"]["conditions"]]
        current["status"]["conditions"].append({"type": "PodStatusReplaced", "status": "True"})
        return await ctx.update(current, subresource="status")
    replaced = await retry_on_conflict(replace_status)
    assert "PodStatusReplaced" in [c["type"] for c in replaced["status"]["conditions"]], "the status update did not show"
    since = (await ctx.list("v1", "Pod"))["metadata"]["resourceVersion"]
    await ctx.api.delete_collection(pods, ctx.namespace, label_selector="test-pod-static=true")
    await watch_events(ctx, pods, ctx.namespace, since, lambda evs: saw(evs, "DELETED", name),
                       label_selector="test-pod-static=true", timeout=45)


@conformance("[sig-node] Pods Extended Pods Set QOS Class should be set on Pods with matching resource requests and "
             "limits for memory and cpu [Conformance]", area="node")
async def pod_qos_class(ctx: Context) -> None:
    manifest = pod(ctx.name("pod-qos-class"))
    manifest["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m", "memory": "100Mi"},
                                                      "limits": {"cpu": "100m", "memory": "100Mi"}}
    created = await ctx.create(manifest)
    assert created["status"].get("qosClass") == "Guaranteed", f"qosClass is {created['status'].get('qosClass')}"
    read = await ctx.get("v1", "Pod", created["metadata"]["name"])
    assert read["status"]["qosClass"] == "Guaranteed"


async def _runtime_class(ctx: Context, overhead: Obj | None = None) -> str:
    name = f"e2e-rc-{ctx.namespace}"
    body: Obj = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": "runc"}
    if overhead:
        body["overhead"] = {"podFixed": overhead}
    await ctx.create(body)
    return name


@conformance("[sig-node] RuntimeClass should reject a Pod requesting a non-existent RuntimeClass [NodeConformance] "
             "[Conformance]", area="node")
async def runtimeclass_missing(ctx: Context) -> None:
    await refused(ctx.create(pod(ctx.name("test-runtimeclass"), runtimeClassName=f"e2e-missing-{ctx.namespace}")),
                  403, "Forbidden", "a pod naming a RuntimeClass that does not exist")


@conformance("[sig-node] RuntimeClass should reject a Pod requesting a deleted RuntimeClass [NodeConformance] "
             "[Conformance]", area="node")
async def runtimeclass_deleted(ctx: Context) -> None:
    name = await _runtime_class(ctx)
    await ctx.delete("node.k8s.io/v1", "RuntimeClass", name)
    await gone(ctx, "node.k8s.io/v1", "RuntimeClass", name)
    await refused(ctx.create(pod(ctx.name("test-runtimeclass"), runtimeClassName=name)), 403, "Forbidden",
                  "a pod naming a deleted RuntimeClass")


@conformance("[sig-node] RuntimeClass should schedule a Pod requesting a RuntimeClass without PodOverhead "
             "[NodeConformance] [Conformance]", area="node")
async def runtimeclass_schedules(ctx: Context) -> None:
    name = await _runtime_class(ctx)
    created = await ctx.create(pod(ctx.name("test-runtimeclass"), runtimeClassName=name))

    async def scheduled() -> bool:
        return bool((await ctx.get("v1", "Pod", created["metadata"]["name"]))["spec"].get("nodeName"))
    await ctx.eventually(scheduled, timeout=60, what="the pod with a RuntimeClass to be scheduled")


@conformance("[sig-node] RuntimeClass should schedule a Pod requesting a RuntimeClass and initialize its Overhead "
             "[NodeConformance] [Conformance]", area="node")
async def runtimeclass_overhead(ctx: Context) -> None:
    overhead = {"cpu": "10m", "memory": "1Mi"}
    name = await _runtime_class(ctx, overhead)
    created = await ctx.create(pod(ctx.name("test-runtimeclass"), runtimeClassName=name))
    assert created["spec"].get("overhead") == overhead, f"the pod's overhead was not set: {created['spec'].get('overhead')}"

    async def scheduled() -> bool:
        return bool((await ctx.get("v1", "Pod", created["metadata"]["name"]))["spec"].get("nodeName"))
    await ctx.eventually(scheduled, timeout=60, what="the pod with a RuntimeClass overhead to be scheduled")


async def _failed_pod(ctx: Context) -> Obj:
    name = ctx.name("bin-false")
    await ctx.create(pod(name, image="registry.k8s.io/e2e-test-images/busybox:1.36.1-1", command=["/bin/false"],
                         restart_policy="Never"))

    async def terminated() -> Obj | None:
        got = await ctx.get("v1", "Pod", name)
        statuses = got.get("status", {}).get("containerStatuses") or []
        return got if statuses and (statuses[0].get("state") or {}).get("terminated") else None
    return await ctx.eventually(terminated, timeout=60, what="the failing container to terminate")


@conformance("[sig-node] Kubelet when scheduling a busybox command that always fails in a pod should have an "
             "terminated reason [NodeConformance] [Conformance]", area="node")
async def failed_pod_reason(ctx: Context) -> None:
    failed = await _failed_pod(ctx)
    statuses = failed["status"]["containerStatuses"]
    assert len(statuses) == 1, f"expected one container status, got {statuses}"
    terminated = statuses[0]["state"]["terminated"]
    assert terminated.get("reason") == "Error" and terminated.get("exitCode") == 1, \
        f"the terminated state should say Error with exit code 1: {terminated}"


@conformance("[sig-node] Kubelet when scheduling a busybox command that always fails in a pod should be possible to "
             "delete [NodeConformance] [Conformance]", area="node")
async def failed_pod_delete(ctx: Context) -> None:
    failed = await _failed_pod(ctx)
    await ctx.delete("v1", "Pod", failed["metadata"]["name"])
    await gone(ctx, "v1", "Pod", failed["metadata"]["name"], timeout=45)
