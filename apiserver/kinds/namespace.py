"""Namespaces: DNS-label names, the kubernetes finalizer, phase Active, and `/finalize`.

Create: status.phase Active, spec.finalizers gains "kubernetes", the label
kubernetes.io/metadata.name mirrors the name (also a generated one: `canonicalize`, on every write). Update: spec.finalizers and status come from the
stored object (only `/finalize` changes the finalizers, only `/status` the phase). Delete:
default, kube-system and kube-public are refused (NamespaceLifecycle's immortal namespaces,
`admit_delete`, called by `handlers/delete.py`). Namespaces have a status subresource but no
metadata.generation. Upstream: pkg/registry/core/namespace, plugin/namespace/lifecycle.
"""

from __future__ import annotations

import copy

from apiserver import errors, validation as v
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj, Strategy

NAME_LABEL = "kubernetes.io/metadata.name"
KUBERNETES_FINALIZER = "kubernetes"
IMMORTAL = frozenset({"default", "kube-system", "kube-public"})


def finalizer_names(finalizers: list[str], path: str, *, indexed: bool) -> Causes:
    """validateFinalizerName: a qualified name, and unqualified ones must be standard."""
    causes: Causes = []
    for i, name in enumerate(finalizers):
        field = f"{path}[{i}]" if indexed else path
        causes += [v.invalid(field, name, m) for m in v.qualified_name(name)]
        if "/" not in name and name != KUBERNETES_FINALIZER:
            causes.append(v.invalid(field, name, "name is neither a standard finalizer name nor is it fully qualified"))
    return causes


class NamespaceStrategy(DefaultingStrategy):
    counts_generation = False

    def default(self, obj: Obj) -> None:
        meta = obj.setdefault("metadata", {})
        if meta.get("name"):
            meta.setdefault("labels", {})[NAME_LABEL] = meta["name"]

    def canonicalize(self, obj: Obj) -> None:
        # Defaulting ran before a generateName became a name; this runs after, as upstream's
        # Canonicalize does, so a generated namespace carries its name label too.
        meta = obj.setdefault("metadata", {})
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels[NAME_LABEL] = meta["name"]

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        finalizers = list(spec.get("finalizers") or [])
        if KUBERNETES_FINALIZER not in finalizers:
            finalizers.append(KUBERNETES_FINALIZER)
        spec["finalizers"] = finalizers

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        old_spec = old.get("spec") or {}
        spec = new.setdefault("spec", {})
        if "finalizers" in old_spec:
            spec["finalizers"] = copy.deepcopy(old_spec["finalizers"])
        else:
            spec.pop("finalizers", None)
        if not spec and "spec" not in old:
            new.pop("spec")

    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        return causes + finalizer_names((obj.get("spec") or {}).get("finalizers") or [], "spec.finalizers", indexed=False)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {}) + self.validate(new)

    def validate_status_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        phase = (new.get("status") or {}).get("phase", "")
        if not (new.get("metadata") or {}).get("deletionTimestamp"):
            if phase != "Active":
                causes.append(v.invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"))
        elif phase != "Terminating":
            causes.append(v.invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
        return causes

    def finalize_strategy(self) -> Strategy:
        return NamespaceFinalizeStrategy(self)

    def admit_delete(self, name: str) -> None:
        """NamespaceLifecycle: the namespaces the cluster itself lives in are never deleted."""
        if name in IMMORTAL:
            raise errors.forbidden("namespaces", "", name, "this namespace may not be deleted")


class NamespaceFinalizeStrategy(DefaultingStrategy):
    """namespaces/finalize: everything but spec.finalizers comes from the stored namespace."""

    counts_generation = False

    def __init__(self, main: NamespaceStrategy) -> None:
        super().__init__(namespaced=False, has_status=True, name_rule=main.name_rule)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        finalizers = (new.get("spec") or {}).get("finalizers")
        version = (new.get("metadata") or {}).get("resourceVersion")
        new.clear()
        new.update(copy.deepcopy(old))
        spec = new.setdefault("spec", {})
        if finalizers:
            spec["finalizers"] = finalizers
        else:
            spec.pop("finalizers", None)
        if version:
            new["metadata"]["resourceVersion"] = version

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + finalizer_names((new.get("spec") or {}).get("finalizers") or [], "spec.finalizers", indexed=True)
