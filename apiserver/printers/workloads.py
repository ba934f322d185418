"""Printers for the workload controllers' kinds (upstream printers.go, as served with -o wide cells).

Owns Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job, CronJob,
ControllerRevision, HorizontalPodAutoscaler (v1 and v2 shapes) and PodDisruptionBudget rows.
Integer cells stay JSON numbers where upstream's are ints. Unset fields read as their defaulted
value (storage decoding applies defaults upstream: replicas 1, suspend false). Called through
`apiserver/printers/__init__.py` by `apiserver/tables.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers import cells
from apiserver.printers.printer import AGE, CONTAINERS, IMAGES, NAME, Doc, Printer, col, selector_column


def _replicas(obj: dict[str, Any]) -> int:
    value = cells.dig(obj, "spec", "replicas")
    return 1 if value is None else cells.integer(value)


def _status_int(obj: dict[str, Any], field: str) -> int:
    return cells.integer(cells.dig(obj, "status", field))


def _template_spec(obj: dict[str, Any]) -> dict[str, Any]:
    return cells.dig(obj, "spec", "template", "spec") or {}


def _deployment(obj: dict[str, Any], now: datetime) -> list[Any]:
    names, images = cells.containers_cells(_template_spec(obj))
    return [
        cells.name(obj), f"{_status_int(obj, 'readyReplicas')}/{_replicas(obj)}",
        _status_int(obj, "updatedReplicas"), _status_int(obj, "availableReplicas"), cells.age(obj, now),
        names, images, cells.label_selector(cells.dig(obj, "spec", "selector")),
    ]


def _replica_set(obj: dict[str, Any], now: datetime) -> list[Any]:
    names, images = cells.containers_cells(_template_spec(obj))
    return [
        cells.name(obj), _replicas(obj), _status_int(obj, "replicas"), _status_int(obj, "readyReplicas"),
        cells.age(obj, now), names, images, cells.format_label_selector(cells.dig(obj, "spec", "selector")),
    ]


def _replication_controller(obj: dict[str, Any], now: datetime) -> list[Any]:
    names, images = cells.containers_cells(_template_spec(obj))
    return [
        cells.name(obj), _replicas(obj), _status_int(obj, "replicas"), _status_int(obj, "readyReplicas"),
        cells.age(obj, now), names, images, cells.format_labels(cells.dig(obj, "spec", "selector")),
    ]


def _stateful_set(obj: dict[str, Any], now: datetime) -> list[Any]:
    names, images = cells.containers_cells(_template_spec(obj))
    return [cells.name(obj), f"{_status_int(obj, 'readyReplicas')}/{_replicas(obj)}", cells.age(obj, now), names, images]


def _daemon_set(obj: dict[str, Any], now: datetime) -> list[Any]:
    names, images = cells.containers_cells(_template_spec(obj))
    return [
        cells.name(obj), _status_int(obj, "desiredNumberScheduled"), _status_int(obj, "currentNumberScheduled"),
        _status_int(obj, "numberReady"), _status_int(obj, "updatedNumberScheduled"), _status_int(obj, "numberAvailable"),
        cells.format_labels(_template_spec(obj).get("nodeSelector")), cells.age(obj, now),
        names, images, cells.format_label_selector(cells.dig(obj, "spec", "selector")),
    ]


def _job_condition(obj: dict[str, Any], kind: str) -> bool:
    c = cells.condition(cells.dig(obj, "status", "conditions"), kind)
    return c is not None and c.get("status") == "True"


def job_status(obj: dict[str, Any]) -> str:
    if _job_condition(obj, "Complete"):
        return "Complete"
    if _job_condition(obj, "Failed"):
        return "Failed"
    if cells.meta(obj).get("deletionTimestamp") is not None:
        return "Terminating"
    for kind in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _job_condition(obj, kind):
            return kind
    return "Running"


def _job(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    succeeded = _status_int(obj, "succeeded")
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{cells.integer(spec['completions'])}"
    elif cells.integer(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {cells.integer(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    start = cells.parse_time(cells.dig(obj, "status", "startTime"))
    end = cells.parse_time(cells.dig(obj, "status", "completionTime"))
    duration = "" if start is None else cells.between(start, end or now)
    names, images = cells.containers_cells(_template_spec(obj))
    return [
        cells.name(obj), job_status(obj), completions, duration, cells.age(obj, now),
        names, images, cells.format_label_selector(spec.get("selector")),
    ]


def _cron_job(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    last = cells.dig(obj, "status", "lastScheduleTime")
    job_spec = cells.dig(spec, "jobTemplate", "spec") or {}
    names, images = cells.containers_cells(cells.dig(job_spec, "template", "spec"))
    return [
        cells.name(obj), spec.get("schedule", ""), spec.get("timeZone") or "<none>",
        cells.bool_text(bool(spec.get("suspend"))), len(cells.dig(obj, "status", "active") or []),
        "<none>" if last is None else cells.since(last, now), cells.age(obj, now),
        names, images, cells.format_label_selector(job_spec.get("selector")),
    ]


def _controller_revision(obj: dict[str, Any], now: datetime) -> list[Any]:
    controller = "<none>"
    for ref in cells.meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            api_version = ref.get("apiVersion", "")
            group = api_version.split("/")[0] if "/" in api_version else ""
            kind = ref.get("kind", "")
            group_kind = f"{kind}.{group}" if group else kind
            controller = f"{group_kind.lower()}/{ref.get('name', '')}" if group_kind else ref.get("name", "")
            break
    return [cells.name(obj), controller, cells.integer(obj.get("revision")), cells.age(obj, now)]


# --- HorizontalPodAutoscaler -----------------------------------------------------------------------


def _hpa_metrics(obj: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """autoscaling/v2 `metrics` and `currentMetrics`, converting the autoscaling/v1 CPU fields."""
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    if "metrics" in spec or not str(obj.get("apiVersion", "")).endswith("/v1"):
        metrics = spec.get("metrics") or []
        if not metrics:
            # v2 defaulting: no metrics means 80% average CPU utilization.
            metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
        return metrics, status.get("currentMetrics") or []
    target = spec.get("targetCPUUtilizationPercentage")
    metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80 if target is None else target}}}]
    current = status.get("currentCPUUtilizationPercentage")
    currents = [] if current is None else [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": current}}}]
    return metrics, currents


def format_hpa_metrics(specs: list[dict[str, Any]], statuses: list[dict[str, Any]]) -> str:
    """Upstream `formatHPAMetrics`: `current/target` per metric, at most two, then `+ N more...`."""
    if not specs:
        return "<none>"
    parts: list[str] = []

    def current(i: int, source: str, field: str) -> str | None:
        if i < len(statuses) and isinstance(statuses[i].get(source), dict):
            value = cells.dig(statuses[i], source, "current", field)
            return None if value is None else str(value)
        return None

    for i, spec in enumerate(specs):
        kind = spec.get("type")
        source = {"External": "external", "Pods": "pods", "Object": "object", "Resource": "resource", "ContainerResource": "containerResource"}.get(str(kind))
        block = spec.get(source) if source else None
        if not isinstance(block, dict):
            parts.append("<unknown type>")
            continue
        target = block.get("target") or {}
        if kind in ("External", "Object"):
            if target.get("averageValue") is not None:
                parts.append(f"{current(i, source, 'averageValue') or '<unknown>'}/{target['averageValue']} (avg)")
            else:
                parts.append(f"{current(i, source, 'value') or '<unknown>'}/{target.get('value')}")
        elif kind == "Pods":
            parts.append(f"{current(i, source, 'averageValue') or '<unknown>'}/{target.get('averageValue')}")
        else:
            resource = block.get("name", "")
            if target.get("averageValue") is not None:
                parts.append(f"{resource}: {current(i, source, 'averageValue') or '<unknown>'}/{target['averageValue']}")
            else:
                utilization = current(i, source, "averageUtilization")
                want = target.get("averageUtilization")
                parts.append(f"{resource}: {'<unknown>' if utilization is None else utilization + '%'}/{'<auto>' if want is None else str(want) + '%'}")
    if len(parts) > 2:
        return ", ".join(parts[:2]) + f" + {len(parts) - 2} more..."
    return ", ".join(parts)


def _hpa(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    ref = spec.get("scaleTargetRef") or {}
    min_replicas = spec.get("minReplicas")
    metrics, currents = _hpa_metrics(obj)
    return [
        cells.name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", format_hpa_metrics(metrics, currents),
        "1" if min_replicas is None else str(min_replicas), cells.integer(spec.get("maxReplicas")),
        _status_int(obj, "currentReplicas"), cells.age(obj, now),
    ]


def _pdb(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    return [
        cells.name(obj), "N/A" if min_available is None else str(min_available),
        "N/A" if max_unavailable is None else str(max_unavailable),
        _status_int(obj, "disruptionsAllowed"), cells.age(obj, now),
    ]


_READY = col("Ready", "Number of the pod with ready state")

PRINTERS = {
    ("apps", "deployments"): Printer(
        (NAME, _READY, col("Up-to-date", Doc("apps.v1.DeploymentStatus", "updatedReplicas")),
         col("Available", Doc("apps.v1.DeploymentStatus", "availableReplicas")), AGE, CONTAINERS, IMAGES,
         selector_column("apps.v1.DeploymentSpec")),
        _deployment,
    ),
    ("apps", "replicasets"): Printer(
        (NAME, col("Desired", Doc("apps.v1.ReplicaSetSpec", "replicas"), type="integer"),
         col("Current", Doc("apps.v1.ReplicaSetStatus", "replicas"), type="integer"),
         col("Ready", Doc("apps.v1.ReplicaSetStatus", "readyReplicas"), type="integer"), AGE, CONTAINERS, IMAGES,
         selector_column("apps.v1.ReplicaSetSpec")),
        _replica_set,
    ),
    ("", "replicationcontrollers"): Printer(
        (NAME, col("Desired", Doc("core.v1.ReplicationControllerSpec", "replicas"), type="integer"),
         col("Current", Doc("core.v1.ReplicationControllerStatus", "replicas"), type="integer"),
         col("Ready", Doc("core.v1.ReplicationControllerStatus", "readyReplicas"), type="integer"), AGE,
         CONTAINERS, IMAGES, selector_column("core.v1.ReplicationControllerSpec")),
        _replication_controller,
    ),
    ("apps", "statefulsets"): Printer((NAME, _READY, AGE, CONTAINERS, IMAGES), _stateful_set),
    ("apps", "daemonsets"): Printer(
        (NAME, col("Desired", Doc("apps.v1.DaemonSetStatus", "desiredNumberScheduled"), type="integer"),
         col("Current", Doc("apps.v1.DaemonSetStatus", "currentNumberScheduled"), type="integer"),
         col("Ready", Doc("apps.v1.DaemonSetStatus", "numberReady"), type="integer"),
         col("Up-to-date", Doc("apps.v1.DaemonSetStatus", "updatedNumberScheduled"), type="integer"),
         col("Available", Doc("apps.v1.DaemonSetStatus", "numberAvailable"), type="integer"),
         col("Node Selector", Doc("core.v1.PodSpec", "nodeSelector")), AGE, CONTAINERS, IMAGES,
         selector_column("apps.v1.DaemonSetSpec")),
        _daemon_set,
    ),
    ("batch", "jobs"): Printer(
        (NAME, col("Status", "Status of the job."), col("Completions", Doc("batch.v1.JobStatus", "succeeded")),
         col("Duration", "Time required to complete the job."), AGE, CONTAINERS, IMAGES,
         selector_column("batch.v1.JobSpec")),
        _job,
    ),
    ("batch", "cronjobs"): Printer(
        (NAME, col("Schedule", Doc("batch.v1.CronJobSpec", "schedule")), col("Timezone", Doc("batch.v1.CronJobSpec", "timeZone")),
         col("Suspend", Doc("batch.v1.CronJobSpec", "suspend"), type="boolean"),
         col("Active", Doc("batch.v1.CronJobStatus", "active"), type="integer"),
         col("Last Schedule", Doc("batch.v1.CronJobStatus", "lastScheduleTime")), AGE, CONTAINERS, IMAGES,
         selector_column("batch.v1.JobSpec")),
        _cron_job,
    ),
    ("apps", "controllerrevisions"): Printer(
        (NAME, col("Controller", "Controller of the object"), col("Revision", Doc("apps.v1.ControllerRevision", "revision")), AGE),
        _controller_revision,
    ),
    ("autoscaling", "horizontalpodautoscalers"): Printer(
        (NAME, col("Reference", Doc("autoscaling.v2.HorizontalPodAutoscalerSpec", "scaleTargetRef")),
         col("Targets", Doc("autoscaling.v2.HorizontalPodAutoscalerSpec", "metrics")),
         col("MinPods", Doc("autoscaling.v2.HorizontalPodAutoscalerSpec", "minReplicas")),
         col("MaxPods", Doc("autoscaling.v2.HorizontalPodAutoscalerSpec", "maxReplicas")),
         col("Replicas", Doc("autoscaling.v2.HorizontalPodAutoscalerStatus", "currentReplicas")), AGE),
        _hpa,
    ),
    ("policy", "poddisruptionbudgets"): Printer(
        (NAME, col("Min Available", "The minimum number of pods that must be available."),
         col("Max Unavailable", "The maximum number of pods that may be unavailable."),
         col("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.", type="integer"), AGE),
        _pdb,
    ),
}
