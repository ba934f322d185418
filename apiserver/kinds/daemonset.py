"""DaemonSets (apps/v1): defaults, validation, immutable selector, template generation.

Defaults: updateStrategy RollingUpdate with maxUnavailable 1 and maxSurge 0,
revisionHistoryLimit 10. The template generation the v1 API keeps in the annotation
deprecated.daemonset.template.generation starts at 1 and goes up with each template change.
"""

from __future__ import annotations

from apiserver import validation as v
from apiserver.kinds import deployment, pod_template, podspec_validation
from apiserver.strategy import Causes, Obj

TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


class DaemonSetStrategy(pod_template.TemplateOwnerStrategy):
    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        strategy = spec.setdefault("updateStrategy", {})
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.get("rollingUpdate") or {}
            rolling.setdefault("maxUnavailable", 1)
            rolling.setdefault("maxSurge", 0)
            strategy["rollingUpdate"] = rolling
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        pod_template.default(spec.get("template"))

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj["metadata"].setdefault("annotations", {})[TEMPLATE_GENERATION] = "1"

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        old_annotations = (old.get("metadata") or {}).get("annotations") or {}
        generation = int(old_annotations.get(TEMPLATE_GENERATION, "0") or 0)
        if (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
            generation += 1
        if generation:
            new["metadata"].setdefault("annotations", {})[TEMPLATE_GENERATION] = str(generation)

    def validate(self, obj: Obj, old: Obj | None = None) -> Causes:
        spec = obj.get("spec") or {}
        causes = super().validate(obj)
        selector = spec.get("selector")
        causes += v.label_selector(selector, "spec.selector")
        if selector is None or not v.selector_matches(selector, pod_template.template_labels(spec.get("template"))):
            causes.append(pod_template.mismatch("spec.template.metadata.labels", spec.get("template")))
        if selector is not None and not selector.get("matchLabels") and not selector.get("matchExpressions"):
            causes.append(v.invalid("spec.selector", pod_template.rendered_selector(selector), "empty selector is invalid for daemonset"))
        old_template = ((old or {}).get("spec") or {}).get("template")
        causes += podspec_validation.template(spec.get("template"), "spec.template", old_template)
        causes += pod_template.always_restarts(spec)
        deadline = ((spec.get("template") or {}).get("spec") or {}).get("activeDeadlineSeconds")
        if deadline is not None:
            causes.append(v.invalid("spec.template.spec.activeDeadlineSeconds", deadline, "activeDeadlineSeconds in DaemonSet is not Supported"))
        causes += pod_template.nonnegative_fields(spec, "minReadySeconds")
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type") == "RollingUpdate":
            causes += deployment.rolling_update(strategy.get("rollingUpdate"), "spec.updateStrategy.rollingUpdate")
        elif strategy.get("type") != "OnDelete":
            causes.append(v.not_supported("spec.updateStrategy.type", strategy.get("type", ""), ["OnDelete", "RollingUpdate"]))
        return causes + pod_template.nonnegative_fields(spec, "revisionHistoryLimit")

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = super().validate_update(new, old)
        return causes + pod_template.selector_unchanged(new.get("spec") or {}, old.get("spec") or {})
