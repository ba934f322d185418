"""Which `podFailurePolicy` rule a failed pod matches: upstream's pod_failure_policy.go.

Rules are tried in order; the first whose `onExitCodes` (a terminated container, init containers
first, with a non-zero exit code In / NotIn the values, optionally by container name) or
`onPodConditions` (a condition of that type with that status) holds decides. `match()` returns the
rule's action (FailJob, FailIndex, Ignore, Count) with upstream's message for FailJob/FailIndex,
or None when no rule matches (the failure counts as usual). Pure; used by `job.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Match:
    action: str
    message: str
    rule: int

    @property
    def counts(self) -> bool:
        """Whether the failure counts towards backoffLimit (Ignore does not)."""
        return self.action != "Ignore"


def _exit_code_matches(code: int, requirement: Obj) -> bool:
    values = requirement.get("values") or []
    if requirement.get("operator") == "In":
        return code in values
    if requirement.get("operator") == "NotIn":
        return code not in values
    return False


def _matching_container(pod: Obj, requirement: Obj) -> Obj | None:
    status = pod.get("status") or {}
    wanted = requirement.get("containerName")
    for container in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        terminated = (container.get("state") or {}).get("terminated")
        if terminated is None:
            continue  # still stopping: no exit code to match yet
        if wanted is not None and wanted != container.get("name"):
            continue
        code = terminated.get("exitCode") or 0
        if code != 0 and _exit_code_matches(code, requirement):
            return container
    return None


def _matching_condition(pod: Obj, patterns: list[Obj]) -> Obj | None:
    for pattern in patterns:
        for condition in (pod.get("status") or {}).get("conditions") or []:
            if condition.get("type") == pattern.get("type") and condition.get("status") == pattern.get("status", "True"):
                return condition
    return None


def match(policy: Obj | None, pod: Obj) -> Match | None:
    if not policy:
        return None
    meta = pod.get("metadata") or {}
    who = f"{meta.get('namespace')}/{meta.get('name')}"
    for i, rule in enumerate(policy.get("rules") or []):
        action = rule.get("action") or ""
        if rule.get("onExitCodes") is not None:
            container = _matching_container(pod, rule["onExitCodes"])
            if container is not None:
                code = container["state"]["terminated"].get("exitCode")
                return Match(action, f"Container {container.get('name')} for pod {who} failed with exit code {code} "
                                     f"matching {action} rule at index {i}", i)
        elif rule.get("onPodConditions") is not None:
            condition = _matching_condition(pod, rule["onPodConditions"])
            if condition is not None:
                return Match(action, f"Pod {who} has condition {condition.get('type')} matching {action} rule at index {i}", i)
    return None
