"""AppArmor as 1.36 has it: the `appArmorProfile` field (GA since v1.30), the annotations deprecated.

Owns the field's validation (ValidateAppArmorProfileField, pod and container level, pods and pod
templates), the checks of the deprecated `container.apparmor.security.beta.kubernetes.io/<name>`
annotations (ValidateAppArmorPodAnnotations; on pod create, annotation and field must agree), the
Windows rule, and the create-time version skew: an annotation without a field becomes the field,
with a deprecation Warning (applyAppArmorVersionSkew); pod templates only get the Warning
(`template_warnings`). Fields are never copied back to annotations. Called by
`container_validation.py`, `podspec_validation.py`, `pod.py` and `pod_template.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from apiserver import validation as v

Obj = dict[str, Any]
Causes = list[dict[str, str]]

ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
LOCALHOST, RUNTIME_DEFAULT, UNCONFINED = "Localhost", "RuntimeDefault", "Unconfined"
_TYPES = [LOCALHOST, RUNTIME_DEFAULT, UNCONFINED]
# The deprecated annotation values (v1.DeprecatedAppArmorBeta*).
_ANNOTATION_RUNTIME_DEFAULT, _ANNOTATION_UNCONFINED = "runtime/default", "unconfined"
_ANNOTATION_LOCALHOST = "localhost/"
_MAX_LOCALHOST_PROFILE = 4095  # PATH_MAX - 1
_MUST_BE_SET = "must be set when AppArmor type is Localhost"
_TYPES_MUST_MATCH = "apparmor type in annotation and field must match"
_PROFILES_MUST_MATCH = "apparmor profile in annotation and field must match"
_WINDOWS = "cannot be set for a windows pod"


def _containers(spec: Obj, path: str) -> Iterator[tuple[Obj, str]]:
    """Every container with its field path, in VisitContainersWithPath's order."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, container in enumerate(spec.get(key) or []):
            if isinstance(container, dict):
                yield container, f"{path}.{key}[{i}]"


def _profile_of(context: Any) -> Obj | None:
    profile = (context or {}).get("appArmorProfile") if isinstance(context, dict) else None
    return profile if isinstance(profile, dict) else None


def profile_field(profile: Any, path: str) -> Causes:
    """ValidateAppArmorProfileField: `path` is the `...securityContext.appArmorProfile` field."""
    if not isinstance(profile, dict):
        return []
    kind, localhost = profile.get("type") or "", profile.get("localhostProfile")
    if kind == LOCALHOST:
        if localhost is None:
            return [v.required(f"{path}.localhostProfile", _MUST_BE_SET)]
        causes: Causes = []
        if localhost.strip() != localhost:
            causes.append(v.invalid(f"{path}.localhostProfile", localhost, "must not be padded with whitespace"))
        elif not localhost:
            causes.append(v.required(f"{path}.localhostProfile", _MUST_BE_SET))
        if len(localhost.encode()) > _MAX_LOCALHOST_PROFILE:
            causes.append(v.too_long(f"{path}.localhostProfile", _MAX_LOCALHOST_PROFILE))
        return causes
    if kind in (RUNTIME_DEFAULT, UNCONFINED):
        if localhost is not None:
            return [v.invalid(f"{path}.localhostProfile", localhost, "can only be set when AppArmor type is Localhost")]
        return []
    if not kind:
        return [v.required(f"{path}.type", "type is required when appArmorProfile is set")]
    return [v.not_supported(f"{path}.type", kind, _TYPES)]


def _annotation_format(value: str) -> str | None:
    """ValidateAppArmorProfileFormat's complaint about an annotation value, if any."""
    if value in ("", _ANNOTATION_RUNTIME_DEFAULT, _ANNOTATION_UNCONFINED) or value.startswith(_ANNOTATION_LOCALHOST):
        return None
    return f"invalid AppArmor profile name: {v.render_value(value)}"


def pod_annotations(annotations: Any, spec: Obj, path: str) -> Causes:
    """ValidateAppArmorPodAnnotations: each annotation names a container of the spec and a valid profile.

    Upstream walks a Go map (random order); keys are taken sorted here so the causes are stable."""
    if not isinstance(annotations, dict):
        return []
    names = {container.get("name") for container, _ in _containers(spec, "spec")}
    causes: Causes = []
    for key in sorted(k for k in annotations if k.startswith(ANNOTATION_PREFIX)):
        name, value = key[len(ANNOTATION_PREFIX):], annotations[key]
        if name not in names:
            causes.append(v.invalid(f"{path}[{key}]", name, "container not found"))
        problem = _annotation_format(value) if isinstance(value, str) else None
        if problem:
            causes.append(v.invalid(f"{path}[{key}]", value, problem))
    return causes


def windows(spec: Obj, path: str) -> Causes:
    """validateWindows' AppArmor part: no profile anywhere in a `spec.os.name: windows` pod."""
    causes: Causes = []
    if _profile_of(spec.get("securityContext")) is not None:
        causes.append(v.forbidden(f"{path}.securityContext.appArmorProfile", _WINDOWS))
    for container, container_path in _containers(spec, path):
        if _profile_of(container.get("securityContext")) is not None:
            causes.append(v.forbidden(f"{container_path}.securityContext.appArmorProfile", _WINDOWS))
    return causes


def _is_windows(spec: Obj) -> bool:
    return ((spec.get("os") or {}).get("name")) == "windows"


