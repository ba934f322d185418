"""Jobs (batch/v1): defaults, the generated selector and labels, spec validation, update rules.

Defaults: completions and parallelism 1 (when both unset), backoffLimit 6, completionMode
NonIndexed, suspend false, podReplacementPolicy, manualSelector false, labels copied from the
template. Create (manualSelector false): the template gets job-name, controller-uid and their
batch.kubernetes.io/ forms; the selector is batch.kubernetes.io/controller-uid. Update: selector,
completionMode and the template are immutable (a suspended, never-started Job may change its
scheduling directives); an Indexed Job's completions change only in step with parallelism.
`job_spec()` also validates CronJob job templates.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver import validation as v
from apiserver.kinds import pod_template, podspec_validation
from apiserver.strategy import Causes, Obj

CONTROLLER_UID, JOB_NAME = "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID, LEGACY_JOB_NAME = "controller-uid", "job-name"
_MAX_INT32 = 2147483647


def default_spec(spec: Obj) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = _MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed"
    spec.setdefault("manualSelector", False)
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or []:
        for pattern in rule.get("onPodConditions") or []:
            pattern.setdefault("status", "True")
    pod_template.default(spec.get("template"))


def job_spec(spec: Obj, path: str, *, require_selector: bool, old_spec: Obj | None = None) -> Causes:
    """ValidateJobSpec; `old_spec` is the stored spec on an update (its template's gitRepo volumes ratchet)."""
    causes: Causes = []
    for name in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        causes += v.nonnegative(f"{path}.{name}", spec.get(name))
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        causes.append(v.not_supported(f"{path}.completionMode", mode, ["NonIndexed", "Indexed"]))
    if mode == "Indexed":
        if spec.get("completions") is None:
            causes.append(v.required(f"{path}.completions", "when completion mode is Indexed"))
        elif spec["completions"] > 100000 and spec.get("backoffLimitPerIndex") is None:
            causes.append(v.invalid(f"{path}.completions", spec["completions"], "must be less than or equal to 100000 when completion mode is Indexed"))
    template = spec.get("template")
    causes += podspec_validation.template(template, f"{path}.template", (old_spec or {}).get("template"))
    restart = ((template or {}).get("spec") or {}).get("restartPolicy") or ""
    if restart not in ("OnFailure", "Never"):
        causes.append(v.not_supported(f"{path}.template.spec.restartPolicy", restart, ["OnFailure", "Never"]))
    elif restart == "OnFailure" and spec.get("podFailurePolicy") is not None:
        causes.append(v.invalid(f"{path}.template.spec.restartPolicy", restart, 'only "Never" is supported when podFailurePolicy is specified'))
    selector = spec.get("selector")
    if require_selector:  # a Job's own spec; a CronJob's job template has its selector generated later
        if selector is None:
            causes.append(v.required(f"{path}.selector"))
        else:
            causes += v.label_selector(selector, f"{path}.selector")
        if selector is None or not v.selector_matches(selector, pod_template.template_labels(template)):
            causes.append(pod_template.mismatch(f"{path}.template.metadata.labels", template))
    return causes


def _has_label(template: Any, key: str, want: str) -> Causes:
    labels = pod_template.template_labels(template)
    field = f"spec.template.metadata.labels[{key}]"
    if key not in labels:
        return [v.required(field, f"must be '{want}'")]
    if labels[key] != want:
        return [v.invalid(field, dict(sorted(labels.items())), f"must be '{want}'")]
    return []


class JobStrategy(pod_template.TemplateOwnerStrategy):
    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        default_spec(spec)
        labels = pod_template.template_labels(spec.get("template"))
        meta = obj.setdefault("metadata", {})
        if labels and not meta.get("labels"):
            meta["labels"] = dict(labels)

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        spec, meta = obj["spec"], obj["metadata"]
        if spec.get("manualSelector"):
            return
        labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
        for key in (LEGACY_JOB_NAME, JOB_NAME):
            labels.setdefault(key, meta.get("name", ""))
        for key in (LEGACY_CONTROLLER_UID, CONTROLLER_UID):
            labels.setdefault(key, meta.get("uid", ""))
        selector = spec.setdefault("selector", {})
        selector.setdefault("matchLabels", {}).setdefault(CONTROLLER_UID, meta.get("uid", ""))

    def _generated_selector(self, job: Obj, *, prefixed: bool) -> Causes:
        spec, meta = job.get("spec") or {}, job.get("metadata") or {}
        template = spec.get("template")
        if spec.get("manualSelector") or not pod_template.template_labels(template):
            return []
        uid, name = meta.get("uid", ""), meta.get("name", "")
        causes = _has_label(template, LEGACY_CONTROLLER_UID, uid) + _has_label(template, LEGACY_JOB_NAME, name)
        if prefixed:
            causes += _has_label(template, CONTROLLER_UID, uid) + _has_label(template, JOB_NAME, name)
        expected = {CONTROLLER_UID if prefixed else LEGACY_CONTROLLER_UID: uid}
        selector = spec.get("selector")
        if selector is None:
            return causes + [v.required("spec.selector")]
        if selector.get("matchExpressions") or (selector.get("matchLabels") or {}) != expected:
            causes.append(v.invalid("spec.selector", pod_template.rendered_selector(selector), "`selector` not auto-generated"))
        return causes

    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj) + self._generated_selector(obj, prefixed=True)
        return causes + job_spec(obj.get("spec") or {}, "spec", require_selector=True)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        old_labels = pod_template.template_labels(old_spec.get("template"))
        prefixed = CONTROLLER_UID in old_labels and JOB_NAME in old_labels
        causes = v.object_meta(new.get("metadata") or {}, namespaced=True, name_rule=self.name_rule)
        causes += self._generated_selector(new, prefixed=prefixed)
        causes += job_spec(spec, "spec", require_selector=True, old_spec=old_spec)
        causes += v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += _completions_update(spec, old_spec)
        causes += pod_template.selector_unchanged(spec, old_spec)
        causes += _template_update(spec, old_spec, old)
        for name in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"):
            causes += v.immutable(f"spec.{name}", spec.get(name), old_spec.get(name))
        return causes


