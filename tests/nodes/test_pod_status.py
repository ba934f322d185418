"""nodes/kubelet/pod_status.py: the whole status the kubelet would write, for fixed runtime states."""

from __future__ import annotations

from datetime import datetime, timezone

from nodes.kubelet import pod_status
from nodes.runtime.records import ContainerRecord, PodRecord, container_id

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
T1 = datetime(2026, 1, 2, 3, 4, 7, tzinfo=timezone.utc)
POD = {
    "metadata": {"name": "web", "namespace": "default", "uid": "u1", "generation": 2},
    "spec": {
        "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"},
                           {"name": "setup", "image": "busybox", "command": ["true"]}],
        "containers": [{"name": "b", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}},
                       {"name": "a", "image": "nginx"}],
        "readinessGates": [{"conditionType": "example.com/lb"}],
    },
    "status": {"qosClass": "Burstable", "conditions": [{"type": "example.com/lb", "status": "False"}]},
}


def _state() -> pod_status.PodState:
    record = PodRecord("u1", "default", "web", "n-0", pod_ip="10.128.0.2")
    for name, kind, image in (("proxy", "sidecar", "envoy"), ("setup", "init", "busybox"), ("b", "regular", "nginx"),
                              ("a", "regular", "nginx")):
        c = ContainerRecord(name, kind, image, state="running", container_id=container_id("u1", name, 0),
                            started_at=T0)
        record.containers[name] = c
    setup = record.containers["setup"]
    setup.state, setup.exit_code, setup.reason, setup.finished_at = "terminated", 0, "Completed", T0
    return pod_status.PodState(record, "127.0.0.1", start_time="2026-01-02T03:04:05Z", sandbox_ready=True)


def test_a_running_pod_with_a_sidecar_an_init_container_and_an_unmet_readiness_gate() -> None:
    status = pod_status.render(POD, _state(), T1)
    assert [(c["type"], c["status"], c.get("reason"), c.get("message")) for c in status["conditions"]] == [
        ("PodReadyToStartContainers", "True", None, None),
        ("Initialized", "True", None, None),
        ("Ready", "False", "ReadinessGatesNotReady",
         'the status of pod readiness gate "example.com/lb" is not "True", but False'),
        ("ContainersReady", "True", None, None),
        ("PodScheduled", "True", None, None),
    ]
    assert all(c["observedGeneration"] == 2 and c["lastTransitionTime"] == "2026-01-02T03:04:07Z"
               for c in status["conditions"])
    assert (status["phase"], status["observedGeneration"], status["qosClass"]) == ("Running", 2, "Burstable")
    assert (status["hostIPs"], status["podIPs"]) == ([{"ip": "127.0.0.1"}], [{"ip": "10.128.0.2"}])
    assert [c["name"] for c in status["containerStatuses"]] == ["a", "b"]  # sorted by name, as the kubelet
    assert [c["name"] for c in status["initContainerStatuses"]] == ["proxy", "setup"]  # spec order
    b = status["containerStatuses"][1]
    assert b == {
        "name": "b", "image": "docker.io/library/nginx:latest", "imageID": b["imageID"],
        "containerID": container_id("u1", "b", 0), "state": {"running": {"startedAt": "2026-01-02T03:04:05Z"}},
        "lastState": {}, "ready": True, "restartCount": 0, "started": True,
        "allocatedResources": {"cpu": "100m"}, "resources": {"requests": {"cpu": "100m"}},
        "user": {"linux": {"uid": 0, "gid": 0, "supplementalGroups": [0]}},
    }
    setup = status["initContainerStatuses"][1]
    assert setup["state"]["terminated"]["reason"] == "Completed" and setup["ready"] and not setup["started"]


def test_transition_times_stay_while_a_condition_keeps_its_status() -> None:
    state = _state()
    pod_status.render(POD, state, T0)
    later = pod_status.render(POD, state, T1)
    assert {c["lastTransitionTime"] for c in later["conditions"]} == {"2026-01-02T03:04:05Z"}
    state.record.containers["a"].state = "waiting"
    changed = pod_status.render(POD, state, T1)
    times = {c["type"]: c["lastTransitionTime"] for c in changed["conditions"]}
    assert times["ContainersReady"] == "2026-01-02T03:04:07Z" and times["Initialized"] == "2026-01-02T03:04:05Z"
    assert changed["phase"] == "Pending"  # a regular container that never ran is waiting: Pending, as getPhase


def test_a_crash_looping_container_counts_as_stopped_so_the_pod_stays_running() -> None:
    state = _state()
    b = state.record.containers["b"]
    b.state, b.reason, b.message, b.restart_count = "waiting", "CrashLoopBackOff", "back-off 10s ...", 1
    b.last_terminated = {"exitCode": 3, "reason": "Error"}
    status = pod_status.render(POD, state, T1)
    assert status["phase"] == "Running"
    entry = status["containerStatuses"][1]
    assert entry["state"] == {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s ..."}}
    assert entry["lastState"] == {"terminated": {"exitCode": 3, "reason": "Error"}} and entry["restartCount"] == 1
    ready = next(c for c in status["conditions"] if c["type"] == "ContainersReady")
    assert (ready["reason"], ready["message"]) == ("ContainersNotReady", "containers with unready status: [b]")
