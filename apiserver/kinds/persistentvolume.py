"""PersistentVolumes: the defaults upstream declares and ValidatePersistentVolumeUpdate's fixed fields.

Defaults: volumeMode Filesystem, persistentVolumeReclaimPolicy Retain. Update: the volume source
(whichever of nfs, csi, hostPath… is set) may not change, except that a CSI volume may gain a
controllerExpandSecretRef; volumeMode is fixed; nodeAffinity is fixed once set (the
MutablePVNodeAffinity gate is off in 1.36); volumeAttributesClassName may change but not be unset.
No metadata.generation. Upstream: pkg/apis/core/validation.
"""

from __future__ import annotations

import copy

from apiserver import validation as v
from apiserver.kinds import fixed_fields, spec_diff
from apiserver.kinds.defaulting import NoGenerationStrategy
from apiserver.strategy import Causes, Obj

# PersistentVolumeSpec's inline PersistentVolumeSource members, by JSON name.
SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "iscsi", "cinder",
           "cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "quobyte", "azureDisk",
           "photonPersistentDisk", "portworxVolume", "scaleIO", "local", "storageos", "csi")
SOURCE_IMMUTABLE = "spec.persistentvolumesource is immutable after creation"


def _source(spec: Obj) -> Obj:
    return {key: spec[key] for key in SOURCES if spec.get(key) is not None}


class PersistentVolumeStrategy(NoGenerationStrategy):
    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("volumeMode") is None:
            spec["volumeMode"] = "Filesystem"
        if spec.get("persistentVolumeReclaimPolicy") is None:
            spec["persistentVolumeReclaimPolicy"] = "Retain"

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = super().validate_update(new, old)
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        source, old_source = copy.deepcopy(_source(spec)), _source(old_spec)
        old_csi, csi = old_source.get("csi"), source.get("csi")
        if isinstance(old_csi, dict) and isinstance(csi, dict) and old_csi.get("controllerExpandSecretRef") is None:
            csi.pop("controllerExpandSecretRef", None)  # may be added to an existing CSI volume
        if not fixed_fields.same(source, old_source):
            diff = spec_diff.diff(old_source, source, "spec")
            causes.append(v.forbidden("spec.persistentvolumesource", f"{SOURCE_IMMUTABLE}\n{diff}"))
        causes += v.immutable("volumeMode", spec.get("volumeMode"), old_spec.get("volumeMode"))
        if old_spec.get("nodeAffinity") is not None and \
                not fixed_fields.same(spec.get("nodeAffinity"), old_spec["nodeAffinity"]):
            causes.append(v.invalid("nodeAffinity", spec.get("nodeAffinity"), v.FIELD_IMMUTABLE))
        old_class, new_class = old_spec.get("volumeAttributesClassName"), spec.get("volumeAttributesClassName")
        if old_class is not None and new_class is None:
            causes.append(v.forbidden("spec.volumeAttributesClassName", "update from non-nil value to nil is forbidden"))
        return causes
