"""Pods: 1.36 defaults, the admission defaults, status on create, generation, update rules.

Create: defaults (`podspec_defaults`) → ServiceAccount/DefaultTolerationSeconds/Priority
(`pod_admission`) → generation 1 (PodObservedGenerationTracking is GA in 1.36) → status
{phase: Pending, qosClass}, the SchedulingGated condition and the AppArmor annotation → field
sync (`apparmor.py`; its deprecation Warnings come from `create_warnings`). Update: status kept, generation
bumped on any spec change, then `pod_update`'s rule. gitRepo volumes are refused on create
(`volume_policy.py`); an update cannot add volumes to a pod. `/status`, `/ephemeralcontainers` and
`/resize` have their own strategies (`status_strategy()`, `pod_subresources.py`); what all of them
validate of metadata and spec is `pod_validation.py`'s.
"""

from __future__ import annotations

from typing import Any

from apiserver import features, validation as v
from apiserver.kinds import (
    apparmor, pod_admission, pod_qos, pod_subresources, pod_update, podspec_defaults, volume_policy,
)
from apiserver.kinds.pod_validation import metadata_and_spec, mirror_annotation_update, userns_with_host_network
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj, StatusStrategy

HOST_NETWORK_GATE = "UserNamespacesHostNetworkSupport"


class PodStrategy(DefaultingStrategy):
    counts_generation = True
    gates: features.FeatureGates | None = None  # set by `kinds.strategy_for`

    def _userns_host_network(self, old: Obj | None = None) -> bool:
        gates = self.gates if self.gates is not None else features.FeatureGates()
        return gates.enabled(HOST_NETWORK_GATE) or userns_with_host_network(old)

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        podspec_defaults.pod_spec(spec)
        podspec_defaults.pod_only(spec)
        # v1 conversion: the deprecated serviceAccount fills serviceAccountName and mirrors it on output.
        if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
            spec["serviceAccountName"] = spec["serviceAccount"]
        if spec.get("serviceAccountName"):
            spec["serviceAccount"] = spec["serviceAccountName"]

    def create_warnings(self, obj: Obj) -> list[str]:
        return apparmor.version_skew_warnings(obj)

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        spec = obj["spec"]
        pod_admission.admit_create(spec, obj["metadata"])
        status: dict[str, Any] = {"phase": "Pending", "qosClass": pod_qos.compute(spec)}
        if spec.get("schedulingGates"):
            status["conditions"] = [{
                "type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": None,
                "reason": "SchedulingGated", "message": "Scheduling is blocked due to non-empty scheduling gates",
            }]
        obj["status"] = status
        apparmor.apply_version_skew(obj)

    def validate(self, obj: Obj) -> Causes:
        causes = metadata_and_spec(obj, self.name_rule, userns_host_network=self._userns_host_network())
        spec = obj.get("spec") or {}
        causes += volume_policy.git_repo(spec, "spec")
        if spec.get("ephemeralContainers"):
            causes.append(v.forbidden("spec.ephemeralContainers", "cannot be set on create"))
        if spec.get("nodeName") and spec.get("schedulingGates"):
            causes.append(v.forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
        return causes + apparmor.annotations_match_fields(obj.get("metadata") or {}, spec, "spec")

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += metadata_and_spec(new, self.name_rule, userns_host_network=self._userns_host_network(old))
        causes += volume_policy.git_repo(new.get("spec") or {}, "spec", old.get("spec") or {})
        causes += mirror_annotation_update(new, old)
        return causes + pod_update.validate(new.get("spec") or {}, old.get("spec") or {})

    def validate_status_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        status, old_status = new.get("status") or {}, old.get("status") or {}
        for i, condition in enumerate(status.get("conditions") or []):
            kind = condition.get("type") or ""
            if kind not in ("PodScheduled", "Ready", "Initialized"):
                causes += [v.invalid(f"metadata.conditions[{i}].Type", kind, m) for m in v.qualified_name(kind)]
        nominated = status.get("nominatedNodeName")
        if nominated and nominated != old_status.get("nominatedNodeName"):
            causes += [v.invalid("status.nominatedNodeName", nominated, m) for m in v.dns1123_subdomain(nominated)]
        causes += v.immutable("status.qosClass", status.get("qosClass", ""), old_status.get("qosClass", ""))
        for i, entry in enumerate(status.get("podIPs") or []):
            causes += v.ip_address(entry.get("ip") or "", f"status.podIPs[{i}]")
        host_ips = status.get("hostIPs") or []
        if host_ips and status.get("hostIP") != host_ips[0].get("ip"):
            causes.append(v.invalid("status.hostIPs[0].ip", host_ips[0].get("ip") or "", "must be equal to `hostIP`"))
        for i, entry in enumerate(host_ips):
            causes += v.ip_address(entry.get("ip") or "", f"status.hostIPs[{i}]")
        return causes

    def status_strategy(self) -> StatusStrategy:
        return PodStatusStrategy(self)

    def ephemeralcontainers_strategy(self) -> DefaultingStrategy:
        return pod_subresources.EphemeralContainersStrategy(self)

    def resize_strategy(self) -> DefaultingStrategy:
        return pod_subresources.ResizeStrategy(self)


class PodStatusStrategy(StatusStrategy):
    """pods/status: spec and owner references stay; qosClass and observedGeneration are kept."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        status, old_status = new.setdefault("status", {}), old.get("status") or {}
        if not status.get("qosClass") and old_status.get("qosClass"):
            status["qosClass"] = old_status["qosClass"]
        if not status.get("observedGeneration") and old_status.get("observedGeneration"):
            status["observedGeneration"] = old_status["observedGeneration"]
        old_generations: dict[str, list[Any]] = {}
        for condition in old_status.get("conditions") or []:
            old_generations.setdefault(condition.get("type"), []).append(condition.get("observedGeneration"))
        for condition in status.get("conditions") or []:
            queue = old_generations.get(condition.get("type")) or []
            previous = queue.pop(0) if queue else None
            if not condition.get("observedGeneration") and previous:
                condition["observedGeneration"] = previous
