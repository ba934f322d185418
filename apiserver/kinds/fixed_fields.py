"""Fields an update may not change, as a table: the shared rule and the small kinds that need nothing else.

A `Fixed` names one field by its dotted path and how upstream words a change to it: apimachinery's
ValidateImmutableField (`Invalid value: <new>: field is immutable`), a kind's own Forbidden
sentence ("updates to parameters are forbidden."), or a `+k8s:immutable` tag enforced by
declarative validation (`Invalid value: null: field is immutable`). `changes()` is used by the
strategies beside this module (DRA, scheduling, storage); `STRATEGIES` are the kinds whose only
rule beyond the generic ones is such a list, read by `kinds/__init__.py`.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from apiserver import validation as v
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

INVALID, FORBIDDEN, DECLARED = "invalid", "forbidden", "declared"


@dataclass(frozen=True)
class Fixed:
    path: str                       # dotted, from the object's root: "spec.controller"
    style: str = INVALID            # INVALID (the new value shown), FORBIDDEN, DECLARED (null shown)
    detail: str = v.FIELD_IMMUTABLE
    # apimachinery's Semantic.DeepEqual holds nil and empty maps and lists equal; a plain
    # reflect.DeepEqual (StorageClass parameters) does not.
    semantic: bool = True
    shown_as: str = ""              # the path the cause names, when upstream's differs from the field's
    unordered: bool = False         # a list compared as a set (ResourceQuota scopes)
    # A Go struct without omitempty shown as a bad value: every field, in declaration order ("" if unset).
    struct_keys: tuple[str, ...] = ()


def read(obj: Any, path: str) -> Any:
    for key in path.split("."):
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def semantic(value: Any) -> Any:
    """A JSON value as Go's semantic equality sees it: null members and empty containers are absent."""
    if isinstance(value, dict):
        kept = {k: semantic(x) for k, x in value.items()}
        return {k: x for k, x in kept.items() if x is not None} or None
    if isinstance(value, list):
        return [semantic(x) for x in value] or None
    return value


def same(new: Any, old: Any, *, semantic_equal: bool = True) -> bool:
    return semantic(new) == semantic(old) if semantic_equal else new == old


def json_key(value: Any) -> str:
    """A hashable stand-in for a JSON value (set membership of list entries)."""
    return json.dumps(semantic(value), sort_keys=True)


def _as_set(value: Any) -> frozenset[Any]:
    return frozenset(x for x in value if isinstance(x, str)) if isinstance(value, list) else frozenset()


def _as_struct(rule: Fixed, value: Any) -> Any:
    if rule.struct_keys and isinstance(value, dict):
        return {key: value.get(key) or "" for key in rule.struct_keys}
    return value


def changes(rules: tuple[Fixed, ...], new: Obj, old: Obj) -> Causes:
    """One cause per rule whose field differs between the stored object and the update."""
    causes: Causes = []
    for rule in rules:
        value, previous = _as_struct(rule, read(new, rule.path)), _as_struct(rule, read(old, rule.path))
        if rule.unordered and _as_set(value) == _as_set(previous):
            continue
        if not rule.unordered and same(value, previous, semantic_equal=rule.semantic):
            continue
        path = rule.shown_as or rule.path
        if rule.style == FORBIDDEN:
            causes.append(v.forbidden(path, rule.detail))
        else:
            causes.append(v.invalid(path, None if rule.style == DECLARED else value, rule.detail))
    return causes


class FixedFieldsStrategy(DefaultingStrategy):
    """Generic validation plus `fixed`: metadata rules, then the fields in table order, then the object.

    `defaults` are the kind's SetDefaults_* values by dotted path, filled where the field is unset, so
    that an update spelling out a default is no change."""

    fixed: tuple[Fixed, ...] = ()
    defaults: tuple[tuple[str, Any], ...] = ()

    def default(self, obj: Obj) -> None:
        for path, value in self.defaults:
            *parents, leaf = path.split(".")
            target: Any = obj
            for key in parents:
                if target.get(key) is None:
                    target[key] = {}
                target = target[key]
                if not isinstance(target, dict):
                    break  # a wrong type was refused when the body was decoded
            else:
                if target.get(leaf) is None:
                    target[leaf] = copy.deepcopy(value)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + changes(self.fixed, new, old) + self.validate(new)


def _strategy(name: str, *rules: Fixed, counts_generation: bool | None = None,
              defaults: tuple[tuple[str, Any], ...] = ()) -> type[FixedFieldsStrategy]:
    return type(name, (FixedFieldsStrategy,), {
        "fixed": rules, "counts_generation": counts_generation, "defaults": defaults,
        "__doc__": f"Fixed on update: {', '.join(r.path for r in rules) or 'nothing'}."})


_FORBIDDEN = "updates to {} are forbidden."

# rbac ValidateRoleBindingUpdate / ValidateClusterRoleBindingUpdate compare the RoleRef struct. RBAC
# names are path segments, so `kinds/__init__.py` lists these two itself.
RoleBindingStrategy = _strategy("RoleBindingStrategy", Fixed(
    "roleRef", detail="cannot change roleRef", struct_keys=("apiGroup", "kind", "name")))