def annotations_match_fields(meta: Obj, spec: Obj, path: str) -> Causes:
    """validateAppArmorAnnotationsAndFieldsMatchOnCreate: an annotation may not contradict the profile in force."""
    if _is_windows(spec):
        return []
    annotations = meta.get("annotations") or {}
    pod_profile = _profile_of(spec.get("securityContext"))
    causes: Causes = []
    for container, container_path in _containers(spec, path):
        profile = _profile_of(container.get("securityContext")) or pod_profile
        annotation = annotations.get(ANNOTATION_PREFIX + (container.get("name") or ""))
        if profile is None or not isinstance(annotation, str):
            continue
        field = f"{container_path}.securityContext.appArmorProfile"
        if not _same_type(profile.get("type"), annotation):
            causes.append(v.forbidden(f"{field}.type", _TYPES_MUST_MATCH))
        elif profile.get("type") == LOCALHOST and \
                annotation[len(_ANNOTATION_LOCALHOST):] != profile.get("localhostProfile"):
            causes.append(v.forbidden(f"{field}.localhostProfile", _PROFILES_MUST_MATCH))
    return causes


def _same_type(kind: Any, annotation: str) -> bool:
    """Whether an annotation value names the field's profile type (an unknown type matches anything)."""
    if kind == UNCONFINED:
        return annotation == _ANNOTATION_UNCONFINED
    if kind == RUNTIME_DEFAULT:
        return annotation == _ANNOTATION_RUNTIME_DEFAULT
    if kind == LOCALHOST:
        return annotation.startswith(_ANNOTATION_LOCALHOST)
    return True


def field_for_annotation(value: str) -> Obj | None:
    """ApparmorFieldForAnnotation: the profile an annotation value means, or None if it means none."""
    if value == _ANNOTATION_UNCONFINED:
        return {"type": UNCONFINED}
    if value == _ANNOTATION_RUNTIME_DEFAULT:
        return {"type": RUNTIME_DEFAULT}
    if value.startswith(_ANNOTATION_LOCALHOST) and value != _ANNOTATION_LOCALHOST:
        return {"type": LOCALHOST, "localhostProfile": value[len(_ANNOTATION_LOCALHOST):]}
    return None


def _same_profile(a: Obj | None, b: Obj | None) -> bool:
    """Semantic equality of two profiles: an explicit null is the same as an absent field."""
    def present(profile: Obj | None) -> Obj | None:
        return None if profile is None else {k: val for k, val in profile.items() if val is not None}
    return present(a) == present(b)


def _version_skew(pod: Obj) -> list[tuple[Obj, str, Obj | None, bool]]:
    """applyAppArmorVersionSkew's decisions: (container, annotation key, profile to set, warn).

    For each container with an annotation and no field of its own: the profile the annotation means
    (dropped if invalid) is to be set unless the pod-level profile already is that one. The Warning
    is due when a profile is set or none could be derived."""
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    if _is_windows(spec):
        return []
    annotations = meta.get("annotations") or {}
    pod_profile = _profile_of(spec.get("securityContext"))
    decisions: list[tuple[Obj, str, Obj | None, bool]] = []
    for container, _ in _containers(spec, "spec"):
        key = ANNOTATION_PREFIX + (container.get("name") or "")
        annotation = annotations.get(key)
        if not isinstance(annotation, str) or _profile_of(container.get("securityContext")) is not None:
            continue
        derived = field_for_annotation(annotation)
        if derived is not None and profile_field(derived, ""):
            derived = None
        to_set = derived if derived is not None and not _same_profile(derived, pod_profile) else None
        decisions.append((container, key, to_set, derived is None or to_set is not None))
    return decisions


def _deprecated(annotations_path: str, key: str) -> str:
    return f'{annotations_path}[{key}]: deprecated since v1.30; use the "appArmorProfile" field instead'


def version_skew_warnings(pod: Obj) -> list[str]:
    """The deprecation Warnings `apply_version_skew` is due to send for this pod."""
    return [_deprecated("metadata.annotations", key) for _, key, _, warn in _version_skew(pod) if warn]


def template_warnings(template: Any, path: str) -> list[str]:
    """GetWarningsForPodTemplate's AppArmor part for the template at `path` (e.g. "spec.template").

    One Warning per container, in VisitContainers' order, that has an annotation and no profile in
    force (neither its own field nor the pod-level one). Pods warn through `version_skew_warnings`."""
    if not isinstance(template, dict):
        return []
    meta, spec = template.get("metadata") or {}, template.get("spec") or {}
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(annotations, dict) or not isinstance(spec, dict) or \
            _profile_of(spec.get("securityContext")) is not None:
        return []
    warnings: list[str] = []
    for container, _ in _containers(spec, "spec"):
        key = ANNOTATION_PREFIX + (container.get("name") or "")
        if key in annotations and _profile_of(container.get("securityContext")) is None:
            warnings.append(_deprecated(f"{path}.metadata.annotations", key))
    return warnings


def apply_version_skew(pod: Obj) -> None:
    """PrepareForCreate's annotation → field sync for a pod (never field → annotation)."""
    for container, _, profile, _ in _version_skew(pod):
        if profile is None:
            continue
        context = container.get("securityContext")
        if not isinstance(context, dict):
            context = container["securityContext"] = {}
        context["appArmorProfile"] = profile
