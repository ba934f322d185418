"""Validation of the containers of a PodSpec: regular, init and ephemeral, as 1.36 checks them.

Mirrors pkg/apis/core/validation's validateContainers / validateInitContainers /
validateEphemeralContainers and their shared validateContainerCommon, with upstream's messages.
Called by `podspec_validation.pod_spec()`; the pod-level rules live there, the AppArmor field rule
in `apparmor.py`.
"""

from __future__ import annotations

from typing import Any

from apiserver import validation as v
from apiserver.kinds import apparmor

Obj = dict[str, Any]
Causes = list[dict[str, str]]

_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
# Fields an ephemeral container may not set, in the order of the Container struct.
_NOT_FOR_EPHEMERAL = ("ports", "resources", "resizePolicy", "restartPolicy", "restartPolicyRules",
                      "livenessProbe", "readinessProbe", "startupProbe", "lifecycle")


def _ports(ports: list[Obj], path: str) -> Causes:
    causes: Causes = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        p = f"{path}[{i}]"
        name = port.get("name") or ""
        if name:
            problems = v.port_name(name)
            causes += [v.invalid(f"{p}.name", name, m) for m in problems]
            if not problems and name in names:
                causes.append(v.duplicate(f"{p}.name", name))
            names.add(name)
        container_port = port.get("containerPort")
        if not container_port:
            causes.append(v.required(f"{p}.containerPort"))
        else:
            causes += [v.invalid(f"{p}.containerPort", container_port, m) for m in v.port_number(container_port)]
        if port.get("hostPort"):
            causes += [v.invalid(f"{p}.hostPort", port["hostPort"], m) for m in v.port_number(port["hostPort"])]
        protocol = port.get("protocol") or ""
        if not protocol:
            causes.append(v.required(f"{p}.protocol"))
        elif protocol not in _PROTOCOLS:
            causes.append(v.not_supported(f"{p}.protocol", protocol, _PROTOCOLS))
    return causes


def _env(env: list[Obj], path: str) -> Causes:
    causes: Causes = []
    for i, var in enumerate(env):
        name = var.get("name") or ""
        if not name:
            causes.append(v.required(f"{path}[{i}].name"))
        elif "=" in name or not all(" " <= ch <= "~" for ch in name):
            causes.append(v.invalid(f"{path}[{i}].name", name, "a valid environment variable name must consist "
                                    "only of printable ASCII characters other than '='"))
    return causes


def _volume_mounts(mounts: list[Obj], volumes: set[str], path: str) -> Causes:
    causes: Causes = []
    seen_paths: set[str] = set()
    for i, mount in enumerate(mounts):
        p, name, mount_path = f"{path}[{i}]", mount.get("name") or "", mount.get("mountPath") or ""
        if not name:
            causes.append(v.required(f"{p}.name"))
        elif name not in volumes:
            causes.append(v.not_found(f"{p}.name", name))
        if not mount_path:
            causes.append(v.required(f"{p}.mountPath"))
        elif mount_path in seen_paths:
            causes.append(v.invalid(f"{p}.mountPath", mount_path, "must be unique"))
        seen_paths.add(mount_path)
    return causes


def _resources(resources: Obj, path: str) -> Causes:
    causes: Causes = []
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    for kind, values in (("limits", limits), ("requests", requests)):
        for name, quantity in values.items():
            parsed = v.parse_quantity(quantity)
            if parsed is not None and parsed < 0:
                causes.append(v.invalid(f"{path}.{kind}[{name}]", quantity, v.NEGATIVE))
    for name, quantity in requests.items():
        request, limit = v.parse_quantity(quantity), v.parse_quantity(limits.get(name))
        if request is not None and limit is not None and request > limit:
            causes.append(v.invalid(f"{path}.requests", quantity, f"must be less than or equal to {name} limit of {limits[name]}"))
    return causes


