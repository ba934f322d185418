"""The Pod and PodTemplate printers (upstream `printPod`, `printPodTemplate`).

Owns the READY/STATUS/RESTARTS rules: sidecars (restartable init containers) count towards READY,
init progress shows as `Init:…`, the main containers are walked from last to first, `Completed`
with a still-running container turns back into `Running`/`NotReady`, deletion shows `Terminating`
(or `Unknown` for NodeLost), and finished pods carry a `Completed` row condition. Called through
`apiserver/printers/__init__.py` by `apiserver/tables.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers import cells
from apiserver.printers.printer import AGE, NAME, Column, Doc, Printer, col

POD_COLUMNS: tuple[Column, ...] = (
    NAME,
    col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    col("Status", "The aggregate status of the containers in this pod."),
    col("Restarts", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
    AGE,
    col("IP", Doc("core.v1.PodStatus", "podIP"), priority=1),
    col("Node", Doc("core.v1.PodSpec", "nodeName"), priority=1),
    col("Nominated Node", Doc("core.v1.PodStatus", "nominatedNodeName"), priority=1),
    col("Readiness Gates", Doc("core.v1.PodSpec", "readinessGates"), priority=1),
)


def _is_sidecar(spec: dict[str, Any] | None) -> bool:
    """Upstream `IsRestartableInitContainer`: an init container with restartPolicy Always."""
    return spec is not None and spec.get("restartPolicy") == "Always"


def _later(current: datetime | None, candidate: Any) -> datetime | None:
    """The later of two 'last termination' times; an unset time never wins."""
    t = cells.parse_time(candidate)
    if t is not None and (current is None or current < t):
        return t
    return current


def _condition_true(status: dict[str, Any], kind: str) -> bool:
    c = cells.condition(status.get("conditions"), kind)
    return c is not None and c.get("status") == "True"


def pod_summary(pod: dict[str, Any]) -> tuple[str, str, int, datetime | None]:
    """READY text, STATUS reason, restart count and the last restart time of one pod."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    init_specs = spec.get("initContainers") or []
    init_by_name = {c.get("name"): c for c in init_specs}
    total = len(spec.get("containers") or []) + sum(1 for c in init_specs if _is_sidecar(c))
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None

    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, cs in enumerate(init_statuses):
        state = cs.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        finished = cells.dig(cs, "lastState", "terminated", "finishedAt")
        restarts += cells.integer(cs.get("restartCount"))
        last_restart = _later(last_restart, finished)
        sidecar = _is_sidecar(init_by_name.get(cs.get("name")))
        if sidecar:
            sidecar_restarts += cells.integer(cs.get("restartCount"))
            last_sidecar_restart = _later(last_sidecar_restart, finished)
        if terminated is not None and cells.integer(terminated.get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started") is True:
            if cs.get("ready"):
                ready += 1
            continue
        if terminated is not None:
            if terminated.get("reason"):
                reason = "Init:" + terminated["reason"]
            elif cells.integer(terminated.get("signal")):
                reason = f"Init:Signal:{cells.integer(terminated.get('signal'))}"
            else:
                reason = f"Init:ExitCode:{cells.integer(terminated.get('exitCode'))}"
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _condition_true(status, "Initialized"):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            state = cs.get("state") or {}
            terminated, waiting = state.get("terminated"), state.get("waiting")
            restarts += cells.integer(cs.get("restartCount"))
            last_restart = _later(last_restart, cells.dig(cs, "lastState", "terminated", "finishedAt"))
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None and terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated is not None:
                signal = cells.integer(terminated.get("signal"))
                reason = f"Signal:{signal}" if signal else f"ExitCode:{cells.integer(terminated.get('exitCode'))}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        # A container still running makes a "Completed" pod Running (or NotReady) again.
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status, "Ready") else "NotReady"

    deleting = cells.meta(pod).get("deletionTimestamp") is not None
    if deleting and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return f"{ready}/{total}", reason, restarts, last_restart


def _pod_cells(pod: dict[str, Any], now: datetime) -> list[Any]:
    ready, reason, restarts, last_restart = pod_summary(pod)
    restart_text = str(restarts)
    if restarts != 0 and last_restart is not None:
        restart_text = f"{restarts} ({cells.between(last_restart, now)} ago)"
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    ips = status.get("podIPs") or []
    ip = (ips[0].get("ip") if ips else status.get("podIP")) or "<none>"
    gates = spec.get("readinessGates") or []
    gate_text = "<none>"
    if gates:
        conditions = status.get("conditions") or []
        true_count = 0
        for gate in gates:
            c = cells.condition(conditions, gate.get("conditionType"))
            if c is not None and c.get("status") == "True":
                true_count += 1
        gate_text = f"{true_count}/{len(gates)}"
    return [
        cells.name(pod), ready, reason, restart_text, cells.age(pod, now),
        ip, spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>", gate_text,
    ]


def _pod_conditions(pod: dict[str, Any]) -> list[dict[str, Any]] | None:
    phase = cells.dig(pod, "status", "phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


def _pod_template_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    template = obj.get("template") or {}
    names, images = cells.containers_cells(template.get("spec"))
    return [cells.name(obj), names, images, cells.format_labels(cells.dig(template, "metadata", "labels"))]


PRINTERS = {
    ("", "pods"): Printer(POD_COLUMNS, _pod_cells, conditions=_pod_conditions),
    ("", "podtemplates"): Printer(
        (
            NAME,
            col("Containers", "Names of each container in the template."),
            col("Images", "Images referenced by each container in the template."),
            col("Pod Labels", "The labels for the pod template."),
        ),
        _pod_template_cells,
    ),
}
