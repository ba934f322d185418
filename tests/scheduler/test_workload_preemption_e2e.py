"""A high-priority gang preempts a whole lower-priority gang (KEP-5710), under `haru up`, with kubectl v1.36.3.

The low gang (`disruptionMode: PodGroup`, its PodGroup at priority 100, its pods' own class at 1000)
fills every node; the high gang (PodGroup at 1000, pods at priority 0) needs one node's CPU per
pod. Preempting pod by pod would evict one low pod per high pod; the whole low gang goes instead.
Once with the PodGroup cycle (GangScheduling), once with the high gang's pods preempting one by one.
Two `kubectl get --watch` streams (pods and podgroups) are merged by resourceVersion (haru's one
revision counter) and replayed: after every observed change the low gang is either untouched and
wholly running, or its PodGroup already says DisruptionTarget (the whole group was chosen); at the
end no low pod is left and the high gang runs.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

import pytest

from tests import realclients
from tests.conftest import Cluster, start_haru, stop_haru

Obj = dict[str, Any]
# With GangScheduling the PodGroup cycle preempts for the whole high gang (delayed preemption: the
# victims go once the gang is proved to fit, and the gang waits, PodGroupScheduled=False saying
# so); without it the high gang's pods are scheduled, and preempt, one by one.
GATES = {"group cycle": "GenericWorkload=true,WorkloadAwarePreemption=true,GangScheduling=true",
         "pod by pod": "GenericWorkload=true,WorkloadAwarePreemption=true,GangScheduling=false"}


def manifest(*objects: Obj) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)})


def priority_class(name: str, value: int) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def pod_group(name: str, size: int, class_name: str) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": size}}, "disruptionMode": "PodGroup",
                     "priorityClassName": class_name}}


def member(name: str, gang: str, cpu: str, *, class_name: str = "", node_name: str = "") -> Obj:
    spec: Obj = {"schedulingGroup": {"podGroupName": gang}, "terminationGracePeriodSeconds": 1,
                 "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "infinity"],
                                 "resources": {"requests": {"cpu": cpu}}}]}
    if class_name:
        spec["priorityClassName"] = class_name
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"gang": gang}}, "spec": spec}


def wait_for(check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.3)


def pods(cluster: Cluster, gang: str) -> list[Obj]:
    return json.loads(cluster.kubectl("get", "pods", "-l", f"gang={gang}", "-o", "json").stdout)["items"]


class Watch:
    """`kubectl get … --watch --output-watch-events -o json`, its output read as it comes (a full pipe
    would stop kubectl mid-stream)."""

    def __init__(self, cluster: Cluster, *what: str) -> None:
        env = {"KUBECONFIG": cluster.kubeconfig, "HOME": cluster.data_dir}
        self.process = subprocess.Popen(
            [realclients.kubectl(), "get", *what, "--watch", "--output-watch-events", "-o", "json"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.chunks: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.chunks.append(line)

    def seen(self) -> int:
        """How many events have arrived so far."""
        return len(_decode("".join(self.chunks)))

    def stop(self) -> str:
        self.process.terminate()
        self.process.wait(timeout=15)
        self.reader.join(timeout=15)
        return "".join(self.chunks)


def watch(cluster: Cluster, *what: str) -> Watch:
    return Watch(cluster, *what)


def _decode(out: str) -> list[Obj]:
    """The complete JSON documents in `out` (a partial last one is left for later)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(out) and out[at].isspace():
            at += 1
        if at >= len(out):
            return found
        try:
            event, at = decoder.raw_decode(out, at)
        except json.JSONDecodeError:
            return found
        found.append(event)


def events_of(stream: Watch) -> list[Obj]:
    return _decode(stream.stop())


