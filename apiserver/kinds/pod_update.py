"""What a pod update may change: upstream's ValidatePodUpdate rule and its exact message.

Only container and init-container images, a lower activeDeadlineSeconds, added tolerations (or
new tolerationSeconds), removed scheduling gates, terminationGracePeriodSeconds from negative to
1, and — while the pod is still gated — added nodeSelector entries. Anything else is Forbidden
on `spec` with the sentence below followed by a diff (see `spec_diff.py`). Called by `pod.py`.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver import validation as v
from apiserver.kinds import podspec_validation, spec_diff

Obj = dict[str, Any]
Causes = list[dict[str, str]]

UPDATABLE_FIELDS = ",".join([
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
])
FORBIDDEN_PREFIX = f"pod updates may not change fields other than {UPDATABLE_FIELDS}"
_MAX_INT32 = 2147483647


def _container_updates(new: list[Obj], old: list[Obj], path: str) -> tuple[Causes, bool]:
    if len(new) != len(old):
        return [v.forbidden(path, "pod updates may not add or remove containers")], True
    causes: Causes = []
    for i, c in enumerate(new):
        image = c.get("image") or ""
        if not image:
            causes.append(v.required(f"{path}[{i}].image"))
        if image != image.strip():
            causes.append(v.invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace"))
    return causes, False


def _only_added_tolerations(new: list[Obj], old: list[Obj]) -> Causes:
    for existing in old:
        wanted = {k: val for k, val in existing.items() if k != "tolerationSeconds"}
        if not any({k: val for k, val in t.items() if k != "tolerationSeconds"} == wanted for t in new):
            return [v.forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds")]
    return podspec_validation.tolerations(new, "spec.tolerations")


def _only_deleted_gates(new: list[Obj], old: list[Obj]) -> Causes:
    old_names = {g.get("name") for g in old}
    return [v.forbidden(f"spec.schedulingGates[{i}].name", f"only deletion is allowed, but found new scheduling gate '{g.get('name')}'")
            for i, g in enumerate(new) if g.get("name") not in old_names]


def validate(new_spec: Obj, old_spec: Obj) -> Causes:
    causes: Causes = []
    for key in ("containers", "initContainers"):
        errs, stop = _container_updates(new_spec.get(key) or [], old_spec.get(key) or [], f"spec.{key}")
        causes += errs
        if stop:
            return causes
    new_deadline, old_deadline = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if new_deadline is not None:
        if not 0 <= new_deadline <= _MAX_INT32:
            return causes + [v.invalid("spec.activeDeadlineSeconds", new_deadline, v.inclusive_range(0, _MAX_INT32))]
        if old_deadline is not None and old_deadline < new_deadline:
            return causes + [v.invalid("spec.activeDeadlineSeconds", new_deadline, "must be less than or equal to previous value")]
    elif old_deadline is not None:
        causes.append(v.invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"))
    causes += _only_added_tolerations(new_spec.get("tolerations") or [], old_spec.get("tolerations") or [])
    causes += _only_deleted_gates(new_spec.get("schedulingGates") or [], old_spec.get("schedulingGates") or [])
    if new_spec == old_spec:
        return causes
    munged = _munge(copy.deepcopy(new_spec), old_spec, causes)
    if munged != old_spec:
        causes.append(v.forbidden("spec", f"{FORBIDDEN_PREFIX}\n{spec_diff.diff(old_spec, munged, 'spec')}"))
    return causes


def _restore(spec: Obj, old_spec: Obj, key: str) -> None:
    if key in old_spec:
        spec[key] = copy.deepcopy(old_spec[key])
    else:
        spec.pop(key, None)


def _munge(spec: Obj, old_spec: Obj, causes: Causes) -> Obj:
    """Put back the fields an update may change, so that what is left must equal the old spec."""
    for key in ("containers", "initContainers"):
        for c, old_c in zip(spec.get(key) or [], old_spec.get(key) or []):
            if "image" in old_c:
                c["image"] = old_c["image"]
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        _restore(spec, old_spec, key)
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if old_grace is not None and old_grace < 0 and spec.get("terminationGracePeriodSeconds") == 1:
        spec["terminationGracePeriodSeconds"] = old_grace
    if old_spec.get("schedulingGates"):
        # A gated pod may gain nodeSelector entries (but not lose or change any) and node affinity.
        new_selector, old_selector = spec.get("nodeSelector") or {}, old_spec.get("nodeSelector") or {}
        if new_selector != old_selector:
            if any(new_selector.get(k) != val for k, val in old_selector.items()):
                causes.append(v.invalid("spec.nodeSelector", new_selector,
                                        "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
            _restore(spec, old_spec, "nodeSelector")
        old_affinity = (old_spec.get("affinity") or {}).get("nodeAffinity")
        if (spec.get("affinity") or {}).get("nodeAffinity") != old_affinity:
            affinity = dict(spec.get("affinity") or {})
            affinity.pop("nodeAffinity", None)
            if old_affinity is not None:
                affinity["nodeAffinity"] = copy.deepcopy(old_affinity)
            if affinity or "affinity" in old_spec:
                spec["affinity"] = affinity
            else:
                spec.pop("affinity", None)
    return spec
