"""The pods/eviction subresource's PodDisruptionBudget check, as kube's pod registry (eviction.go) does it.

`check_budgets(ep, pod, dry_run)` decides whether evicting `pod` may go ahead: pods that are
terminal, Pending or already terminating are evicted without a budget; more than one matching
budget is a 500; an unready pod passes under `unhealthyPodEvictionPolicy: AlwaysAllow`, or under
IfHealthyBudget while the budget is healthy; otherwise the one budget must be processed
(observedGeneration), allow a disruption (429 with the DisruptionBudget cause when not), and is
then charged: disruptionsAllowed decremented and the pod recorded in disruptedPods, written
before the pod is deleted so the disruption controller sees it. `mark_disruption_target(ep, name,
opts)` then writes the DisruptionTarget condition (EvictionByEvictionAPI) to the latest pod, checking
the delete preconditions there, as upstream's addConditionAndDeletePod does before the delete (so a
Job's podFailurePolicy can tell an evicted pod from a failed one). Called by `pods.evict`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from apiserver import deletion, errors, labels, responses
from apiserver.context import Endpoint
from storage import errors as storage_errors

VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MAX_DISRUPTED_PODS = 2000  # upstream's MaxDisruptedPodSize
DISRUPTION_TARGET = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                     "message": "Eviction API: evicting"}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _is_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def can_ignore_budgets(pod: dict[str, Any]) -> bool:
    """A pod that is not running (terminal or Pending) or is already going needs no budget."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def _too_many(message: str) -> errors.APIError:
    return errors.APIError(429, "TooManyRequests", VIOLATION, {"causes": [{"reason": "DisruptionBudget", "message": message}]})


def charge(pdb: dict[str, Any], pod_name: str, dry_run: bool) -> dict[str, Any]:
    """The budget after one eviction, or the error that forbids it (upstream's checkAndDecrement)."""
    name = pdb["metadata"]["name"]
    status = pdb.setdefault("status", {})
    if (status.get("observedGeneration") or 0) < (pdb["metadata"].get("generation") or 0):
        raise _too_many(f"The disruption budget {name} is still being processed by the server.")
    allowed = status.get("disruptionsAllowed") or 0
    if allowed < 0:
        raise errors.forbidden("poddisruptionbudget", "policy", name, "pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise errors.forbidden("poddisruptionbudget", "policy", name,
                               "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
    if allowed == 0:
        raise _too_many(f"The disruption budget {name} needs {status.get('desiredHealthy') or 0} healthy pods "
                        f"and has {status.get('currentHealthy') or 0} currently")
    status["disruptionsAllowed"] = allowed - 1
    if status["disruptionsAllowed"] == 0:
        _set_allowed_condition(status, pdb["metadata"].get("generation") or 0)
    if not dry_run:
        status.setdefault("disruptedPods", {})[pod_name] = _now()
    return pdb


def _set_allowed_condition(status: dict[str, Any], generation: int) -> None:
    conditions = status.setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == "DisruptionAllowed":
            if condition.get("status") != "False":
                condition.update(status="False", reason="InsufficientPods", message="", lastTransitionTime=_now())
            condition["observedGeneration"] = generation
            return
    conditions.append({"type": "DisruptionAllowed", "status": "False", "observedGeneration": generation,
                       "lastTransitionTime": _now(), "reason": "InsufficientPods", "message": ""})


def _matching_budgets(ep: Endpoint, pod: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    pdbs = ep.server.registry.get("policy", "v1", "poddisruptionbudgets")
    if pdbs is None:
        return []
    namespace = pod["metadata"].get("namespace", "")
    pod_labels = pod["metadata"].get("labels") or {}
    found = []
    for record in ep.server.store.list(f"{pdbs.key_prefix}{namespace}/").records:
        pdb = responses.decode(record.value)
        spec_selector = (pdb.get("spec") or {}).get("selector")
        if spec_selector is None:
            continue
        selector = labels.from_label_selector(spec_selector)
        if selector.empty or not selector.matches(pod_labels):
            continue  # an empty selector protects nothing here, as upstream
        found.append((pdbs.key(namespace, pdb["metadata"]["name"]), pdb))
    return found


async def check_budgets(ep: Endpoint, pod: dict[str, Any], dry_run: bool) -> None:
    """Raise the API error that forbids this eviction, or charge the pod's budget and return."""
    if can_ignore_budgets(pod):
        return
    budgets = _matching_budgets(ep, pod)
    if not budgets:
        return
    if len(budgets) > 1:
        raise errors.internal("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")
    key, pdb = budgets[0]
    spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
    if not _is_ready(pod):
        policy = spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
        if policy == "AlwaysAllow":
            return
        if (status.get("desiredHealthy") or 0) > 0 and (status.get("currentHealthy") or 0) >= status["desiredHealthy"]:
            return  # an unready pod of a healthy budget costs nothing
    pod_name = pod["metadata"]["name"]
    if dry_run:
        charge(pdb, pod_name, True)
        return
    try:
        await ep.server.store.guaranteed_update(key, lambda current: charge(current, pod_name, False))
    except storage_errors.StorageError as exc:
        raise errors.from_storage(exc, "poddisruptionbudgets", "policy", pdb["metadata"]["name"]) from None


def _set_condition(pod: dict[str, Any], condition: dict[str, Any]) -> None:
    """podutil.UpdatePodCondition: replace the condition of that type; the transition time moves
    only when the status does."""
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    current = next((c for c in conditions if c.get("type") == condition["type"]), None)
    since = current.get("lastTransitionTime") if current and current.get("status") == condition["status"] else None
    entry = {"type": condition["type"], "status": condition["status"], "lastProbeTime": None,
             "lastTransitionTime": since or _now(), "reason": condition["reason"], "message": condition["message"]}
    if current is None:
        conditions.append(entry)
    else:
        conditions[conditions.index(current)] = entry


async def mark_disruption_target(ep: Endpoint, name: str, opts: deletion.DeleteOptions) -> deletion.DeleteOptions:
    """Write DisruptionTarget to the pod before it is deleted; the options the delete then uses
    (a resourceVersion precondition moves to the revision this write made, as upstream's does)."""
    def mark(pod: dict[str, Any]) -> dict[str, Any]:
        deletion.check_preconditions(ep, name, pod, opts)
        _set_condition(pod, DISRUPTION_TARGET)
        return pod
    try:
        record = await ep.server.store.guaranteed_update(ep.key(name), mark)
    except storage_errors.StorageError as exc:
        raise errors.from_storage(exc, ep.resource.resource, ep.resource.group, name) from None
    if opts.resource_version:
        return dataclasses.replace(opts, resource_version=str(record.revision))
    return opts
