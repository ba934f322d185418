"""PodTemplates (core/v1): the template's defaults, ValidatePodTemplate, generation, Warnings.

Upstream's podTemplateStrategy (pkg/registry/core/podtemplate): the embedded PodTemplateSpec gets
the PodSpec defaults the workloads' templates get (`pod_template.default`); generation starts at 1
and moves only when `template` changes (no status subresource); create and update run
ValidatePodTemplateSpec at path `template` (`podspec_validation.template`, gitRepo ratcheting on
the stored template); Warnings come from `pod_template.TemplateOwnerStrategy`.
"""

from __future__ import annotations

from apiserver.kinds import pod_template, podspec_validation
from apiserver.strategy import Causes, Obj


class PodTemplateStrategy(pod_template.TemplateOwnerStrategy):
    counts_generation = True
    template_path = ("template",)

    def default(self, obj: Obj) -> None:
        # Go's PodTemplate holds its template by value: an absent one is an empty one, defaulted too.
        if obj.get("template") is None:
            obj["template"] = {}
        pod_template.default(obj.get("template"))

    def validate(self, obj: Obj, old: Obj | None = None) -> Causes:
        """ValidatePodTemplate."""
        causes = super().validate(obj)
        return causes + podspec_validation.template(obj.get("template"), "template", (old or {}).get("template"))
