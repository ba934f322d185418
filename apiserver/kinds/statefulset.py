"""StatefulSets (apps/v1): defaults, spec validation, and the short list of updatable fields.

Defaults: podManagementPolicy OrderedReady, updateStrategy RollingUpdate with partition 0,
persistentVolumeClaimRetentionPolicy Retain/Retain, replicas 1, revisionHistoryLimit 10, and
the claim templates' PVC defaults (volumeMode Filesystem, status.phase Pending).
"""

from __future__ import annotations

from apiserver import validation as v
from apiserver.kinds import pod_template
from apiserver.strategy import Causes, Obj

UPDATABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
             "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
UPDATE_FORBIDDEN = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
                    "'minReadySeconds' are forbidden")


class StatefulSetStrategy(pod_template.TemplateOwnerStrategy):
    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if not spec.get("podManagementPolicy"):
            spec["podManagementPolicy"] = "OrderedReady"
        strategy = spec.setdefault("updateStrategy", {})
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            strategy.setdefault("rollingUpdate", {})
        if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
            strategy["rollingUpdate"].setdefault("partition", 0)
        retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
        retention.setdefault("whenDeleted", "Retain")
        retention.setdefault("whenScaled", "Retain")
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        for claim in spec.get("volumeClaimTemplates") or []:
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
            claim.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
            claim.setdefault("status", {}).setdefault("phase", "Pending")
        pod_template.default(spec.get("template"))

    def validate(self, obj: Obj, old: Obj | None = None) -> Causes:
        spec = obj.get("spec") or {}
        causes = super().validate(obj)
        policy = spec.get("podManagementPolicy") or ""
        if not policy:
            causes.append(v.required("spec.podManagementPolicy"))
        elif policy not in ("OrderedReady", "Parallel"):
            causes.append(v.invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
        strategy = spec.get("updateStrategy") or {}
        kind = strategy.get("type") or ""
        if not kind:
            causes.append(v.required("spec.updateStrategy"))
        elif kind == "OnDelete" and strategy.get("rollingUpdate") is not None:
            causes.append(v.invalid("spec.updateStrategy.rollingUpdate", strategy["rollingUpdate"],
                                    "only allowed for updateStrategy 'RollingUpdate'"))
        elif kind == "RollingUpdate":
            causes += v.nonnegative("spec.updateStrategy.rollingUpdate.partition",
                                    (strategy.get("rollingUpdate") or {}).get("partition"))
        elif kind != "OnDelete":
            causes.append(v.invalid("spec.updateStrategy", strategy, "must be 'RollingUpdate' or 'OnDelete'"))
        retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
        for key in ("whenDeleted", "whenScaled"):
            if retention.get(key) not in (None, "Retain", "Delete"):
                causes.append(v.not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{key}", retention[key], ["Retain", "Delete"]))
        causes += pod_template.nonnegative_fields(spec, "replicas", "minReadySeconds", "revisionHistoryLimit")
        causes += v.nonnegative("spec.ordinals.start", (spec.get("ordinals") or {}).get("start"))
        causes += pod_template.selector_and_template(_with_claim_volumes(spec), "statefulset", old_spec=(old or {}).get("spec"))
        causes += pod_template.always_restarts(spec)
        deadline = ((spec.get("template") or {}).get("spec") or {}).get("activeDeadlineSeconds")
        if deadline is not None:
            causes.append(v.invalid("spec.template.spec.activeDeadlineSeconds", deadline, "must not be specified"))
        return causes

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = super().validate_update(new, old)
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        rest = {k: val for k, val in spec.items() if k not in UPDATABLE}
        old_rest = {k: val for k, val in old_spec.items() if k not in UPDATABLE}
        if rest != old_rest:
            causes.append(v.forbidden("spec", UPDATE_FORBIDDEN))
        return causes


def _with_claim_volumes(spec: Obj) -> Obj:
    """The spec with a volume per volumeClaimTemplate in its template, as the controller adds them
    to each pod, so volumeMounts naming a claim template validate (upstream checks mounts against
    the union of both)."""
    names = [(t.get("metadata") or {}).get("name") for t in spec.get("volumeClaimTemplates") or []]
    template = spec.get("template")
    if not names or not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return spec
    pod_spec = template["spec"]
    have = {vol.get("name") for vol in pod_spec.get("volumes") or [] if isinstance(vol, dict)}
    extra = [{"name": n, "persistentVolumeClaim": {"claimName": n}} for n in names if n and n not in have]
    if not extra:
        return spec
    return {**spec, "template": {**template, "spec": {**pod_spec, "volumes": list(pod_spec.get("volumes") or []) + extra}}}
