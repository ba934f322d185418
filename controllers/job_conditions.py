"""Job conditions with upstream's types, reasons and messages, and how they are set.

Setting a condition that is already there with the same status keeps its lastTransitionTime
(upstream's updateConditionsIfChanged updates probe time, reason and message only). A Job is
finished once Complete or Failed is True. Used by `job.py` and `job_ttl.py`.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF_LIMIT = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE = ("DeadlineExceeded", "Job was active longer than specified deadline")
MAX_FAILED_INDEXES = ("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")
POD_FAILURE_POLICY = "PodFailurePolicy"
SUSPENDED = ("JobSuspended", "Job suspended")
RESUMED = ("JobResumed", "Job resumed")


def find(job: Obj, kind: str) -> Obj | None:
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition
    return None


def is_true(job: Obj, kind: str) -> bool:
    condition = find(job, kind)
    return condition is not None and condition.get("status") == "True"


def finished(job: Obj) -> Obj | None:
    """The True Complete or Failed condition, if the Job has ended."""
    for kind in ("Complete", "Failed"):
        if is_true(job, kind):
            return find(job, kind)
    return None


def set_condition(status: Obj, kind: str, value: str, reason: str, message: str, now: str) -> bool:
    """Set one condition in `status`; True when something changed."""
    conditions = status.setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") != kind:
            continue
        if condition.get("status") == value and condition.get("reason") == reason and condition.get("message") == message:
            return False
        if condition.get("status") != value:
            condition["lastTransitionTime"] = now
        condition.update(status=value, reason=reason, message=message, lastProbeTime=now)
        return True
    conditions.append({"type": kind, "status": value, "lastProbeTime": now, "lastTransitionTime": now,
                       "reason": reason, "message": message})
    return True
