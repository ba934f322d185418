"""Deployments (apps/v1): defaults, spec validation, immutable selector, generation on annotations.

Defaults: replicas 1, strategy RollingUpdate with maxUnavailable/maxSurge 25%,
revisionHistoryLimit 10, progressDeadlineSeconds 600, and the pod template's. Generation counts
spec changes and, as upstream's strategy does, annotation changes (they are copied to the
ReplicaSets). deployments/status keeps the annotations it is sent, as upstream's status strategy
does (`status_resets`: only spec and labels come from the old object): the Deployment controller records
`deployment.kubernetes.io/revision` with its status write, which must not bump the generation.
Upstream: pkg/registry/apps/deployment, pkg/apis/apps/validation.
"""

from __future__ import annotations

import re
from typing import Any

from apiserver import validation as v
from apiserver.kinds import pod_template
from apiserver.strategy import Causes, Obj

_PERCENT = re.compile(r"^[0-9]+%$")


def int_or_percent(value: Any, field: str) -> Causes:
    """ValidatePositiveIntOrPercent (+ IsNotMoreThan100Percent for maxUnavailable)."""
    if isinstance(value, str):
        if not _PERCENT.match(value):
            return [v.invalid(field, value, "a valid percent string must be a numeric string followed by an ending '%' "
                                            "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
        return []
    return v.nonnegative(field, value)


def _amount(value: Any) -> int:
    if isinstance(value, str) and _PERCENT.match(value):
        return int(value[:-1])
    return value if isinstance(value, int) else 0


def rolling_update(update: Any, path: str) -> Causes:
    update = update or {}
    causes = int_or_percent(update.get("maxUnavailable"), f"{path}.maxUnavailable")
    causes += int_or_percent(update.get("maxSurge"), f"{path}.maxSurge")
    if _amount(update.get("maxUnavailable")) == 0 and _amount(update.get("maxSurge")) == 0:
        causes.append(v.invalid(f"{path}.maxUnavailable", update.get("maxUnavailable"), "may not be 0 when `maxSurge` is 0"))
    unavailable = update.get("maxUnavailable")
    if isinstance(unavailable, str) and _PERCENT.match(unavailable) and int(unavailable[:-1]) > 100:
        causes.append(v.invalid(f"{path}.maxUnavailable", unavailable, "must not be greater than 100%"))
    return causes


class DeploymentStrategy(pod_template.TemplateOwnerStrategy):
    status_resets = ("labels",)  # deploymentStatusStrategy: Spec and Labels come from the stored object

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        strategy = spec.setdefault("strategy", {})
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.get("rollingUpdate") or {}
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")
            strategy["rollingUpdate"] = rolling
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        if spec.get("progressDeadlineSeconds") is None:
            spec["progressDeadlineSeconds"] = 600
        pod_template.default(spec.get("template"))

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        annotations = (new.get("metadata") or {}).get("annotations")
        old_meta = old.get("metadata") or {}
        if annotations != old_meta.get("annotations") and new.get("spec") == old.get("spec"):
            new["metadata"]["generation"] = old_meta.get("generation", 1) + 1

    def validate(self, obj: Obj, old: Obj | None = None) -> Causes:
        spec = obj.get("spec") or {}
        causes = super().validate(obj) + pod_template.nonnegative_fields(spec, "replicas")
        causes += pod_template.selector_and_template(spec, "deployment", old_spec=(old or {}).get("spec"))
        causes += pod_template.always_restarts(spec) + pod_template.no_deadline(spec, "ReplicaSet")
        strategy = spec.get("strategy") or {}
        kind = strategy.get("type")
        if kind == "Recreate":
            if strategy.get("rollingUpdate") is not None:
                causes.append(v.forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"))
        elif kind == "RollingUpdate":
            causes += rolling_update(strategy.get("rollingUpdate"), "spec.strategy.rollingUpdate")
        else:
            causes.append(v.not_supported("spec.strategy", strategy, ["Recreate", "RollingUpdate"]))
        causes += pod_template.nonnegative_fields(spec, "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds")
        deadline = spec.get("progressDeadlineSeconds")
        if isinstance(deadline, int) and deadline <= (spec.get("minReadySeconds") or 0):
            causes.append(v.invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
        return causes

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = super().validate_update(new, old)
        return causes + pod_template.selector_unchanged(new.get("spec") or {}, old.get("spec") or {})

