"""The pods a Job makes and how it reads them: upstream's pod template handling in job_controller.go
and indexed_job_utils.go, and the pod predicates its counting uses.

`new_pod(job, index, failures)` builds a pod from the template: the template's labels and
annotations, a controlling ownerReference, the `batch.kubernetes.io/job-tracking` finalizer,
generateName `<job>-` (Indexed: `<job>-<index>-`, the completion index annotation and label,
hostname `<job>-<index>`, env JOB_COMPLETION_INDEX from the annotation, the per-index failure
count annotations). Pure; used by `job.py`.
"""

from __future__ import annotations

import copy
from typing import Any

from controllers import job_indexes

Obj = dict[str, Any]
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURE_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def is_indexed(job: Obj) -> bool:
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def new_pod(job: Obj, index: int | None, failures: tuple[int, int] = (0, 0)) -> Obj:
    meta = _meta(job)
    template = copy.deepcopy((job.get("spec") or {}).get("template") or {})
    tmeta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    labels = dict(tmeta.get("labels") or {})
    annotations = dict(tmeta.get("annotations") or {})
    generate = f"{meta.get('name')}-"
    if index is not None:
        annotations[job_indexes.INDEX_KEY] = str(index)
        labels[job_indexes.INDEX_KEY] = str(index)
        generate = f"{meta.get('name')}-{index}-"
        if not spec.get("hostname"):
            spec["hostname"] = f"{meta.get('name')}-{index}"
        _add_index_env(spec)
        if (job.get("spec") or {}).get("backoffLimitPerIndex") is not None:
            annotations[INDEX_FAILURE_COUNT] = str(failures[0])
            if failures[1]:
                annotations[INDEX_IGNORED_FAILURE_COUNT] = str(failures[1])
    pod_meta: Obj = {
        "generateName": generate, "namespace": meta.get("namespace"), "labels": labels,
        "finalizers": [TRACKING_FINALIZER],
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": meta.get("name"), "uid": meta.get("uid"),
                             "controller": True, "blockOwnerDeletion": True}],
    }
    if annotations:
        pod_meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}


def _add_index_env(spec: Obj) -> None:
    """Every container learns its index from the annotation (unless it sets the variable itself)."""
    ref = {"name": job_indexes.INDEX_ENV, "valueFrom": {"fieldRef": {
        "fieldPath": f"metadata.annotations['{job_indexes.INDEX_KEY}']"}}}
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            env = container.setdefault("env", [])
            if not any(e.get("name") == job_indexes.INDEX_ENV for e in env):
                env.append(copy.deepcopy(ref))


def phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def is_terminal(pod: Obj) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def is_terminating(pod: Obj) -> bool:
    return bool(_meta(pod).get("deletionTimestamp")) and not is_terminal(pod)


def is_active(pod: Obj) -> bool:
    return not is_terminal(pod) and not _meta(pod).get("deletionTimestamp")


def is_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def has_finalizer(pod: Obj) -> bool:
    return TRACKING_FINALIZER in (_meta(pod).get("finalizers") or [])


def counts_as_failed(pod: Obj, only_replace_failed: bool) -> bool:
    """upstream's isPodFailed: Failed, or (TerminatingOrFailed) deleted before it succeeded — an
    orphaned pod may never reach Failed."""
    if phase(pod) == "Failed":
        return True
    if only_replace_failed:
        return False
    return bool(_meta(pod).get("deletionTimestamp")) and phase(pod) != "Succeeded"


def restarts(pod: Obj) -> int:
    status = pod.get("status") or {}
    return sum(int(c.get("restartCount") or 0)
               for c in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []))


def index_failures(pod: Obj) -> tuple[int, int]:
    """The (counted, ignored) failures of the pod's index before this pod, from its annotations."""
    annotations = _meta(pod).get("annotations") or {}

    def number(key: str) -> int:
        value = annotations.get(key) or "0"
        return int(value) if value.isdigit() else 0
    return number(INDEX_FAILURE_COUNT), number(INDEX_IGNORED_FAILURE_COUNT)


def deletion_rank(pod: Obj) -> tuple[int, int, str]:
    """Which active pods go first when there are too many: unscheduled, then pending, then not
    ready, then the rest (a simplified controller.ActivePods order)."""
    unscheduled = 0 if not (pod.get("spec") or {}).get("nodeName") else 1
    pending = 0 if phase(pod) == "Pending" else 1
    return unscheduled, pending + (0 if not is_ready(pod) else 1), _meta(pod).get("creationTimestamp") or ""
