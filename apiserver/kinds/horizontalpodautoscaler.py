"""HorizontalPodAutoscalers (autoscaling/v2): SetDefaults_HorizontalPodAutoscaler and the spec checks of
ValidateHorizontalPodAutoscaler that decide what the controller can act on.

Defaults: minReplicas 1; no metrics means 80% average cpu utilization; a `behavior` gets every
unset part of upstream's scale-up rules (0 s window, Max, 4 pods or 100% per 15 s) and scale-down
rules (Max, 100% per 15 s; the window stays unset: the controller's 300 s). Checks: minReplicas
at least 1, or 0 with the HPAScaleToZero gate (or when the stored HPA already had 0), and then at
least one Object or External metric; maxReplicas > 0 and not below minReplicas; a scale target
kind and name; known metric and policy types. `kinds.strategy_for` sets `gates`.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver import features, validation as v
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

GATE = "HPAScaleToZero"
_DEFAULT_METRICS = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                                 "averageUtilization": 80}}}]
_SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
             "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                          {"type": "Percent", "value": 100, "periodSeconds": 15}]}
_SCALE_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
_METRIC_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
_SOURCE = {"Object": "object", "Pods": "pods", "Resource": "resource", "ContainerResource": "containerResource",
           "External": "external"}
_SELECT = ["Disabled", "Max", "Min"]
_POLICY_TYPES = ["Percent", "Pods"]


def _rules(given: Any, default: dict[str, Any]) -> dict[str, Any]:
    rules = dict(given) if isinstance(given, dict) else {}
    for key, value in default.items():
        if rules.get(key) is None:
            rules[key] = copy.deepcopy(value)
    return rules


class HorizontalPodAutoscalerStrategy(DefaultingStrategy):
    gates: features.FeatureGates | None = None
    _old_min: Any = None

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        if spec.get("minReplicas") is None:
            spec["minReplicas"] = 1
        if not spec.get("metrics"):
            spec["metrics"] = copy.deepcopy(_DEFAULT_METRICS)
        behavior = spec.get("behavior")
        if isinstance(behavior, dict):
            behavior["scaleUp"] = _rules(behavior.get("scaleUp"), _SCALE_UP)
            behavior["scaleDown"] = _rules(behavior.get("scaleDown"), _SCALE_DOWN)

    def _zero_allowed(self) -> bool:
        gates = self.gates if self.gates is not None else features.FeatureGates()
        return gates.enabled(GATE) or self._old_min == 0

    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        spec = obj.get("spec") or {}
        low, high = spec.get("minReplicas"), spec.get("maxReplicas")
        bound = 0 if self._zero_allowed() else 1
        if isinstance(low, int) and low < bound:
            causes.append(v.invalid("spec.minReplicas", low, f"must be greater than or equal to {bound}"))
        if not isinstance(high, int) or high < 1:
            causes.append(v.invalid("spec.maxReplicas", high if high is not None else 0, "must be greater than 0"))
        elif isinstance(low, int) and high < low:
            causes.append(v.invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
        ref = spec.get("scaleTargetRef") or {}
        for name in ("kind", "name"):
            if not ref.get(name):
                causes.append(v.required(f"spec.scaleTargetRef.{name}"))
        causes += self._metrics(spec.get("metrics") or [], low)
        behavior = spec.get("behavior") or {}
        for direction in ("scaleUp", "scaleDown"):
            causes += _scaling_rules(behavior.get(direction), f"spec.behavior.{direction}")
        return causes

    def _metrics(self, metrics: list[Any], low: Any) -> Causes:
        causes: Causes = []
        types = set()
        for i, metric in enumerate(metrics):
            path = f"spec.metrics[{i}]"
            kind = (metric or {}).get("type") if isinstance(metric, dict) else None
            if not kind:
                causes.append(v.required(f"{path}.type", "must specify a metric source type"))
                continue
            if kind not in _METRIC_TYPES:
                causes.append(v.not_supported(f"{path}.type", kind, _METRIC_TYPES))
                continue
            types.add(kind)
            if not isinstance(metric.get(_SOURCE[kind]), dict):
                causes.append(v.required(f"{path}.{_SOURCE[kind]}", f"must populate information for the given "
                                                                    f"metric source"))
        if low == 0 and not types & {"Object", "External"}:
            causes.append(v.forbidden("spec.metrics", "must specify at least one Object or External metric to "
                                                      "support scaling to zero replicas"))
        return causes

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        self._old_min = (old.get("spec") or {}).get("minReplicas")
        try:
            return super().validate_update(new, old)
        finally:
            self._old_min = None


def _scaling_rules(rules: Any, path: str) -> Causes:
    if not isinstance(rules, dict):
        return []
    causes: Causes = []
    window = rules.get("stabilizationWindowSeconds")
    if isinstance(window, int) and not 0 <= window <= 3600:
        causes.append(v.invalid(f"{path}.stabilizationWindowSeconds", window,
                                "must be greater than or equal to zero and less than or equal to 3600"))
    select = rules.get("selectPolicy")
    if select is not None and select not in _SELECT:
        causes.append(v.not_supported(f"{path}.selectPolicy", select, _SELECT))
    policies = rules.get("policies") or []
    if select != "Disabled" and isinstance(rules.get("policies"), list) and not policies:
        causes.append(v.required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        at = f"{path}.policies[{i}]"
        if policy.get("type") not in _POLICY_TYPES:
            causes.append(v.not_supported(f"{at}.type", policy.get("type"), _POLICY_TYPES))
        value, period = policy.get("value"), policy.get("periodSeconds")
        if not isinstance(value, int) or value <= 0:
            causes.append(v.invalid(f"{at}.value", value, "must be greater than zero"))
        if not isinstance(period, int) or period <= 0:
            causes.append(v.invalid(f"{at}.periodSeconds", period, "must be greater than zero"))
        elif period > 1800:
            causes.append(v.invalid(f"{at}.periodSeconds", period, "must be less than or equal to 1800"))
    return causes
