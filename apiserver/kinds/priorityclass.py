"""PriorityClasses (scheduling.k8s.io/v1): preemptionPolicy default, reserved names, fixed value.

A missing `value` decodes as 0, as upstream's int32 does. Names starting with "system-" are only
the two built-in classes with their exact values; user classes stay at or below 1e9. `value`
and `preemptionPolicy` may not change. Upstream: pkg/apis/scheduling/validation.
"""

from __future__ import annotations

from apiserver import validation as v
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

SYSTEM_PREFIX = "system-"
SYSTEM_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
HIGHEST_USER_PRIORITY = 1000000000
_POLICIES = ["PreemptLowerPriority", "Never"]


class PriorityClassStrategy(DefaultingStrategy):
    def default(self, obj: Obj) -> None:
        obj.setdefault("value", 0)
        if obj.get("preemptionPolicy") is None:
            obj["preemptionPolicy"] = "PreemptLowerPriority"

    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        name, value = (obj.get("metadata") or {}).get("name") or "", obj.get("value", 0)
        if name.startswith(SYSTEM_PREFIX):
            if name not in SYSTEM_CLASSES:
                problem = f"{name} is not a known system priority class"
            elif value != SYSTEM_CLASSES[name] or obj.get("globalDefault"):
                problem = f"value of {name} PriorityClass must be {SYSTEM_CLASSES[name]}"
                if obj.get("globalDefault") and value == SYSTEM_CLASSES[name]:
                    problem = f"globalDefault of {name} PriorityClass must be false"
            else:
                problem = ""
            if problem:
                causes.append(v.forbidden("metadata.name", f"priority class names with '{SYSTEM_PREFIX}' prefix are "
                                                           f"reserved for system use only. error: {problem}"))
        elif value > HIGHEST_USER_PRIORITY:
            causes.append(v.forbidden("value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"))
        policy = obj.get("preemptionPolicy")
        if policy is not None and policy not in _POLICIES:
            causes.append(v.not_supported("preemptionPolicy", policy, _POLICIES))
        return causes

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        if new.get("value", 0) != old.get("value", 0):
            causes.append(v.forbidden("value", "may not be changed in an update."))
        return causes + v.immutable("preemptionPolicy", new.get("preemptionPolicy"), old.get("preemptionPolicy"))
