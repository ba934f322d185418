"""The scheduler end to end under `haru up`, through the real kubectl v1.36.3.

`haru up` runs the scheduler as a co-process: a pod made with `kubectl run` is bound and reaches
Running on a hollow node, with the `Scheduled` event. For a pod that fits nowhere, a second
scheduler runs in this test's process under its own schedulerName with a small test-local fit
plugin (NodeResourcesFit's reason text): the pod gets upstream's FailedScheduling event and the
PodScheduled=False condition with the `0/4 nodes are available: 4 Insufficient cpu.` message (its
profile has no PostFilter plugin, so nothing follows the Filter part). The last test reads the same
through haru up's own scheduler and its full default profile.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from client import kubeconfig
from client.rest import RestClient
from scheduler.config.types import POINTS, PluginRef
from scheduler.default_profile import default_config
from scheduler.features import defaults
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status
from scheduler.plugins import names
from scheduler.registry import REGISTRY
from scheduler.scheduler import Scheduler

Obj = dict[str, Any]


def wait_for(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


async def async_wait_for(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await asyncio.to_thread(check)
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.2)


def pod_json(haru: Any, name: str) -> Obj:
    return json.loads(haru.kubectl("get", "pod", name, "-o", "json").stdout)


def events_about(haru: Any, name: str) -> list[Obj]:
    listed = json.loads(haru.kubectl("get", "events.events.k8s.io", "-o", "json").stdout)
    return [e for e in listed["items"] if (e.get("regarding") or {}).get("name") == name]


def test_kubectl_run_is_scheduled_and_reaches_running_on_a_hollow_node(haru: Any) -> None:
    haru.kubectl("run", "web", "--image=nginx")
    running = wait_for(lambda: pod_json(haru, "web")["status"].get("phase") == "Running")
    pod = pod_json(haru, "web")
    assert running, pod["status"]
    node = pod["spec"]["nodeName"]
    assert node in haru.kubectl("get", "nodes", "-o", "name").stdout
    scheduled = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert scheduled["status"] == "True"
    events = wait_for(lambda: [e for e in events_about(haru, "web") if e["reason"] == "Scheduled"])
    assert events and events[0]["note"] == f"Successfully assigned default/web to {node}"
    assert events[0]["reportingController"] == "default-scheduler" and events[0]["action"] == "Binding"


class CpuFit:
    """Test-local stand-in for NodeResourcesFit's CPU check, with its reason text."""

    name = "TestCpuFit"

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        from scheduler.framework.resources import pod_requests

        want = pod_requests(pod).milli_cpu
        if want > node.allocatable.milli_cpu - node.requested.milli_cpu:
            return Status.unschedulable("Insufficient cpu")
        return None


async def test_a_pod_too_big_for_every_node_gets_the_real_failed_scheduling_message(haru: Any) -> None:
    # Only the queue sort, the binder and the test's fit check: the message is exactly the Filter part.
    config = default_config(defaults(), scheduler_name="fit-test-scheduler")
    refs = [PluginRef(names.PRIORITY_SORT), PluginRef(CpuFit.name), PluginRef(names.DEFAULT_BINDER)]
    config.profiles[0].points = {point: list(refs) for point in POINTS}
    registry = {**REGISTRY, CpuFit.name: lambda args, handle, features: CpuFit()}
    # The message counts nodes: wait until all of haru up's four have registered (the fixture
    # answers once the API server serves, which can be before the kubelets are in).
    await async_wait_for(lambda: len(haru.kubectl("get", "nodes", "-o", "name").stdout.split()) >= 4 or None)
    client = RestClient(kubeconfig.load(haru.kubeconfig), user_agent="haru-scheduler-test")
    sched = Scheduler(client, config, defaults(), registry=registry)
    await sched.start(sync_timeout=30)
    try:
        overrides = {"spec": {"schedulerName": "fit-test-scheduler",
                              "containers": [{"name": "big", "image": "nginx",
                                              "resources": {"requests": {"cpu": "1000"}}}]}}
        await asyncio.to_thread(haru.kubectl, "run", "big", "--image=nginx", f"--overrides={json.dumps(overrides)}")

        def condition() -> Obj | None:
            conds = pod_json(haru, "big")["status"].get("conditions") or []
            return next((c for c in conds if c["type"] == "PodScheduled" and c.get("reason")), None)

        scheduled = await async_wait_for(condition)
        nodes = len(haru.kubectl("get", "nodes", "-o", "name").stdout.split())
        message = f"0/{nodes} nodes are available: {nodes} Insufficient cpu."
        assert scheduled is not None
        assert (scheduled["status"], scheduled["reason"], scheduled["message"]) == ("False", "Unschedulable", message)
        failed = await async_wait_for(lambda: [e for e in events_about(haru, "big") if e["reason"] == "FailedScheduling"])
        assert failed and failed[0]["note"] == message and failed[0]["type"] == "Warning"
        assert failed[0]["reportingController"] == "fit-test-scheduler" and failed[0]["action"] == "Scheduling"
        shown = await asyncio.to_thread(haru.kubectl, "get", "events.events.k8s.io")
        assert "FailedScheduling" in shown.stdout and message in shown.stdout
        assert pod_json(haru, "big")["spec"].get("nodeName") is None
    finally:
        await sched.stop()
        await client.close()


