"""PersistentVolumeClaims: volumeMode default, status.phase Pending, spec validation and the
"spec is immutable after creation" rule: volumeName may be set once, a nil storageClassName set,
volumeAttributesClassName changed (not unset), and a bound claim's storage request resized (down
to no less than status.capacity).

PVCs have a status subresource but no metadata.generation. Upstream: ValidatePersistentVolumeClaim
(Update) in pkg/apis/core/validation; the trailing cmp.Diff is rendered by `spec_diff.py`.
"""

from __future__ import annotations

import copy

from apiserver import validation as v
from apiserver.kinds import fixed_fields, spec_diff
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

_ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_IMMUTABLE = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"


def claim_spec(spec: Obj, path: str) -> Causes:
    causes: Causes = []
    modes = spec.get("accessModes") or []
    if not modes:
        causes.append(v.required(f"{path}.accessModes", "at least 1 access mode is required"))
    causes += v.label_selector(spec.get("selector"), f"{path}.selector")
    for mode in modes:
        if mode not in _ACCESS_MODES:
            causes.append(v.not_supported(f"{path}.accessModes", mode, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(m != "ReadWriteOncePod" and m in _ACCESS_MODES for m in modes):
        causes.append(v.forbidden(f"{path}.accessModes", "may not use ReadWriteOncePod with other access modes"))
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None:
        causes.append(v.required(f"{path}.resources[storage]"))
    else:
        amount = v.parse_quantity(storage)
        if amount is not None and amount <= 0:
            causes.append(v.invalid(f"{path}.resources[storage]", storage, "must be greater than zero"))
    for key in ("storageClassName", "volumeAttributesClassName"):
        if spec.get(key):
            causes += [v.invalid(f"{path}.{key}", spec[key], m) for m in v.dns1123_subdomain(spec[key])]
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        causes.append(v.not_supported(f"{path}.volumeMode", mode, ["Block", "Filesystem"]))
    return causes


class PersistentVolumeClaimStrategy(DefaultingStrategy):
    counts_generation = False

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("volumeMode") is None:
            spec["volumeMode"] = "Filesystem"

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"phase": "Pending"}

    def validate(self, obj: Obj) -> Causes:
        return super().validate(obj) + claim_spec(obj.get("spec") or {}, "spec")

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {}) + self.validate(new)
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        spec, old_spec_copy = copy.deepcopy(new_spec), copy.deepcopy(old_spec)
        if not old_spec_copy.get("volumeName"):
            old_spec_copy.pop("volumeName", None)  # the binder may set volumeName once
            if "volumeName" in spec:
                old_spec_copy["volumeName"] = spec["volumeName"]
        if old_spec.get("storageClassName") is None and spec.get("storageClassName") is not None:
            spec.pop("storageClassName")  # nil → set is the retroactive default class's upgrade
            old_spec_copy.pop("storageClassName", None)
        if (new.get("status") or {}).get("phase") == "Bound":
            requests = (spec.get("resources") or {}).get("requests")
            if requests is not None:
                requests["storage"] = ((old_spec.get("resources") or {}).get("requests") or {}).get("storage")
        # volumeAttributesClassName may change in any phase; only unsetting it is refused below.
        spec.pop("volumeAttributesClassName", None)
        old_spec_copy.pop("volumeAttributesClassName", None)
        if fixed_fields.semantic(spec) != fixed_fields.semantic(old_spec_copy):
            causes.append(v.forbidden("spec", f"{_IMMUTABLE}\n{spec_diff.diff(old_spec_copy, spec, 'spec')}"))
        new_size = v.parse_quantity(((new_spec.get("resources") or {}).get("requests") or {}).get("storage"))
        old_size = v.parse_quantity(((old_spec.get("resources") or {}).get("requests") or {}).get("storage"))
        # RecoverVolumeExpansionFailure (GA): a claim may shrink back down to, not below, what it has.
        capacity = v.parse_quantity(((old.get("status") or {}).get("capacity") or {}).get("storage")) or 0
        if new_size is not None and old_size is not None and new_size < old_size and new_size <= capacity:
            causes.append(v.forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
        # Upstream names this path without "spec." (and reports it besides the spec rule).
        causes += v.immutable("volumeMode", new_spec.get("volumeMode"), old_spec.get("volumeMode"))
        old_class, new_class = old_spec.get("volumeAttributesClassName"), new_spec.get("volumeAttributesClassName")
        if old_class is not None and new_class != old_class:
            if new_class is None:
                causes.append(v.forbidden("spec.volumeAttributesClassName", "update from non-nil value to nil is forbidden"))
            elif new_class == "":
                causes.append(v.forbidden("spec.volumeAttributesClassName",
                                          "update from non-nil value to an empty string is forbidden"))
        return causes
