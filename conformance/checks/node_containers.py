"""Container behaviours of upstream's test/e2e/common/node (init_container.go, kubelet.go) that the
hollow kubelets' simulated runtime really shows: init containers run to completion before the app
containers, a failing init container fails a RestartNever pod without starting its app, and a
command's stdout reaches the pod's log."""

from __future__ import annotations

from conformance.checks._confupstream_support import pod, pod_log, wait_phase
from conformance.context import Context, Obj
from conformance.registry import conformance

BUSYBOX = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"


def _with_inits(name: str, restart_policy: str, first_init: list[str], app: list[str]) -> Obj:
    manifest = pod(name, image=BUSYBOX, command=app, restart_policy=restart_policy, labels={"name": "foo"})
    manifest["spec"]["initContainers"] = [{"name": "init1", "image": BUSYBOX, "command": first_init},
                                          {"name": "init2", "image": BUSYBOX, "command": ["/bin/true"]}]
    return manifest


def _conditions(obj: Obj) -> dict[str, str]:
    return {c["type"]: c["status"] for c in obj.get("status", {}).get("conditions") or []}


def _inits_completed(obj: Obj) -> None:
    statuses = obj["status"].get("initContainerStatuses") or []
    assert [s["name"] for s in statuses] == ["init1", "init2"], f"init container statuses: {statuses}"
    for status in statuses:
        terminated = (status.get("state") or {}).get("terminated") or {}
        assert terminated.get("exitCode") == 0 and terminated.get("reason") == "Completed", \
            f"init container {status['name']} did not complete: {status}"
    assert _conditions(obj).get("Initialized") == "True", f"the pod is not Initialized: {_conditions(obj)}"


@conformance("[sig-node] InitContainer [NodeConformance] should invoke init containers on a RestartNever pod "
             "[Conformance]", area="node")
async def init_restart_never(ctx: Context) -> None:
    name = ctx.name("pod-init")
    await ctx.create(_with_inits(name, "Never", ["/bin/true"], ["/bin/true"]))
    done = await wait_phase(ctx, name, "Succeeded", "Failed")
    assert done["status"]["phase"] == "Succeeded", f"the pod ended {done['status']['phase']}"
    _inits_completed(done)
    app = done["status"]["containerStatuses"][0]
    assert app["state"]["terminated"]["exitCode"] == 0 and app["restartCount"] == 0, f"the app container: {app}"


@conformance("[sig-node] InitContainer [NodeConformance] should invoke init containers on a RestartAlways pod "
             "[Conformance]", area="node")
async def init_restart_always(ctx: Context) -> None:
    name = ctx.name("pod-init")
    await ctx.create(_with_inits(name, "Always", ["/bin/true"], ["sleep", "3600"]))
    running = await wait_phase(ctx, name, "Running")

    async def ready() -> Obj | None:
        got = await ctx.get("v1", "Pod", name)
        return got if _conditions(got).get("Ready") == "True" else None
    running = await ctx.eventually(ready, timeout=60, what="the pod to be Ready after its init containers")
    _inits_completed(running)
    app = running["status"]["containerStatuses"][0]
    assert (app.get("state") or {}).get("running"), f"the app container is not running: {app}"


@conformance("[sig-node] InitContainer [NodeConformance] should not start app containers and fail the pod if init "
             "containers fail on a RestartNever pod [Conformance]", area="node")
async def init_fails_restart_never(ctx: Context) -> None:
    name = ctx.name("pod-init")
    await ctx.create(_with_inits(name, "Never", ["/bin/false"], ["/bin/true"]))
    failed = await wait_phase(ctx, name, "Failed", "Succeeded")
    assert failed["status"]["phase"] == "Failed", f"the pod ended {failed['status']['phase']}"
    assert _conditions(failed).get("Initialized") == "False", f"conditions: {_conditions(failed)}"
    first = failed["status"]["initContainerStatuses"][0]
    assert (first.get("state") or {}).get("terminated", {}).get("exitCode") == 1, f"init1: {first}"
    second = failed["status"]["initContainerStatuses"][1]
    assert not (second.get("state") or {}).get("terminated") and not (second.get("state") or {}).get("running"), \
        f"init2 ran after init1 failed: {second}"
    app = failed["status"]["containerStatuses"][0]
    assert (app.get("state") or {}).get("waiting") is not None, f"the app container was started: {app}"


@conformance("[sig-node] Kubelet when scheduling a busybox command in a pod should print the output to logs "
             "[NodeConformance] [Conformance]", area="node")
async def output_to_logs(ctx: Context) -> None:
    name = ctx.name("busybox-scheduling")
    await ctx.create(pod(name, image=BUSYBOX, command=["/bin/sh", "-c", "echo Hello World; sleep 240"]))
    await wait_phase(ctx, name, "Running")

    async def logged() -> bool:
        return "Hello World" in await pod_log(ctx, name)
    await ctx.eventually(logged, what="the command's output in the pod's log")
