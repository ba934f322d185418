"""ValidateService and ValidateServiceUpdate of pkg/apis/core/validation, with their messages.

Covers ports, selector, session affinity, the clusterIP/clusterIPs/ipFamilies/ipFamilyPolicy
rules, external IPs (strict IP forms), type-specific fields and traffic policies; on update, the
rule that a set cluster IP may not change. Called by `service.py`.
"""

from __future__ import annotations

from typing import Any

from apiserver import validation as v
from apiserver.kinds import service_policies

Obj = dict[str, Any]
Causes = list[dict[str, str]]

_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]


def is_headless(spec: Obj) -> bool:
    return (spec.get("clusterIPs") or []) == ["None"]


def _port_key(port: Obj, **override: Any) -> Obj:
    """An internal core.ServicePort as JSON renders it: Go field names, since it has no json tags."""
    key = {"Name": "", "Protocol": port.get("protocol") or "", "AppProtocol": None, "Port": 0, "TargetPort": 0, "NodePort": 0}
    key.update(override)
    return key


def _ports(spec: Obj) -> Causes:
    causes: Causes = []
    ports = spec.get("ports") or []
    names: set[str] = set()
    for i, port in enumerate(ports):
        p, name = f"spec.ports[{i}]", port.get("name") or ""
        if len(ports) > 1 and not name:
            causes.append(v.required(f"{p}.name"))
        elif name:
            causes += [v.invalid(f"{p}.name", name, m) for m in v.dns1123_label(name)]
            if name in names:
                causes.append(v.duplicate(f"{p}.name", name))
            names.add(name)
        causes += [v.invalid(f"{p}.port", port.get("port", 0), m) for m in v.port_number(port.get("port"))]
        protocol = port.get("protocol") or ""
        if not protocol:
            causes.append(v.required(f"{p}.protocol"))
        elif protocol not in _PROTOCOLS:
            causes.append(v.not_supported(f"{p}.protocol", protocol, _PROTOCOLS))
        target = port.get("targetPort", 0)
        problems = v.port_name(target) if isinstance(target, str) else v.port_number(target)
        causes += [v.invalid(f"{p}.targetPort", target, m) for m in problems]
        if port.get("appProtocol") is not None:
            causes += [v.invalid(f"{p}.appProtocol", port["appProtocol"], m) for m in v.qualified_name(port["appProtocol"])]
    if spec.get("type") == "ClusterIP":
        causes += [v.forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'")
                   for i, port in enumerate(ports) if port.get("nodePort")]
    seen_node_ports: set[tuple[str, int]] = set()
    seen_ports: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        protocol = port.get("protocol") or ""
        if port.get("nodePort"):
            if (protocol, port["nodePort"]) in seen_node_ports:
                causes.append(v.duplicate(f"spec.ports[{i}].nodePort", port["nodePort"]))
            seen_node_ports.add((protocol, port["nodePort"]))
        if (protocol, port.get("port", 0)) in seen_ports:
            causes.append(v.duplicate(f"spec.ports[{i}]", _port_key(port, Port=port.get("port", 0))))
        seen_ports.add((protocol, port.get("port", 0)))
    return causes