def _completions_update(spec: Obj, old_spec: Obj) -> Causes:
    """Completions are fixed, except that an Indexed Job (elastic, GA) may change them along with parallelism."""
    completions = spec.get("completions")
    if spec.get("completionMode") != "Indexed":
        return v.immutable("spec.completions", completions, old_spec.get("completions"))
    if completions == old_spec.get("completions") or completions is None:
        return []  # a missing value is job_spec's "Required value" already
    if completions != spec.get("parallelism"):
        return [v.invalid("spec.completions", completions, "can only be modified in tandem with spec.parallelism")]
    return []


def _template_update(spec: Obj, old_spec: Obj, old: Obj) -> Causes:
    template, old_template = spec.get("template") or {}, copy.deepcopy(old_spec.get("template") or {})
    never_started = not (old.get("status") or {}).get("startTime")
    if old_spec.get("suspend") and never_started:
        # Scheduling directives of a suspended Job that never started may change (upstream's opts).
        new_pod, old_pod = template.get("spec") or {}, old_template.setdefault("spec", {})
        new_affinity, old_affinity = new_pod.get("affinity"), old_pod.get("affinity")
        if new_affinity is None and old_affinity is not None:
            rest = {k: val for k, val in old_affinity.items() if k != "nodeAffinity"}
            old_pod["affinity"] = rest or None
            if not rest:
                old_pod.pop("affinity")
        elif new_affinity is not None:
            merged = dict(old_affinity or {})
            merged.pop("nodeAffinity", None)
            if "nodeAffinity" in new_affinity:
                merged["nodeAffinity"] = new_affinity["nodeAffinity"]
            old_pod["affinity"] = merged
        for key in ("nodeSelector", "tolerations", "schedulingGates"):
            old_pod.pop(key, None)
            if key in new_pod:
                old_pod[key] = new_pod[key]
        meta, old_meta = template.get("metadata") or {}, dict(old_template.get("metadata") or {})
        for key in ("annotations", "labels"):
            old_meta.pop(key, None)
            if key in meta:
                old_meta[key] = meta[key]
        if old_meta or "metadata" in template:
            old_template["metadata"] = old_meta
        else:
            old_template.pop("metadata", None)
    if template != old_template:
        return [v.invalid("spec.template", template, v.FIELD_IMMUTABLE)]
    return []