# Upstream's ValidateXUpdate, per kind (pkg/apis/<group>/validation at v1.36); names are subdomains.
STRATEGIES: dict[tuple[str, str], type[FixedFieldsStrategy]] = {
    # node ValidateRuntimeClassUpdate
    ("node.k8s.io", "runtimeclasses"): _strategy("RuntimeClassStrategy", Fixed("handler")),
    # networking ValidateIngressClassUpdate (the spec counts in metadata.generation)
    ("networking.k8s.io", "ingressclasses"): _strategy(
        "IngressClassStrategy", Fixed("spec.controller"), counts_generation=True),
    # networking ValidateIPAddressUpdate
    ("networking.k8s.io", "ipaddresses"): _strategy("IPAddressStrategy", Fixed("spec.parentRef")),
    # discovery ValidateEndpointSliceUpdate
    ("discovery.k8s.io", "endpointslices"): _strategy("EndpointSliceStrategy", Fixed("addressType")),
    # apps ValidateControllerRevisionUpdate
    ("apps", "controllerrevisions"): _strategy("ControllerRevisionStrategy", Fixed("data")),
    # storage ValidateStorageClassUpdate: Forbidden sentences, then ValidateImmutableField
    ("storage.k8s.io", "storageclasses"): _strategy(
        "StorageClassStrategy",
        Fixed("parameters", FORBIDDEN, _FORBIDDEN.format("parameters"), semantic=False),
        Fixed("provisioner", FORBIDDEN, _FORBIDDEN.format("provisioner")),
        Fixed("reclaimPolicy", FORBIDDEN, _FORBIDDEN.format("reclaimPolicy")),
        Fixed("volumeBindingMode"),
        defaults=(("reclaimPolicy", "Delete"), ("volumeBindingMode", "Immediate"))),
    # storage ValidateVolumeAttributesClassUpdate
    ("storage.k8s.io", "volumeattributesclasses"): _strategy(
        "VolumeAttributesClassStrategy",
        Fixed("driverName", FORBIDDEN, _FORBIDDEN.format("driverName")),
        Fixed("parameters", FORBIDDEN, _FORBIDDEN.format("parameters"), semantic=False)),
    # storage ValidateCSIStorageCapacityUpdate
    ("storage.k8s.io", "csistoragecapacities"): _strategy(
        "CSIStorageCapacityStrategy", Fixed("nodeTopology"), Fixed("storageClassName")),
    # core ValidateResourceQuotaUpdate: the scopes, as a set; quotas keep no metadata.generation
    ("", "resourcequotas"): _strategy("ResourceQuotaStrategy", Fixed("spec.scopes", unordered=True),
                                      counts_generation=False),
    # storage ValidateVolumeAttachmentUpdate: the whole spec; no metadata.generation
    ("storage.k8s.io", "volumeattachments"): _strategy(
        "VolumeAttachmentStrategy", Fixed("spec"), counts_generation=False),
    # resource ValidateResourceSliceUpdate (validateResourceSliceSpec with the old spec); DeviceClass specs
    # are mutable. Both count spec changes in metadata.generation.
    ("resource.k8s.io", "resourceslices"): _strategy(
        "ResourceSliceStrategy", Fixed("spec.pool.name"), Fixed("spec.driver"), Fixed("spec.nodeName"),
        counts_generation=True),
    ("resource.k8s.io", "deviceclasses"): _strategy("DeviceClassStrategy", counts_generation=True),
    # scheduling.k8s.io/v1alpha2: +k8s:immutable tags, enforced declaratively (WithDeclarativeEnforcement),
    # so the cause shows no value. PodGroup's gated fields are immutable once their gate is on, and a
    # field whose gate is off never gets stored.
    ("scheduling.k8s.io", "workloads"): _strategy(
        "WorkloadStrategy", Fixed("spec.controllerRef", DECLARED), Fixed("spec.podGroupTemplates", DECLARED)),
    ("scheduling.k8s.io", "podgroups"): _strategy(
        "PodGroupStrategy", *(Fixed(f"spec.{name}", DECLARED) for name in (
            "podGroupTemplateRef", "schedulingPolicy", "schedulingConstraints", "resourceClaims", "disruptionMode",
            "priorityClassName", "priority")),
        defaults=(("spec.disruptionMode", "Pod"),)),
    # resource ValidateResourcePoolStatusRequestUpdate; storagemigration ValidateStorageVersionMigrationUpdate
    ("resource.k8s.io", "resourcepoolstatusrequests"): _strategy("ResourcePoolStatusRequestStrategy", Fixed("spec")),
    ("storagemigration.k8s.io", "storageversionmigrations"): _strategy(
        "StorageVersionMigrationStrategy", Fixed("spec")),
    # coordination ValidateLeaseCandidateUpdate
    ("coordination.k8s.io", "leasecandidates"): _strategy("LeaseCandidateStrategy", Fixed("spec.leaseName")),
    # certificates ValidateClusterTrustBundleUpdate / ValidatePodCertificateRequestUpdate ("all spec fields
    # are immutable", one cause per field)
    ("certificates.k8s.io", "clustertrustbundles"): _strategy("ClusterTrustBundleStrategy", Fixed("spec.signerName")),
    ("certificates.k8s.io", "podcertificaterequests"): _strategy(
        "PodCertificateRequestStrategy", *(Fixed(f"spec.{name}") for name in (
            "signerName", "podName", "podUID", "serviceAccountName", "serviceAccountUID", "nodeName", "nodeUID",
            "maxExpirationSeconds", "pkixPublicKey", "proofOfPossession"))),
    # storage ValidateCSIDriverUpdate; upstream's path says "attachedRequired" (sic)
    ("storage.k8s.io", "csidrivers"): _strategy(
        "CSIDriverStrategy",
        Fixed("spec.attachRequired", shown_as="spec.attachedRequired"), Fixed("spec.volumeLifecycleModes"),
        defaults=(("spec.attachRequired", True), ("spec.podInfoOnMount", False), ("spec.storageCapacity", False),
                  ("spec.fsGroupPolicy", "ReadWriteOnceWithFSType"), ("spec.requiresRepublish", False),
                  ("spec.volumeLifecycleModes", ["Persistent"]), ("spec.seLinuxMount", False))),
}