def test_the_python_client_sees_a_pod_it_created_scheduled_and_running(haru: Any) -> None:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=haru.kubeconfig)
    core = client.CoreV1Api(api_client)
    body = client.V1Pod(metadata=client.V1ObjectMeta(name="py-pod"),
                        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox",
                                                                             command=["sleep", "3600"])]))
    core.create_namespaced_pod("default", body)
    running = wait_for(lambda: core.read_namespaced_pod("py-pod", "default").status.phase == "Running")
    pod = core.read_namespaced_pod("py-pod", "default")
    assert running, pod.status
    assert pod.spec.node_name and pod.spec.scheduler_name == "default-scheduler"
    scheduled = next(c for c in pod.status.conditions if c.type == "PodScheduled")
    assert scheduled.status == "True"
    events = client.EventsV1Api(api_client)
    found = wait_for(lambda: [e for e in events.list_namespaced_event("default").items
                              if e.regarding.name == "py-pod" and e.reason == "Scheduled"])
    assert found and found[0].note == f"Successfully assigned default/py-pod to {pod.spec.node_name}"
    assert found[0].reporting_controller == "default-scheduler"


@pytest.mark.skipif(names.NODE_RESOURCES_FIT not in REGISTRY or names.TAINT_TOLERATION not in REGISTRY,
                    reason="needs the NodeResourcesFit and TaintToleration plugins in the registry")
def test_haru_ups_scheduler_counts_each_reason_across_nodes_as_upstream(haru: Any) -> None:
    gpu_nodes = [n for n in haru.kubectl("get", "nodes", "-o", "name").stdout.split() if "gpu" in n]
    nodes = len(haru.kubectl("get", "nodes", "-o", "name").stdout.split())
    haru.kubectl("taint", "nodes", *[n.split("/")[1] for n in gpu_nodes], "k=v:NoSchedule")
    try:
        # 100 CPUs: more than a CPU node has; the GPU nodes have room but a taint the pod does not tolerate.
        overrides = {"spec": {"containers": [{"name": "huge", "image": "nginx",
                                              "resources": {"requests": {"cpu": "100"}}}]}}
        haru.kubectl("run", "huge", "--image=nginx", f"--overrides={json.dumps(overrides)}")
        failed = wait_for(lambda: [e for e in events_about(haru, "huge") if e["reason"] == "FailedScheduling"])
        cpu = nodes - len(gpu_nodes)
        expected = (f"0/{nodes} nodes are available: {cpu} Insufficient cpu, "
                    f"{len(gpu_nodes)} node(s) had untolerated taint(s).")
        # Then each PostFilter plugin's reason, joined as upstream joins them (each brings its own period).
        post = []
        if names.DYNAMIC_RESOURCES in REGISTRY:
            post.append("no new claims to deallocate")
        if names.DEFAULT_PREEMPTION in REGISTRY:
            # 100 CPUs exceed what a CPU node has at all, so removing pods cannot help anywhere.
            post.append(f"preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for scheduling.")
        if post:
            expected += " " + ", ".join(post)
        assert failed and failed[0]["note"] == expected, failed
        assert failed[0]["reportingController"] == "default-scheduler"
    finally:
        haru.kubectl("taint", "nodes", *[n.split("/")[1] for n in gpu_nodes], "k=v:NoSchedule-")
    # The taint gone, the pod fits a GPU node: the node update's hint brings it back from the unschedulable pool.
    assert wait_for(lambda: pod_json(haru, "huge")["spec"].get("nodeName", "").startswith("gpu"))