def is_disrupted(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    marked = any(c.get("type") == "DisruptionTarget" and c.get("status") == "True" for c in conditions)
    return marked or bool(pod["metadata"].get("deletionTimestamp"))


def group_marked(pod_group: Obj | None) -> bool:
    conditions = ((pod_group or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "DisruptionTarget" and c.get("status") == "True"
               and c.get("reason") == "PreemptionByScheduler" for c in conditions)


@pytest.fixture(params=sorted(GATES))
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    started = start_haru(str(tmp_path_factory.mktemp("haru")), "--feature-gates", GATES[request.param])
    started.mode = request.param  # type: ignore[attr-defined]
    try:
        yield started
    finally:
        stop_haru(started)


def test_a_high_priority_gang_preempts_the_whole_low_gang_never_part_of_it(cluster: Cluster) -> None:
    nodes = json.loads(cluster.kubectl("get", "nodes", "-o", "json").stdout)["items"]
    cluster.kubectl("apply", "-f", "-", input=manifest(priority_class("low", 100), priority_class("high", 1000)))

    # The low gang fills every node; its pods' own class is the high one, which must not count.
    low = [member(f"low-{i}", "low", n["status"]["allocatable"]["cpu"], class_name="high",
                  node_name=n["metadata"]["name"]) for i, n in enumerate(nodes)]
    cluster.kubectl("apply", "-f", "-", input=manifest(pod_group("low", len(low), "low"), *low))
    running = wait_for(lambda: all(p["status"].get("phase") == "Running" for p in pods(cluster, "low"))
                       and len(pods(cluster, "low")) == len(low))
    assert running, pods(cluster, "low")
    shown = cluster.kubectl("get", "podgroup", "low", "-o", "jsonpath={.spec.priority}").stdout
    assert shown == "100"

    pod_watch = watch(cluster, "pods", "-l", "gang=low")
    group_watch = watch(cluster, "podgroups")
    try:
        # Both watches have listed (their initial ADDED events are in) before the high gang exists.
        assert wait_for(lambda: pod_watch.seen() >= len(low) and group_watch.seen() >= 1)
        # The state the replay starts from, and the revision after which the watches' events count.
        listed = json.loads(cluster.kubectl("get", "pods", "-l", "gang=low", "-o", "json").stdout)
        the_group: Obj | None = json.loads(cluster.kubectl("get", "podgroup", "low", "-o", "json").stdout)
        # kubectl prints its List without a revision: the newest of the objects read is the baseline.
        baseline = max(int(o["metadata"]["resourceVersion"]) for o in [*listed["items"], the_group])
        state: dict[str, Obj] = {p["metadata"]["name"]: p for p in listed["items"]}
        assert len(state) == len(low) and not group_marked(the_group)
        # Two high pods of one node's CPU each: a pod-by-pod preemption would need two low pods.
        smallest = min(int(n["status"]["allocatable"]["cpu"]) for n in nodes)
        high = [member(f"high-{i}", "high", str(smallest)) for i in range(2)]
        cluster.kubectl("apply", "-f", "-", input=manifest(pod_group("high", 2, "high"), *high))
        gone = wait_for(lambda: pods(cluster, "low") == [], timeout=90)
        assert gone, [(p["metadata"]["name"], p["status"].get("phase")) for p in pods(cluster, "low")]
        bound = wait_for(lambda: all(p["status"].get("phase") == "Running" for p in pods(cluster, "high")), timeout=90)
        assert bound, [(p["metadata"]["name"], p["spec"].get("nodeName")) for p in pods(cluster, "high")]
        # The watch has caught up with what the GETs saw: every low pod's deletion is in it.
        wait_for(lambda: sum(e["type"] == "DELETED" for e in _decode("".join(pod_watch.chunks))) >= len(low))
    finally:
        pod_events, group_events = events_of(pod_watch), events_of(group_watch)

    # Replay both streams in revision order; check the invariant after every change.
    changes = [("pod", e) for e in pod_events] + [("group", e) for e in group_events]
    changes = [c for c in changes if int(c[1]["object"]["metadata"]["resourceVersion"]) > baseline]
    changes.sort(key=lambda c: int(c[1]["object"]["metadata"]["resourceVersion"]))
    assert changes, "the watches saw nothing after the high gang was made"
    seen_marked_group = False
    high_group_states: list[Obj] = []
    for kind, event in changes:
        obj = event["object"]
        if kind == "group":
            if obj["metadata"]["name"] != "low":
                high_group_states.append(obj)
                continue
            the_group = obj
            seen_marked_group = seen_marked_group or group_marked(obj)
            continue
        if event["type"] == "DELETED":
            state.pop(obj["metadata"]["name"], None)
        else:
            state[obj["metadata"]["name"]] = obj
        touched = [name for name, p in state.items() if is_disrupted(p)] + \
                  [name for name in (f"low-{i}" for i in range(len(low))) if name not in state and seen_marked_group]
        if touched or len(state) < len(low):
            assert group_marked(the_group), (f"low pods {sorted(touched)} disrupted or gone while the low "
                                             f"PodGroup is not marked: {the_group}")
        else:
            assert all(p["status"].get("phase") == "Running" for p in state.values())
    seen = [(e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"]) for e in pod_events]
    assert state == {} and seen_marked_group, str(seen)
    assert any(e["type"] == "DELETED" for e in pod_events)

    if cluster.mode == "group cycle":  # type: ignore[attr-defined]
        # The high gang waited for its victims, said so, and then passed Permit whole.
        said = [c for g in high_group_states for c in (g.get("status") or {}).get("conditions") or []
                if c["type"] == "PodGroupScheduled"]
        assert any(c["status"] == "False" and c["message"].startswith("waiting for preemption") for c in said), said
        assert said[-1]["status"] == "True", said
    group = json.loads(cluster.kubectl("get", "podgroup", "low", "-o", "json").stdout)
    condition = next(c for c in group["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (condition["status"], condition["reason"]) == ("True", "PreemptionByScheduler")
    preempted = json.loads(cluster.kubectl("get", "events.events.k8s.io", "-o", "json").stdout)["items"]
    assert {e["regarding"]["name"] for e in preempted if e.get("reason") == "Preempted"} == {p["metadata"]["name"]
                                                                                            for p in low}
