"""Validation of a PodSpec (pods and pod templates) with the 1.36 messages.

Mirrors ValidatePodSpec and ValidatePodTemplateSpec of pkg/apis/core/validation, including
`hostUsers: false` forbidding hostNetwork/hostPID/hostIPC (user namespaces are GA in 1.36).
Containers are checked by `container_validation.py`, AppArmor fields and annotations by
`apparmor.py`, refused volume types (gitRepo) by `volume_policy.py`. Callers: `pod.py`
(is_pod=True) and `pod_template.py` for workloads.
"""

from __future__ import annotations

from typing import Any

from apiserver import validation as v
from apiserver.kinds import apparmor, container_validation, volume_policy

Obj = dict[str, Any]
Causes = list[dict[str, str]]

# The order upstream's validateVolumeSource checks them in; a second one is "more than 1".
_VOLUME_TYPES = (
    "emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs", "iscsi",
    "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte", "downwardAPI", "fc",
    "flexVolume", "configMap", "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume",
    "azureDisk", "storageos", "projected", "scaleIO", "csi", "ephemeral", "image",
)
_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_HOST_USERS_MSG = "when `pod.Spec.HostUsers` is false"
_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def volumes(vols: list[Obj], path: str) -> tuple[set[str], Causes]:
    causes: Causes = []
    names: set[str] = set()
    for i, vol in enumerate(vols):
        p, name = f"{path}[{i}]", vol.get("name") or ""
        errs: Causes = []
        kinds = [k for k in _VOLUME_TYPES if vol.get(k) is not None]
        errs += [v.forbidden(f"{p}.{k}", "may not specify more than 1 volume type") for k in kinds[1:]]
        if not kinds:
            errs.append(v.required(p, "must specify a volume type"))
        if not name:
            errs.append(v.required(f"{p}.name"))
        else:
            errs += [v.invalid(f"{p}.name", name, m) for m in v.dns1123_label(name)]
        if name and name in names:
            errs.append(v.duplicate(f"{p}.name", name))
        if not errs:
            names.add(name)
        causes += errs
    return names, causes


