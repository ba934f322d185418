"""What every pod-owning workload shares: template defaults, selector and template validation, Warnings.

Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs and PodTemplates embed a
PodTemplateSpec that gets the PodSpec defaults (not the Pod-only ones, nor admission's); their
strategies derive from `TemplateOwnerStrategy` for the template's Warnings. Workloads also carry a
metav1.LabelSelector that must be valid, non-empty, match the template's labels, and (apps/v1) never
change. Bad values render as upstream's JSON: a LabelSelector in struct order, sorted label maps.
"""

from __future__ import annotations

from typing import Any

from apiserver import validation as v
from apiserver.kinds import apparmor, podspec_defaults, podspec_validation
from apiserver.kinds.defaulting import DefaultingStrategy

Obj = dict[str, Any]
Causes = list[dict[str, str]]
TEMPLATE_MISMATCH = "`selector` does not match template `labels`"


def template_warnings(template: Any, path: str) -> list[str]:
    """GetWarningsForPodTemplate, as far as haru has it: the AppArmor annotation deprecation."""
    return apparmor.template_warnings(template, path)


class TemplateOwnerStrategy(DefaultingStrategy):
    """A kind with a pod template at `template_path`: upstream's WarningsOnCreate/WarningsOnUpdate.

    Create warns about the template; an update only when it moved metadata.generation (a label
    patch, a finalizer removal or a status write stays quiet)."""

    template_path: tuple[str, ...] = ("spec", "template")

    def template_of(self, obj: Any) -> Any:
        for key in self.template_path:
            obj = obj.get(key) if isinstance(obj, dict) else None
        return obj

    def validate(self, obj: Obj, old: Obj | None = None) -> Causes:
        """The generic rules; kinds add theirs. `old` is the stored object on an update: what its
        template already holds (gitRepo volumes) ratchets."""
        return super().validate(obj)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return self.validate(new, old) + v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})

    def warnings(self, obj: Obj, old: Obj | None = None) -> list[str]:
        if old is not None and (obj.get("metadata") or {}).get("generation") == \
                (old.get("metadata") or {}).get("generation", 1):
            return []
        return template_warnings(self.template_of(obj), ".".join(self.template_path))


def default(template: Any) -> None:
    if isinstance(template, dict):
        podspec_defaults.pod_spec(template.setdefault("spec", {}))


def rendered_selector(selector: Any) -> Any:
    """A LabelSelector as Go's encoding/json writes it (declaration order, empty parts omitted)."""
    if not isinstance(selector, dict):
        return selector
    out: dict[str, Any] = {}
    if selector.get("matchLabels"):
        out["matchLabels"] = dict(sorted(selector["matchLabels"].items()))
    if selector.get("matchExpressions"):
        out["matchExpressions"] = [
            {k: e[k] for k in ("key", "operator", "values") if e.get(k) not in (None, [])}
            for e in selector["matchExpressions"]
        ]
    return out


def template_labels(template: Any) -> dict[str, str]:
    return ((template or {}).get("metadata") or {}).get("labels") or {}


def rendered_labels(template: Any) -> dict[str, str] | None:
    """Template labels as the bad value of a mismatch: sorted like a Go map, null when absent."""
    labels = ((template or {}).get("metadata") or {}).get("labels")
    return None if labels is None else dict(sorted(labels.items()))


def mismatch(path: str, template: Any) -> dict[str, str]:
    return v.invalid(path, rendered_labels(template), TEMPLATE_MISMATCH)


def selector_and_template(spec: Obj, kind: str, *, required: bool = True,
                          old_spec: Obj | None = None) -> Causes:
    """Selector present, valid, non-empty and matching the template's labels; then the template.

    `old_spec` is the stored object's spec on an update (its template's gitRepo volumes ratchet)."""
    causes: Causes = []
    selector, template = spec.get("selector"), spec.get("template")
    if selector is None:
        if required:
            causes.append(v.required("spec.selector"))
    else:
        causes += v.label_selector(selector, "spec.selector")
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            causes.append(v.invalid("spec.selector", rendered_selector(selector), f"empty selector is invalid for {kind}"))
    # A missing selector converts to "select nothing", which no template matches (upstream reports both).
    if selector is None or ((selector.get("matchLabels") or selector.get("matchExpressions"))
                            and not v.selector_matches(selector, template_labels(template))):
        causes.append(mismatch("spec.template.metadata.labels", template))
    return causes + podspec_validation.template(template, "spec.template", (old_spec or {}).get("template"))


def always_restarts(spec: Obj) -> Causes:
    restart = (((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")) or ""
    if restart != "Always":
        return [v.not_supported("spec.template.spec.restartPolicy", restart, ["Always"])]
    return []


def no_deadline(spec: Obj, kind: str) -> Causes:
    if (((spec.get("template") or {}).get("spec") or {}).get("activeDeadlineSeconds")) is not None:
        return [v.forbidden("spec.template.spec.activeDeadlineSeconds", f"activeDeadlineSeconds in {kind} is not Supported")]
    return []


def selector_unchanged(new_spec: Obj, old_spec: Obj) -> Causes:
    """apps/v1 (and Jobs): the selector is immutable; the message carries the new selector."""
    if new_spec.get("selector") == old_spec.get("selector"):
        return []
    return [v.invalid("spec.selector", rendered_selector(new_spec.get("selector")), v.FIELD_IMMUTABLE)]


def nonnegative_fields(spec: Obj, *names: str) -> Causes:
    causes: Causes = []
    for name in names:
        causes += v.nonnegative(f"spec.{name}", spec.get(name))
    return causes
