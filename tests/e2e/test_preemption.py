"""Preemption end to end under `haru up`, judged by kubectl v1.36.3: a low-priority pod fills a node,
a high-priority pod that only fits there preempts it. The victim gets the DisruptionTarget
condition and is deleted gracefully, the preemptor runs on that node, and the events say so."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time
from typing import Any

import pytest

from scheduler.framework.resources import amount
from scheduler.plugins import names
from scheduler.registry import REGISTRY
from tests import realclients

pytestmark = pytest.mark.slow

# haru up runs a scheduler only with the core, and this scenario needs NodeResourcesFit's Filter.
NEEDS = "needs python -m scheduler and the NodeResourcesFit plugin (the sched-core and sched-plugins-basic work)"
NEEDS_MET = importlib.util.find_spec("scheduler.__main__") is not None and names.NODE_RESOURCES_FIT in REGISTRY


def until(check: Any, what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.2)


def failed_scheduling(haru: Any, pod: str) -> str:
    """The message of the pod's latest FailedScheduling event, "" while there is none."""
    listed = json.loads(haru.kubectl("get", "events.v1.events.k8s.io", "-o", "json").stdout)["items"]
    mine = [e for e in listed if e["regarding"].get("name") == pod and e["reason"] == "FailedScheduling"]
    return mine[-1]["note"] if mine else ""


def pod_manifest(name: str, priority_class: str, node: str, milli_cpu: int) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
        "spec": {"priorityClassName": priority_class, "terminationGracePeriodSeconds": 5,
                 "nodeSelector": {"kubernetes.io/hostname": node},
                 "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"],
                                 "resources": {"requests": {"cpu": f"{milli_cpu}m"}}}]}})


def watched_objects(text: str) -> list[dict[str, Any]]:
    """The objects of `kubectl get -w -o json --output-watch-events` (concatenated JSON documents)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while (at := text.find("{", at)) != -1:
        event, at = decoder.raw_decode(text, at)
        found.append(event["object"])
    return found


def check_preemption(haru: Any) -> None:
    def listed() -> list[dict[str, Any]]:
        return json.loads(haru.kubectl("get", "nodes", "-o", "json").stdout)["items"]

    # The GPU nodes are tainted (and a node not Ready yet is too): take a plain one.
    node = until(lambda: next((n for n in listed() if not n["spec"].get("taints")), None), "an untainted node")
    name = node["metadata"]["labels"]["kubernetes.io/hostname"]
    allocatable = amount("cpu", node["status"]["allocatable"]["cpu"])
    haru.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v})
        for n, v in (("low", 1000), ("high", 1000000))))
    haru.kubectl("apply", "-f", "-", input=json.dumps(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "never"},
         "value": 1000000, "preemptionPolicy": "Never"}))

    # The low pod takes three quarters of the node; the high one needs half, on that node only.
    haru.kubectl("apply", "-f", "-", input=pod_manifest("low", "low", name, allocatable * 3 // 4))
    until(lambda: haru.kubectl("get", "pod", "low", "-o", "jsonpath={.status.phase}").stdout == "Running",
          "the low pod to run")
    # Watch the victim from now on: its last states are gone once the deletion finishes.
    env = {**os.environ, "KUBECONFIG": haru.kubeconfig, "HOME": haru.data_dir}
    watch = subprocess.Popen([realclients.kubectl(), "get", "pod", "low", "--watch", "-o", "json",
                              "--output-watch-events"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
    try:
        haru.kubectl("apply", "-f", "-", input=pod_manifest("high", "high", name, allocatable // 2))
        haru.kubectl("wait", "--for=delete", "pod/low", "--timeout=60s")
        haru.kubectl("wait", "--for=jsonpath={.status.phase}=Running", "pod/high", "--timeout=60s")
    finally:
        watch.terminate()
        seen, _ = watch.communicate(timeout=10)

    states = watched_objects(seen)
    marked = [s for s in states if s["metadata"].get("deletionTimestamp")]
    assert marked and marked[0]["metadata"]["deletionGracePeriodSeconds"] == 5  # its own grace period
    conditions = [c for s in states for c in s["status"].get("conditions") or [] if c["type"] == "DisruptionTarget"]
    assert conditions, seen
    assert (conditions[0]["status"], conditions[0]["reason"], conditions[0]["message"]) == (
        "True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
    assert not any(c["type"] == "DisruptionTarget" for c in states[0]["status"].get("conditions") or [])

    high = json.loads(haru.kubectl("get", "pod", "high", "-o", "json").stdout)
    assert high["spec"]["nodeName"] == name
    # kubectl get events reads core/v1; the scheduler wrote events.k8s.io/v1, the same objects.
    events = haru.kubectl("get", "events").stdout
    assert any("Preempted" in line and "pod/low" in line and f"Preempted by pod {high['metadata']['uid']} on node "
               f"{name}" in line for line in events.splitlines()), events
    assert any("Scheduled" in line and "pod/high" in line and f"to {name}" in line for line in events.splitlines()), \
        events

    # Now nothing lower is left on the node: the next pods cannot preempt, with upstream's words why.
    nodes = listed()
    others = len(nodes) - 1
    haru.kubectl("apply", "-f", "-", input=pod_manifest("huge", "high", name, allocatable))
    haru.kubectl("apply", "-f", "-", input=pod_manifest("polite", "never", name, allocatable))
    filters = f"0/{len(nodes)} nodes are available: 1 Insufficient cpu, {others} node(s) didn't match Pod's node " \
              f"affinity/selector."
    # DynamicResources' PostFilter speaks first, even for a pod without claims, as upstream's does.
    if names.DYNAMIC_RESOURCES in REGISTRY:
        filters += " no new claims to deallocate,"
    assert until(lambda: failed_scheduling(haru, "huge"), "huge's FailedScheduling") == (
        f"{filters} preemption: 0/{len(nodes)} nodes are available: 1 No preemption victims found for incoming pod, "
        f"{others} Preemption is not helpful for scheduling.")
    assert until(lambda: failed_scheduling(haru, "polite"), "polite's FailedScheduling") == (
        f"{filters} preemption: not eligible due to preemptionPolicy=Never.")
    assert haru.kubectl("get", "pod", "high", "-o", "jsonpath={.status.phase}").stdout == "Running"


@pytest.mark.skipif(not NEEDS_MET, reason=NEEDS)
def test_a_lower_priority_pod_is_preempted(haru: Any) -> None:
    check_preemption(haru)  # SchedulerAsyncPreemption on, its 1.36 default: the evictions run in the background
