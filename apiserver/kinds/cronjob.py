"""CronJobs (batch/v1): defaults, schedule and job template validation, name length.

Defaults: concurrencyPolicy Allow, suspend false, successfulJobsHistoryLimit 3,
failedJobsHistoryLimit 1, and the pod template's defaults inside jobTemplate (the Job's own
defaults are applied when the controller creates the Job, not here). The name is at most 52
characters, since Jobs get an 11-character suffix.
"""

from __future__ import annotations

from apiserver import validation as v
from apiserver.kinds import cron_schedule, job, pod_template
from apiserver.strategy import Causes, Obj

_POLICIES = ["Allow", "Forbid", "Replace"]
_MAX_NAME = 52


class CronJobStrategy(pod_template.TemplateOwnerStrategy):
    template_path = ("spec", "jobTemplate", "spec", "template")

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if not spec.get("concurrencyPolicy"):
            spec["concurrencyPolicy"] = "Allow"
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        job_template = spec.get("jobTemplate")
        if isinstance(job_template, dict):
            pod_template.default((job_template.get("spec") or {}).get("template"))

    def _spec(self, obj: Obj, old: Obj | None) -> Causes:
        spec = obj.get("spec") or {}
        causes: Causes = []
        schedule = spec.get("schedule") or ""
        if not schedule:
            causes.append(v.required("spec.schedule"))
        else:
            problem = cron_schedule.error(schedule)
            if problem:
                causes.append(v.invalid("spec.schedule", schedule, problem))
            tz_allowed = old is not None and "TZ" in ((old.get("spec") or {}).get("schedule") or "")
            if tz_allowed and "TZ" in schedule and spec.get("timeZone") is not None:
                causes.append(v.invalid("spec.schedule", schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
            elif not tz_allowed and "TZ" in schedule:
                causes.append(v.invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
        policy = spec.get("concurrencyPolicy") or ""
        if not policy:
            causes.append(v.required("spec.concurrencyPolicy"))
        elif policy not in _POLICIES:
            causes.append(v.not_supported("spec.concurrencyPolicy", policy, _POLICIES))
        causes += pod_template.nonnegative_fields(spec, "startingDeadlineSeconds", "successfulJobsHistoryLimit",
                                                  "failedJobsHistoryLimit")
        job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
        old_job_spec = (((old or {}).get("spec") or {}).get("jobTemplate") or {}).get("spec")
        causes += job.job_spec(job_spec, "spec.jobTemplate.spec", require_selector=False, old_spec=old_job_spec)
        if job_spec.get("selector") is not None:
            causes.append(v.invalid("spec.jobTemplate.spec.selector", pod_template.rendered_selector(job_spec["selector"]),
                                    "`selector` will be auto-generated"))
        if job_spec.get("manualSelector"):
            causes.append(v.not_supported("spec.jobTemplate.spec.manualSelector", True, ["nil", "false"]))
        return causes

    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        name = (obj.get("metadata") or {}).get("name") or ""
        if len(name) > _MAX_NAME:
            causes.append(v.invalid("metadata.name", name, f"must be no more than {_MAX_NAME} characters"))
        return causes + self._spec(obj, None)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta(new.get("metadata") or {}, namespaced=True, name_rule=self.name_rule)
        causes += v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + self._spec(new, old)
