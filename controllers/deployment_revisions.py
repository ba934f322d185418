"""The annotations a Deployment writes on its ReplicaSets, and the revisions they record.

`deployment.kubernetes.io/revision` numbers the templates a Deployment has had; `revision-history`
keeps the earlier numbers of a template that came back (a rollback), at most 2000 characters;
`desired-replicas` and `max-replicas` remember the sizes a ReplicaSet was scaled for (proportional
scaling reads them). The Deployment's own annotations are copied onto its new ReplicaSet, except
these and kubectl's last-applied configuration. Upstream: deployment/util/deployment_util.go.
Used by `deployment.py`.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
NOT_COPIED = frozenset({LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO})
MAX_HISTORY_CHARS = 2000


def annotations(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def revision(obj: Obj) -> int:
    try:
        return int(annotations(obj).get(REVISION) or 0)
    except ValueError:
        return 0


def max_revision(replica_sets: list[Obj]) -> int:
    return max((revision(rs) for rs in replica_sets), default=0)


def int_annotation(obj: Obj, key: str) -> int | None:
    try:
        return int(annotations(obj)[key])
    except (KeyError, ValueError):
        return None


def copy_deployment_annotations(deployment: Obj, rs: Obj) -> bool:
    """Deployment annotations onto the ReplicaSet (never removing any): True when one changed."""
    target = rs.setdefault("metadata", {}).setdefault("annotations", {})
    changed = False
    for key, value in annotations(deployment).items():
        if key in NOT_COPIED or target.get(key) == value:
            continue
        target[key] = value
        changed = True
    return changed


def set_replicas_annotations(rs: Obj, desired: int, maximum: int) -> bool:
    target = rs.setdefault("metadata", {}).setdefault("annotations", {})
    changed = False
    for key, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(maximum))):
        if target.get(key) != value:
            target[key] = value
            changed = True
    return changed


def replicas_annotations_need_update(rs: Obj, desired: int, maximum: int) -> bool:
    current = annotations(rs)
    return current.get(DESIRED_REPLICAS) != str(desired) or current.get(MAX_REPLICAS) != str(maximum)


def set_new_rs_annotations(deployment: Obj, rs: Obj, new_revision: int, exists: bool, desired: int, maximum: int) -> bool:
    """SetNewReplicaSetAnnotations: the new ReplicaSet takes the next revision; one that had an older
    revision (a rollback to its template) keeps that number in revision-history."""
    changed = copy_deployment_annotations(deployment, rs)
    target = rs["metadata"]["annotations"]
    old_text = target.get(REVISION)
    try:
        old = int(old_text) if old_text else 0
    except ValueError:
        return False  # somebody wrote garbage there: leave it to them, as upstream does
    if old < new_revision:
        target[REVISION] = str(new_revision)
        changed = True
        if old_text:
            history = target.get(REVISION_HISTORY) or ""
            kept = history.split(",") if history else []
            total = len(history) + len(old_text) + 1 if history else len(old_text)
            while total > MAX_HISTORY_CHARS and kept:
                total -= len(kept.pop(0)) + 1
            if total <= MAX_HISTORY_CHARS:
                target[REVISION_HISTORY] = ",".join(kept + [old_text])
    if not exists and set_replicas_annotations(rs, desired, maximum):
        changed = True
    return changed