def common(c: Obj, volumes: set[str], path: str) -> Causes:
    """validateContainerCommon: what every kind of container must satisfy."""
    causes: Causes = []
    name = c.get("name") or ""
    if not name:
        causes.append(v.required(f"{path}.name"))
    else:
        causes += [v.invalid(f"{path}.name", name, m) for m in v.dns1123_label(name)]
    if not c.get("image"):
        causes.append(v.required(f"{path}.image"))
    policy = c.get("terminationMessagePolicy") or ""
    if not policy:
        causes.append(v.required(f"{path}.terminationMessagePolicy"))
    elif policy not in _MESSAGE_POLICIES:
        causes.append(v.not_supported(f"{path}.terminationMessagePolicy", policy, _MESSAGE_POLICIES))
    causes += _ports(c.get("ports") or [], f"{path}.ports")
    causes += _env(c.get("env") or [], f"{path}.env")
    causes += _volume_mounts(c.get("volumeMounts") or [], volumes, f"{path}.volumeMounts")
    pull = c.get("imagePullPolicy") or ""
    if not pull:
        causes.append(v.required(f"{path}.imagePullPolicy"))
    elif pull not in _PULL_POLICIES:
        causes.append(v.not_supported(f"{path}.imagePullPolicy", pull, _PULL_POLICIES))
    causes += _resources(c.get("resources") or {}, f"{path}.resources")
    causes += apparmor.profile_field((c.get("securityContext") or {}).get("appArmorProfile"),
                                     f"{path}.securityContext.appArmorProfile")
    return causes


def _host_ports(containers: list[Obj], path: str, seen: set[str]) -> Causes:
    causes: Causes = []
    for ci, c in enumerate(containers):
        for pi, port in enumerate(c.get("ports") or []):
            if port.get("hostPort"):
                key = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{port['hostPort']}"
                if key in seen:
                    causes.append(v.duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key))
                seen.add(key)
    return causes


def regular(containers: list[Obj], volumes: set[str], path: str) -> Causes:
    if not containers:
        return [v.required(path)]
    causes: Causes = []
    names: set[str] = set()
    for i, c in enumerate(containers):
        p = f"{path}[{i}]"
        causes += common(c, volumes, p)
        if c.get("name") in names:
            causes.append(v.duplicate(f"{p}.name", c.get("name")))
        names.add(c.get("name") or "")
        if c.get("restartPolicy"):
            causes.append(v.forbidden(f"{p}.restartPolicy", "may not be set for non-init containers"))
    return causes + _host_ports(containers, path, set())


def init(containers: list[Obj], regular_names: set[str], volumes: set[str], path: str) -> Causes:
    causes: Causes = []
    names = set(regular_names)
    for i, c in enumerate(containers):
        p = f"{path}[{i}]"
        causes += common(c, volumes, p)
        restart = c.get("restartPolicy")
        if restart is not None and restart != "Always":
            causes.append(v.not_supported(f"{p}.restartPolicy", restart, ["Always"]))
        if c.get("name") in names:
            causes.append(v.duplicate(f"{p}.name", c.get("name")))
        elif c.get("name"):
            names.add(c["name"])
        causes += _host_ports([c], path, set())
        if restart != "Always":
            for key in ("lifecycle",) + _PROBES:
                if c.get(key) is not None:
                    causes.append(v.forbidden(f"{p}.{key}", "may not be set for init containers without restartPolicy=Always"))
    return causes


def ephemeral(containers: list[Obj], other_names: set[str], volumes: set[str], path: str) -> Causes:
    causes: Causes = []
    names = set(other_names)
    for i, c in enumerate(containers):
        p = f"{path}[{i}]"
        causes += common(c, volumes, p)
        image = c.get("image") or ""
        if image != image.strip():
            causes.append(v.invalid(f"{p}.image", image, "must not have leading or trailing whitespace"))
        if c.get("name") in names:
            causes.append(v.duplicate(f"{p}.name", c.get("name")))
        else:
            names.add(c.get("name") or "")
        target = c.get("targetContainerName")
        if target and target not in other_names:
            causes.append(v.not_found(f"{p}.targetContainerName", target))
        for key in _NOT_FOR_EPHEMERAL:
            if c.get(key) not in (None, {}, []):
                causes.append(v.forbidden(f"{p}.{key}", "cannot be set for an Ephemeral Container"))
        for j, mount in enumerate(c.get("volumeMounts") or []):
            for key in ("subPath", "subPathExpr"):
                if mount.get(key):
                    causes.append(v.forbidden(f"{p}.volumeMounts[{j}].{key}", "cannot be set for an Ephemeral Container"))
    return causes
