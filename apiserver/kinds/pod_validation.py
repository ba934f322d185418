"""What every write of a pod validates of its metadata and spec: create, update and the subresources.

upstream's validatePodMetadataAndSpec and the mirror-pod annotation rule. Its own module because
the pod strategy (`pod.py`) and the subresource strategies (`pod_subresources.py`) both call it,
and the pod strategy builds the subresource ones.
"""

from __future__ import annotations

from apiserver import validation as v
from apiserver.kinds import apparmor, podspec_validation
from apiserver.strategy import Causes, Obj

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def userns_with_host_network(pod: Obj | None) -> bool:
    """The pod runs in its own user namespace on the host network (allowed once stored, whatever the gate)."""
    spec = (pod or {}).get("spec") or {}
    return spec.get("hostUsers") is False and bool(spec.get("hostNetwork"))


def metadata_and_spec(pod: Obj, name_rule: str, *, userns_host_network: bool = False) -> Causes:
    """validatePodMetadataAndSpec: what create, update and the subresources all check."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    causes = v.object_meta(meta, namespaced=True, name_rule=name_rule)
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}) and not spec.get("nodeName"):
        causes.append(v.invalid(f"metadata.annotations[{MIRROR_ANNOTATION}]", meta["annotations"][MIRROR_ANNOTATION],
                                "must set spec.nodeName if mirror pod annotation is set"))
    causes += apparmor.pod_annotations(meta.get("annotations"), spec, "metadata.annotations")
    causes += podspec_validation.pod_spec(spec, "spec", is_pod=True, userns_host_network=userns_host_network)
    if not spec.get("serviceAccountName"):
        for vi, volume in enumerate(spec.get("volumes") or []):
            for si, source in enumerate((volume.get("projected") or {}).get("sources") or []):
                if source.get("serviceAccountToken") is not None:
                    causes.append(v.forbidden(f"spec.volumes[{vi}].projected.sources[{si}].serviceAccountToken",
                                              "must not be specified when serviceAccountName is not set"))
    return causes


def mirror_annotation_update(new: Obj, old: Obj) -> Causes:
    new_value = ((new.get("metadata") or {}).get("annotations") or {}).get(MIRROR_ANNOTATION)
    old_value = ((old.get("metadata") or {}).get("annotations") or {}).get(MIRROR_ANNOTATION)
    field = f"metadata.annotations[{MIRROR_ANNOTATION}]"
    if old_value is not None and new_value != old_value:
        return [v.forbidden(field, "may not remove or update mirror pod annotation")]
    if old_value is None and new_value is not None:
        return [v.forbidden(field, "may not add mirror pod annotation")]
    return []
