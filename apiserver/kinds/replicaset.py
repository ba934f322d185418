"""ReplicaSets (apps/v1): replicas 1, the template's defaults, selector rules as for Deployments.

Upstream reuses the Deployment's "empty selector is invalid for deployment" text here.
"""

from __future__ import annotations

from apiserver.kinds import pod_template
from apiserver.strategy import Causes, Obj


class ReplicaSetStrategy(pod_template.TemplateOwnerStrategy):
    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        pod_template.default(spec.get("template"))

    def validate(self, obj: Obj, old: Obj | None = None) -> Causes:
        spec = obj.get("spec") or {}
        causes = super().validate(obj) + pod_template.nonnegative_fields(spec, "replicas", "minReadySeconds")
        causes += pod_template.selector_and_template(spec, "deployment", old_spec=(old or {}).get("spec"))
        return causes + pod_template.always_restarts(spec) + pod_template.no_deadline(spec, "ReplicaSet")

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = super().validate_update(new, old)
        return causes + pod_template.selector_unchanged(new.get("spec") or {}, old.get("spec") or {})
