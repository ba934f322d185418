"""The write rules of CustomResourceDefinition objects (apiextensions.k8s.io/v1).

Defaults (`conversion.strategy: None`, singular and listKind from the kind), status on create
(empty acceptedNames, `storedVersions` = the storage version), `storedVersions` growing when the
storage version changes, and validation from `crd_validation.py`. The cleanup finalizer is put on
at create, so that deleting a CRD leaves it for `controller.py` to remove its custom resources
first (upstream adds it in its own DELETE handler; ours is shared by every kind).
"""

from __future__ import annotations

from apiserver import validation
from apiserver.crds import crd_validation
from apiserver.strategy import Causes, Obj, Strategy

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


class CustomResourceDefinitionStrategy(Strategy):
    # Its status strategy resets Labels, Annotations and OwnerReferences (not Finalizers).
    status_resets = ("labels", "annotations", "ownerReferences")

    def default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        conversion = spec.setdefault("conversion", {})
        if isinstance(conversion, dict):
            conversion.setdefault("strategy", "None")
        names = spec.get("names")
        if isinstance(names, dict) and names.get("kind"):
            names.setdefault("singular", str(names["kind"]).lower())
            names.setdefault("listKind", f"{names['kind']}List")

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"acceptedNames": {"kind": "", "plural": ""}, "storedVersions": _storage_versions(obj)}
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if CLEANUP_FINALIZER not in finalizers:
            finalizers.append(CLEANUP_FINALIZER)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        status = new.setdefault("status", {})
        stored = list(status.get("storedVersions") or [])
        for version in _storage_versions(new):
            if version not in stored:
                stored.append(version)
        status["storedVersions"] = stored

    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        return causes + crd_validation.validate(obj)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = validation.object_meta(new.get("metadata") or {}, namespaced=False, name_rule=self.name_rule)
        causes += validation.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + crd_validation.validate_update(new, old)


def _storage_versions(obj: Obj) -> list[str]:
    versions = (obj.get("spec") or {}).get("versions") or []
    return [v["name"] for v in versions if isinstance(v, dict) and v.get("storage") and v.get("name")]