def tolerations(items: list[Obj], path: str) -> Causes:
    causes: Causes = []
    for i, t in enumerate(items):
        p, key, operator, value = f"{path}[{i}]", t.get("key") or "", t.get("operator") or "", t.get("value") or ""
        effect = t.get("effect") or ""
        if key:
            causes += v.label_name(key, f"{p}.key")
        if not key and operator != "Exists":
            causes.append(v.invalid(f"{p}.operator", operator,
                                    "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            causes.append(v.invalid(f"{p}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            problems = v.label_value(value)
            if problems:
                causes.append(v.invalid(f"{p}.operator", value, ";".join(problems)))
        elif operator == "Exists":
            if value:
                causes.append(v.invalid(f"{p}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            causes.append(v.not_supported(f"{p}.operator", operator, ["Equal", "Exists"]))
        if effect and effect not in _TAINT_EFFECTS:
            causes.append(v.not_supported(f"{p}.effect", effect, _TAINT_EFFECTS))
    return causes


def _host_users(spec: Obj, path: str, allow_host_network: bool) -> Causes:
    if spec.get("hostUsers") is not False:
        return []
    causes: Causes = []
    # Upstream spells two of the three paths with a capital H; clients see exactly that.
    for key, shown in (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")):
        if key == "hostNetwork" and allow_host_network:
            continue  # UserNamespacesHostNetworkSupport (KEP-5607)
        if spec.get(key):
            causes.append(v.forbidden(f"{path}.{shown}", _HOST_USERS_MSG))
    return causes


def _names(spec: Obj, path: str) -> Causes:
    causes: Causes = []
    for key, rule in (("serviceAccountName", v.dns1123_subdomain), ("nodeName", v.dns1123_subdomain)):
        if spec.get(key):
            causes += [v.invalid(f"{path}.{key}", spec[key], m) for m in rule(spec[key])]
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= 2147483647:
        causes.append(v.invalid(f"{path}.activeDeadlineSeconds", deadline, v.inclusive_range(1, 2147483647)))
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            causes += [v.invalid(f"{path}.{key}", spec[key], m) for m in v.dns1123_label(spec[key])]
    return causes


def pod_spec(spec: Obj, path: str, *, is_pod: bool, userns_host_network: bool = False) -> Causes:
    """ValidatePodSpec (+ the pod-only additions of validatePodMetadataAndSpec when is_pod).

    `userns_host_network`: upstream's AllowUserNamespacesWithHostNetwork option (the gate is on, or
    the stored pod already had both), which lets `hostUsers: false` go with `hostNetwork`."""
    causes: Causes = []
    if spec.get("terminationGracePeriodSeconds") is None:
        causes.append(v.required(f"{path}.terminationGracePeriodSeconds"))
    vol_names, vol_causes = volumes(spec.get("volumes") or [], f"{path}.volumes")
    causes += vol_causes
    regular = spec.get("containers") or []
    inits = spec.get("initContainers") or []
    causes += container_validation.regular(regular, vol_names, f"{path}.containers")
    regular_names = {c.get("name") or "" for c in regular}
    causes += container_validation.init(inits, regular_names, vol_names, f"{path}.initContainers")
    other_names = regular_names | {c.get("name") or "" for c in inits}
    causes += container_validation.ephemeral(spec.get("ephemeralContainers") or [], other_names, vol_names,
                                             f"{path}.ephemeralContainers")
    if spec.get("hostNetwork"):
        for ci, c in enumerate(regular):
            for pi, port in enumerate(c.get("ports") or []):
                host, container = port.get("hostPort") or 0, port.get("containerPort")
                if (is_pod or host) and host != container:
                    causes.append(v.invalid(f"{path}.containers[{ci}].ports[{pi}].hostPort", host,
                                            "must match `containerPort` when `hostNetwork` is true"))
    restart = spec.get("restartPolicy") or ""
    if not restart:
        causes.append(v.required(f"{path}.restartPolicy"))
    elif restart not in _RESTART_POLICIES:
        causes.append(v.not_supported(f"{path}.restartPolicy", restart, _RESTART_POLICIES))
    dns = spec.get("dnsPolicy") or ""
    if not dns:
        causes.append(v.required(f"{path}.dnsPolicy"))
    elif dns not in _DNS_POLICIES:
        causes.append(v.not_supported(f"{path}.dnsPolicy", dns, _DNS_POLICIES))
    elif dns == "None" and not spec.get("dnsConfig"):
        causes.append(v.required(f"{path}.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None"))
    causes += v.labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    causes += apparmor.profile_field((spec.get("securityContext") or {}).get("appArmorProfile"),
                                     f"{path}.securityContext.appArmorProfile")
    seen_gates: set[str] = set()
    for i, gate in enumerate(spec.get("schedulingGates") or []):
        name = gate.get("name") or ""
        causes += [v.invalid(f"{path}.schedulingGates[{i}]", name, m) for m in v.qualified_name(name)]
        if name in seen_gates:
            causes.append(v.duplicate(f"{path}.schedulingGates[{i}]", name))
        seen_gates.add(name)
    causes += _host_users(spec, path, userns_host_network)
    causes += _names(spec, path)
    causes += tolerations(spec.get("tolerations") or [], f"{path}.tolerations")
    if spec.get("priorityClassName"):
        name = spec["priorityClassName"]
        causes += [v.invalid(f"{path}.priorityClassName", name, m) for m in v.dns1123_subdomain(name)]
    preemption = spec.get("preemptionPolicy")
    if preemption is not None and preemption not in ("PreemptLowerPriority", "Never"):
        causes.append(v.not_supported(f"{path}.preemptionPolicy", preemption, ["PreemptLowerPriority", "Never"]))
    os_name = (spec.get("os") or {}).get("name")
    if spec.get("os") is not None and os_name not in ("linux", "windows"):
        causes.append(v.required(f"{path}.os.name", "cannot be empty") if not os_name
                      else v.not_supported(f"{path}.os", os_name, ["linux", "windows"]))
    elif os_name == "windows":
        causes += apparmor.windows(spec, path)
    if is_pod:
        for key in ("containers", "initContainers"):
            for i, c in enumerate(spec.get(key) or []):
                image = c.get("image") or ""
                if image != image.strip():
                    causes.append(v.invalid(f"{path}.{key}[{i}].image", image, "must not have leading or trailing whitespace"))
    return causes


def template(tmpl: Any, path: str, old: Any = None) -> Causes:
    """ValidatePodTemplateSpec: metadata labels/annotations, the spec, no ephemeral containers.

    `old` is the stored object's template on an update: gitRepo volumes it had are let through."""
    if not isinstance(tmpl, dict):
        return [v.required(path)]
    meta, spec = tmpl.get("metadata") or {}, tmpl.get("spec") or {}
    causes = v.labels(meta.get("labels"), f"{path}.labels")
    causes += v.annotations(meta.get("annotations"), f"{path}.annotations")
    causes += apparmor.pod_annotations(meta.get("annotations"), spec, f"{path}.annotations")
    causes += pod_spec(spec, f"{path}.spec", is_pod=False)
    old_spec = (old.get("spec") or {}) if isinstance(old, dict) else None
    causes += volume_policy.git_repo(spec, f"{path}.spec", old_spec)
    if spec.get("ephemeralContainers"):
        causes.append(v.forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template"))
    return causes