def _cluster_ips(spec: Obj) -> Causes:
    """ValidateServiceClusterIPsRelatedFields."""
    if spec.get("type") == "ExternalName":
        return []
    causes: Causes = []
    cluster_ip, cluster_ips = spec.get("clusterIP") or "", spec.get("clusterIPs") or []
    if cluster_ip:
        if not cluster_ips:
            causes.append(v.required("spec.clusterIPs"))
        elif cluster_ips[0] != cluster_ip:
            causes.append(v.invalid("spec.clusterIPs", cluster_ips, "first value must match `clusterIP`"))
    elif cluster_ips:
        causes.append(v.invalid("spec.clusterIPs", cluster_ips, "must be empty when `clusterIP` is not specified"))
    seen: set[str] = set()
    for i, family in enumerate(spec.get("ipFamilies") or []):
        if family not in ("IPv4", "IPv6"):
            causes.append(v.not_supported(f"spec.ipFamilies[{i}]", family, ["IPv4", "IPv6"]))
        if family in seen:
            causes.append(v.duplicate(f"spec.ipFamilies[{i}]", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in ("PreferDualStack", "RequireDualStack", "SingleStack"):
        causes.append(v.not_supported("spec.ipFamilyPolicy", policy, ["PreferDualStack", "RequireDualStack", "SingleStack"]))
    bad_ips = False
    for i, ip in enumerate(cluster_ips):
        if i == 0 and ip == "None":
            if len(cluster_ips) > 1:
                bad_ips = True
                causes.append(v.invalid("spec.clusterIPs", cluster_ips, "'None' must be the first and only value"))
            continue
        errs = v.ip_address(ip, f"spec.clusterIPs[{i}]")
        bad_ips = bad_ips or bool(errs)
        causes += errs
    if len(cluster_ips) > 2:
        causes.append(v.invalid("spec.clusterIPs", cluster_ips, "may only hold up to 2 values"))
    if bad_ips:
        return causes
    if len(cluster_ips) > 1 and len({":" in ip for ip in cluster_ips}) != len(cluster_ips):
        causes.append(v.invalid("spec.clusterIPs", cluster_ips, "may specify no more than one IP for each IP family"))
    families = spec.get("ipFamilies") or []
    if not is_headless(spec):
        for i, (ip, family) in enumerate(zip(cluster_ips, families)):
            if family == "IPv4" and ":" in ip:
                causes.append(v.invalid(f"spec.clusterIPs[{i}]", ip, f"expected an IPv4 value as indicated by `ipFamilies[{i}]`"))
            if family == "IPv6" and ":" not in ip:
                causes.append(v.invalid(f"spec.clusterIPs[{i}]", ip, f"expected an IPv6 value as indicated by `ipFamilies[{i}]`"))
    return causes


def _by_type(spec: Obj) -> Causes:
    causes: Causes = []
    kind = spec.get("type")
    if kind in ("LoadBalancer", "NodePort") and is_headless(spec):
        causes.append(v.invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services"))
    if kind == "ExternalName":
        for key in ("clusterIPs", "ipFamilies"):
            if spec.get(key):
                causes.append(v.forbidden(f"spec.{key}", "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            causes.append(v.forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
        cname = (spec.get("externalName") or "").removesuffix(".")
        if cname:
            causes += [v.invalid("spec.externalName", cname, m) for m in v.dns1123_subdomain(cname)]
        else:
            causes.append(v.required("spec.externalName"))
    return causes


def validate(svc: Obj) -> Causes:
    spec = svc.get("spec") or {}
    causes: Causes = []
    if not spec.get("ports") and not is_headless(spec) and spec.get("type") != "ExternalName":
        causes.append(v.required("spec.ports"))
    causes += _by_type(spec) + _ports(spec)
    causes += v.labels(spec.get("selector"), "spec.selector")
    causes += _cluster_ips(spec)
    for i, ip in enumerate(spec.get("externalIPs") or []):
        errs = v.ip_address(ip, f"spec.externalIPs[{i}]")
        causes += errs or v.non_special_ip(ip, f"spec.externalIPs[{i}]")
    kind = spec.get("type") or ""
    if not kind:
        causes.append(v.required("spec.type"))
    elif kind not in _TYPES:
        causes.append(v.not_supported("spec.type", kind, _TYPES))
    return causes + service_policies.validate(spec)


def validate_update(svc: Obj, old: Obj) -> Causes:
    """What ValidateServiceUpdate adds: set cluster IPs and families may not change."""
    spec, old_spec = svc.get("spec") or {}, old.get("spec") or {}
    causes: Causes = []
    if "ExternalName" in (spec.get("type"), old_spec.get("type")) or (is_headless(spec) and is_headless(old_spec)):
        return causes
    new_ips, old_ips = spec.get("clusterIPs") or [], old_spec.get("clusterIPs") or []
    if len(new_ips) == len(old_ips):
        causes += [v.invalid(f"spec.clusterIPs[{i}]", new_ips, "may not change once set")
                   for i, ip in enumerate(old_ips) if ip != new_ips[i]]
    elif len(old_ips) > len(new_ips):
        if not new_ips:
            causes.append(v.invalid("spec.clusterIPs[0]", new_ips, "primary clusterIP can not be unset"))
        elif new_ips[0] != old_ips[0]:
            causes.append(v.invalid("spec.clusterIPs[0]", new_ips, "may not change once set"))
    elif old_ips and new_ips[0] != old_ips[0]:
        causes.append(v.invalid("spec.clusterIPs[0]", new_ips, "may not change once set"))
    if is_headless(spec) == is_headless(old_spec) and not is_headless(spec):
        new_families, old_families = spec.get("ipFamilies") or [], old_spec.get("ipFamilies") or []
        if len(new_families) == len(old_families) and new_families != old_families:
            causes.append(v.invalid("spec.ipFamilies[0]", new_families, "may not change once set"))
    if old_spec.get("type") == "LoadBalancer" and spec.get("type") == "LoadBalancer" \
            and spec.get("loadBalancerClass") != old_spec.get("loadBalancerClass"):
        causes.append(v.invalid("spec.loadBalancerClass", spec.get("loadBalancerClass"), "may not change once set"))
    return causes
