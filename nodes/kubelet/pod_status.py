"""A pod's status as the kubelet renders it from what its runtime knows (`generateAPIPodStatus`).

`render(pod, state, now)` is pure. It returns phase, conditions, container statuses, IPs,
startTime, observedGeneration, and the qosClass the API server set, which it keeps.
- Conditions come in the kubelet's order (PodReadyToStartContainers, Initialized, Ready,
  ContainersReady, PodScheduled), with its reasons and messages. Conditions the kubelet does not
  own (readiness gates, DisruptionTarget) are left to the patch.
- Container statuses are sorted by name; init containers keep spec order.
- `phase(...)` is upstream's getPhase: a container waiting after a termination counts as stopped.
`PodState` is what `pod_worker.PodWorker` keeps beside the runtime record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from nodes.runtime.records import ContainerRecord, PodRecord, image_id, normalize_image, rfc3339

Obj = dict[str, Any]
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")


@dataclass
class PodState:
    record: PodRecord
    host_ip: str
    start_time: str = ""
    sandbox_ready: bool = False
    terminal: bool = False  # the kubelet will run nothing more in this pod (deleted, or done)
    reason: str = ""  # why the kubelet failed the whole pod (DeadlineExceeded)
    message: str = ""
    transitions: dict[str, tuple[str, str]] = field(default_factory=dict)  # type → (status, lastTransitionTime)
    resources_status: Callable[[Obj, Obj], list[Obj] | None] | None = None  # the DRA driver's health report


def init_containers(pod: Obj) -> list[Obj]:
    return list((pod.get("spec") or {}).get("initContainers") or [])


def is_sidecar(container: Obj) -> bool:
    return container.get("restartPolicy") == "Always"


def _stopped(record: ContainerRecord) -> bool:
    return record.state == "terminated" or (record.state == "waiting" and record.last_terminated is not None)


def initialized(pod: Obj, record: PodRecord) -> list[str]:
    """Names of the init containers not yet done (a sidecar is done once it has started)."""
    pending = []
    for spec in init_containers(pod):
        c = record.containers.get(spec["name"])
        if c is None:
            pending.append(spec["name"])
        elif is_sidecar(spec):
            if c.started_at is None:
                pending.append(spec["name"])
        elif not (c.state == "terminated" and c.exit_code == 0):
            pending.append(spec["name"])
    return pending


def phase(pod: Obj, state: PodState) -> str:
    spec = pod.get("spec") or {}
    policy = spec.get("restartPolicy") or "Always"
    record = state.record
    if initialized(pod, record):
        failed_init = any(
            (c := record.containers.get(s["name"])) is not None and c.state == "terminated" and c.exit_code
            for s in init_containers(pod) if not is_sidecar(s))
        if failed_init and (policy == "Never" or state.terminal):
            return "Failed"
        return "Failed" if state.terminal and state.sandbox_ready else "Pending"
    running = waiting = stopped = succeeded = 0
    for spec_c in spec.get("containers") or []:
        c = record.containers[spec_c["name"]]
        if c.state == "running":
            running += 1
        elif c.state == "terminated":
            stopped += 1
            succeeded += c.exit_code == 0
        elif c.last_terminated is not None:
            stopped += 1
        else:
            waiting += 1
    for spec_c in init_containers(pod):
        c = record.containers[spec_c["name"]]
        if is_sidecar(spec_c) and c.state == "running":
            running += 1  # a running sidecar keeps the pod Running; a stopped one does not count
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if state.terminal:
        return "Succeeded" if stopped == succeeded else "Failed"
    if policy == "Always":
        return "Running"
    if stopped == succeeded:
        return "Succeeded"
    return "Failed" if policy == "Never" else "Running"


def _ready(c: ContainerRecord) -> bool:
    # No probes are simulated: a running container is ready as soon as it has started.
    return c.state == "running"


def _condition(state: PodState, kind: str, status: str, now: str, generation: int | None,
               reason: str = "", message: str = "") -> Obj:
    previous = state.transitions.get(kind)
    since = previous[1] if previous and previous[0] == status else now
    state.transitions[kind] = (status, since)
    # reason and message are always sent: a null tells the strategic merge patch to drop a stale one.
    out: Obj = {"type": kind, "status": status, "lastTransitionTime": since, "reason": reason or None,
                "message": message or None}
    if generation is not None:
        out["observedGeneration"] = generation
    return out


def _gate_messages(pod: Obj) -> list[str]:
    have = {c.get("type"): c.get("status") for c in (pod.get("status") or {}).get("conditions") or []}
    messages = []
    for gate in (pod.get("spec") or {}).get("readinessGates") or []:
        kind = gate.get("conditionType")
        if kind not in have:
            messages.append(f'corresponding condition of pod readiness gate "{kind}" does not exist.')
        elif have[kind] != "True":
            messages.append(f'the status of pod readiness gate "{kind}" is not "True", but {have[kind]}')
    return messages


def conditions(pod: Obj, state: PodState, pod_phase: str, now: str) -> list[Obj]:
    generation = (pod.get("metadata") or {}).get("generation")
    record = state.record
    spec = pod.get("spec") or {}
    out = [_condition(state, "PodReadyToStartContainers", "True" if state.sandbox_ready else "False", now, generation)]
    pending = initialized(pod, record)
    if pod_phase == "Succeeded" and not pending:
        out.append(_condition(state, "Initialized", "True", now, generation, "PodCompleted"))
    elif pending:
        out.append(_condition(state, "Initialized", "False", now, generation, "ContainersNotInitialized",
                              f"containers with incomplete status: [{' '.join(pending)}]"))
    else:
        out.append(_condition(state, "Initialized", "True", now, generation))
    if pod_phase == "Succeeded":
        ready: tuple[str, str, str] = ("False", "PodCompleted", "")
    else:
        unready = [s["name"] for s in init_containers(pod) if is_sidecar(s)
                   and not _ready(record.containers[s["name"]])]
        unready += [s["name"] for s in spec.get("containers") or [] if not _ready(record.containers[s["name"]])]
        if unready:
            ready = ("False", "ContainersNotReady", f"containers with unready status: [{' '.join(unready)}]")
        else:
            ready = ("True", "", "")
    gates = _gate_messages(pod) if ready[0] == "True" else []
    if gates:
        out.append(_condition(state, "Ready", "False", now, generation, "ReadinessGatesNotReady", ", ".join(gates)))
    else:
        out.append(_condition(state, "Ready", *ready[:1], now, generation, ready[1], ready[2]))
    out.append(_condition(state, "ContainersReady", ready[0], now, generation, ready[1], ready[2]))
    out.append(_condition(state, "PodScheduled", "True", now, generation))
    return out


def _terminated(c: ContainerRecord) -> Obj:
    out: Obj = {"exitCode": c.exit_code, "reason": c.reason or ("Completed" if c.exit_code == 0 else "Error"),
                "startedAt": rfc3339(c.started_at) if c.started_at else None,
                "finishedAt": rfc3339(c.finished_at) if c.finished_at else None,
                "containerID": c.container_id}
    if c.message:
        out["message"] = c.message
    return out


def container_status(pod: Obj, spec: Obj, c: ContainerRecord, state: PodState, default_reason: str) -> Obj:
    image = spec.get("image") or ""
    out: Obj = {"name": c.name, "image": normalize_image(image) if image else "",
                "imageID": image_id(image) if c.container_id and image else ""}
    if c.container_id:
        out["containerID"] = c.container_id
    if c.state == "running":
        out["state"] = {"running": {"startedAt": rfc3339(c.started_at) if c.started_at else None}}
    elif c.state == "terminated":
        out["state"] = {"terminated": _terminated(c)}
    else:
        waiting: Obj = {"reason": c.reason or default_reason}
        if c.message:
            waiting["message"] = c.message
        out["state"] = {"waiting": waiting}
    out["lastState"] = {"terminated": dict(c.last_terminated)} if c.last_terminated else {}
    completed_init = c.kind == "init" and c.state == "terminated" and c.exit_code == 0
    out["ready"] = completed_init or _ready(c)
    out["restartCount"] = c.restart_count
    out["started"] = c.state == "running"
    resources = spec.get("resources") or {}
    requests = resources.get("requests") or {}
    if requests:
        out["allocatedResources"] = dict(requests)
    if requests or resources.get("limits"):
        out["resources"] = {k: dict(v) for k, v in resources.items() if k in ("requests", "limits") and v}
    if c.container_id:
        security = spec.get("securityContext") or {}
        pod_security = (pod.get("spec") or {}).get("securityContext") or {}
        uid = security.get("runAsUser", pod_security.get("runAsUser", 0))
        gid = security.get("runAsGroup", pod_security.get("runAsGroup", 0))
        groups = sorted({gid, *(pod_security.get("supplementalGroups") or [])})
        out["user"] = {"linux": {"uid": uid, "gid": gid, "supplementalGroups": groups}}
    mounts = [{"name": m["name"], "mountPath": m["mountPath"],
               **({"readOnly": True, "recursiveReadOnly": "Disabled"} if m.get("readOnly") else {})}
              for m in spec.get("volumeMounts") or [] if m.get("name") and m.get("mountPath")]
    if mounts and c.container_id:
        out["volumeMounts"] = mounts
    if (resources.get("claims")) and state.resources_status is not None:
        health = state.resources_status(pod, spec)
        if health:
            out["allocatedResourcesStatus"] = health
    return out


def render(pod: Obj, state: PodState, now: datetime) -> Obj:
    stamp = rfc3339(now)
    spec = pod.get("spec") or {}
    record = state.record
    pod_phase = phase(pod, state)
    status: Obj = {}
    generation = (pod.get("metadata") or {}).get("generation")
    if generation is not None:
        status["observedGeneration"] = generation
    if state.reason:
        pod_phase = "Failed"
        status["reason"], status["message"] = state.reason, state.message
    status["phase"] = pod_phase
    status["conditions"] = conditions(pod, state, pod_phase, stamp)
    status["hostIP"] = state.host_ip
    status["hostIPs"] = [{"ip": state.host_ip}]
    if record.pod_ip:
        status["podIP"] = record.pod_ip
        status["podIPs"] = [{"ip": record.pod_ip}]
    status["startTime"] = state.start_time
    inits = init_containers(pod)
    init_pending = bool(initialized(pod, record))
    if inits:
        status["initContainerStatuses"] = [
            container_status(pod, s, record.containers[s["name"]], state, "PodInitializing") for s in inits]
    regular = sorted(spec.get("containers") or [], key=lambda s: s["name"])
    status["containerStatuses"] = [
        container_status(pod, s, record.containers[s["name"]], state,
                         "PodInitializing" if init_pending else "ContainerCreating") for s in regular]
    qos = (pod.get("status") or {}).get("qosClass")
    if qos:
        status["qosClass"] = qos
    return status
