"""DefaultPreemption's API calls against the real (in-process) API server: the DisruptionTarget
condition lands through pods/status, the delete is graceful with the victim's own grace period,
a victim already gone is no error, and a lower-priority nomination is cleared."""

from __future__ import annotations

from typing import Any

from client.kubeconfig import Config
from client.resources import PODS, PRIORITYCLASSES
from client.rest import RestClient
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import NodeToStatus
from scheduler.framework.status import Status
from scheduler.plugins.default_preemption import DefaultPreemption
from tests.scheduler.fakes import FilteringHandle, node

Obj = dict[str, Any]


def manifest(name: str, *, cpu: str, priority_class: str = "", node_name: str = "", grace: int = 45) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
                 "terminationGracePeriodSeconds": grace}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


async def priority_classes(client: RestClient) -> None:
    # Pods may not set spec.priority themselves: the Priority admission plugin fills it in.
    for name, value in (("low", 1), ("high", 100)):
        await client.create(PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                              "metadata": {"name": name}, "value": value})


async def test_victims_get_the_condition_and_a_graceful_delete(api: Any) -> None:
    client = RestClient(Config.for_url(api.url))
    try:
        await priority_classes(client)
        low = await client.create(PODS, manifest("low", cpu="3", priority_class="low", node_name="n1"))
        waiting_low = await client.create(PODS, manifest("waiting-low", cpu="1"))
        waiting_low = await client.patch(PODS, "waiting-low", {"status": {"nominatedNodeName": "n1"}}, "default",
                                         subresource="status")
        high = await client.create(PODS, manifest("high", cpu="2", priority_class="high"))
        assert (low["spec"]["priority"], high["spec"]["priority"]) == (1, 100)

        handle = FilteringHandle([node("n1", cpu="4")], [low], nominated={"n1": [waiting_low]})
        handle.client = client
        plugin = DefaultPreemption({}, handle, {"SchedulerAsyncPreemption": False})
        result, status = await plugin.post_filter(CycleState(), high,
                                                  NodeToStatus({"n1": Status.unschedulable("Insufficient cpu")}))
        assert status is None and result is not None and result.nominated_node_name == "n1"

        victim = await client.get(PODS, "low", "default")
        (condition,) = [c for c in victim["status"]["conditions"] if c["type"] == "DisruptionTarget"]
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
        assert victim["metadata"]["deletionTimestamp"]
        assert victim["metadata"]["deletionGracePeriodSeconds"] == 45  # its own grace period
        cleared = await client.get(PODS, "waiting-low", "default")
        assert not cleared["status"].get("nominatedNodeName")
        assert handle.events.events == [
            ("low", "Normal", "Preempted", f"Preempted by pod {high['metadata']['uid']} on node n1")]

        # The same victim again, now terminating: the executor leaves it alone.
        before = victim["metadata"]["resourceVersion"]
        await plugin.executor.prepare("n1", [victim], high, plugin.name)
        assert (await client.get(PODS, "low", "default"))["metadata"]["resourceVersion"] == before
    finally:
        await client.close()


async def test_a_victim_deleted_meanwhile_is_no_error(api: Any) -> None:
    client = RestClient(Config.for_url(api.url))
    try:
        gone = await client.create(PODS, manifest("gone", cpu="1"))  # unbound: removed at once
        await client.delete(PODS, "gone", "default")
        handle = FilteringHandle([node("n1")])
        handle.client = client
        plugin = DefaultPreemption({}, handle, {"SchedulerAsyncPreemption": False})
        high = manifest("high", cpu="1")
        high["metadata"]["uid"] = "uid-high"
        assert await plugin.executor.prepare("n1", [gone], high, plugin.name) is None
        assert handle.events.events == []
    finally:
        await client.close()
