"""A Deployment's status and its Progressing and Available conditions.

`calculate_status(deployment, all_rs, new_rs, now)` sums the ReplicaSets (replicas, updated, ready,
available, unavailable, terminating) and sets Available as MinimumReplicasAvailable /
MinimumReplicasUnavailable; `rollout_progress(...)` sets Progressing (ReplicaSetUpdated,
NewReplicaSetAvailable, ProgressDeadlineExceeded) with upstream's messages; `set_condition` keeps
lastTransitionTime while the status stays. `complete`, `progressing`, `timed_out` are upstream's
DeploymentComplete, DeploymentProgressing and DeploymentTimedOut. Used by `deployment.py`.
"""

from __future__ import annotations

from typing import Any

from controllers import pod_states, rollout_math

Obj = dict[str, Any]
NO_DEADLINE = 2**31 - 1  # progressDeadlineSeconds of MaxInt32 means "never time out"

NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
FAILED_RS_CREATE = "ReplicaSetCreateError"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"


def condition(kind: str, status: str, reason: str, message: str, now: str) -> Obj:
    return {"type": kind, "status": status, "lastUpdateTime": now, "lastTransitionTime": now,
            "reason": reason, "message": message}


def get_condition(status: Obj, kind: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def set_condition(status: Obj, new: Obj) -> None:
    """SetDeploymentCondition: the same status and reason change nothing; the same status keeps
    its lastTransitionTime; the condition goes to the end of the list."""
    current = get_condition(status, new["type"])
    if current is not None and current.get("status") == new["status"] and current.get("reason") == new["reason"]:
        return
    if current is not None and current.get("status") == new["status"]:
        new = {**new, "lastTransitionTime": current.get("lastTransitionTime")}
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != new["type"]] + [new]


def remove_condition(status: Obj, kind: str) -> None:
    kept = [c for c in status.get("conditions") or [] if c.get("type") != kind]
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)


def has_deadline(deployment: Obj) -> bool:
    deadline = (deployment.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and deadline != NO_DEADLINE


def _sum(replica_sets: list[Obj], field: str) -> int:
    return sum(int((rs.get("status") or {}).get(field) or 0) for rs in replica_sets)


def calculate_status(deployment: Obj, all_rs: list[Obj], new_rs: Obj | None, now: str) -> Obj:
    old = deployment.get("status") or {}
    available = _sum(all_rs, "availableReplicas")
    total = sum(rollout_math.spec_replicas(rs) for rs in all_rs)
    status: Obj = {
        "observedGeneration": (deployment.get("metadata") or {}).get("generation") or 0,
        "replicas": _sum(all_rs, "replicas"),
        "updatedReplicas": _sum([new_rs] if new_rs else [], "replicas"),
        "readyReplicas": _sum(all_rs, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": max(0, total - available),
        "terminatingReplicas": _sum(all_rs, "terminatingReplicas"),
    }
    if old.get("collisionCount") is not None:
        status["collisionCount"] = old["collisionCount"]
    if old.get("conditions"):
        status["conditions"] = [dict(c) for c in old["conditions"]]
    if available >= rollout_math.replicas(deployment) - rollout_math.max_unavailable(deployment):
        set_condition(status, condition("Available", "True", MIN_AVAILABLE, "Deployment has minimum availability.", now))
    else:
        set_condition(status, condition("Available", "False", MIN_UNAVAILABLE,
                                        "Deployment does not have minimum availability.", now))
    return status


def complete(deployment: Obj, status: Obj) -> bool:
    wanted = rollout_math.replicas(deployment)
    return (status.get("updatedReplicas") or 0) == wanted and (status.get("replicas") or 0) == wanted and \
        (status.get("availableReplicas") or 0) == wanted and \
        (status.get("observedGeneration") or 0) >= ((deployment.get("metadata") or {}).get("generation") or 0)


def progressing(deployment: Obj, status: Obj) -> bool:
    old = deployment.get("status") or {}

    def get(s: Obj, k: str) -> int:
        return int(s.get(k) or 0)

    return get(status, "updatedReplicas") > get(old, "updatedReplicas") or \
        get(status, "replicas") - get(status, "updatedReplicas") < get(old, "replicas") - get(old, "updatedReplicas") or \
        get(status, "readyReplicas") > get(old, "readyReplicas") or \
        get(status, "availableReplicas") > get(old, "availableReplicas")


def timed_out(deployment: Obj, status: Obj, now: float) -> bool:
    if not has_deadline(deployment):
        return False
    current = get_condition(status, "Progressing")
    if current is None or current.get("reason") == NEW_RS_AVAILABLE:
        return False
    if current.get("reason") == TIMED_OUT:
        return True
    since = pod_states.parse_time(current.get("lastUpdateTime"))
    deadline = int((deployment.get("spec") or {}).get("progressDeadlineSeconds") or 0)
    return since is not None and since + deadline < now


def rollout_progress(deployment: Obj, status: Obj, new_rs: Obj | None, now: float) -> None:
    """syncRolloutStatus's Progressing: complete, still moving, or past its deadline."""
    stamp = pod_states.format_time(now)
    if not has_deadline(deployment):
        remove_condition(status, "Progressing")
        return
    current = get_condition(status, "Progressing")
    if (status.get("replicas") or 0) == (status.get("updatedReplicas") or 0) and current is not None \
            and current.get("reason") == NEW_RS_AVAILABLE:
        return  # already complete: nothing moves it back but a new template
    name = ((new_rs or {}).get("metadata") or {}).get("name")
    if complete(deployment, status):
        message = f'ReplicaSet "{name}" has successfully progressed.' if new_rs else "Deployment has successfully progressed."
        set_condition(status, condition("Progressing", "True", NEW_RS_AVAILABLE, message, stamp))
    elif progressing(deployment, status):
        message = f'ReplicaSet "{name}" is progressing.' if new_rs else "Deployment is progressing."
        new = condition("Progressing", "True", RS_UPDATED, message, stamp)
        if current is not None and current.get("status") == "True":
            new["lastTransitionTime"] = current.get("lastTransitionTime")
        # Removed first so lastUpdateTime moves on with every step: the deadline counts from the last progress.
        remove_condition(status, "Progressing")
        set_condition(status, new)
    elif timed_out(deployment, status, now):
        message = f'ReplicaSet "{name}" has timed out progressing.' if new_rs else "Deployment has timed out progressing."
        set_condition(status, condition("Progressing", "False", TIMED_OUT, message, stamp))


def replica_failure(status: Obj, all_rs: list[Obj], new_rs: Obj | None) -> None:
    """getReplicaFailures: the new ReplicaSet's ReplicaFailure (else an old one's) shows on the Deployment."""
    found = None
    for rs in ([new_rs] if new_rs else []) + [r for r in all_rs if r is not new_rs]:
        found = next((c for c in (rs.get("status") or {}).get("conditions") or [] if c.get("type") == "ReplicaFailure"), None)
        if found is not None:
            break
    if found is None:
        remove_condition(status, "ReplicaFailure")
        return
    stamp = found.get("lastTransitionTime") or ""
    set_condition(status, condition("ReplicaFailure", found.get("status") or "True", found.get("reason") or "",
                                    found.get("message") or "", stamp))
