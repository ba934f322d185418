"""Services: 1.36 defaults, allocated values kept across updates, the 1.36 warnings.

Defaults: type ClusterIP, sessionAffinity None, port protocol TCP, targetPort = port,
internalTrafficPolicy Cluster, externalTrafficPolicy Cluster when externally reachable,
allocateLoadBalancerNodePorts, and — on this single-stack IPv4 cluster — ipFamilyPolicy
SingleStack with ipFamilies [IPv4]. Cluster IPs and node ports are chosen by `allocate()`, which
the write path calls with the values in use (`service_allocation.py` holds no state).
Validation lives in `service_validation.py`. No metadata.generation for services.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from apiserver import validation as v
from apiserver.kinds import service_allocation, service_policies, service_validation
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

_TOPOLOGY_HINTS = "service.kubernetes.io/topology-aware-hints"
_TOPOLOGY_MODE = "service.kubernetes.io/topology-mode"


def _needs_node_ports(spec: Obj) -> bool:
    kind = spec.get("type")
    return kind == "NodePort" or (kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True))


class ServiceStrategy(DefaultingStrategy):
    counts_generation = False

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if not spec.get("sessionAffinity"):
            spec["sessionAffinity"] = "None"
        if spec["sessionAffinity"] == "None":
            spec.pop("sessionAffinityConfig", None)
        elif spec["sessionAffinity"] == "ClientIP":
            client_ip = (spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}
            if client_ip.get("timeoutSeconds") is None:
                spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
        if not spec.get("type"):
            spec["type"] = "ClusterIP"
        for port in spec.get("ports") or []:
            port.setdefault("protocol", "TCP")
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
        kind = spec["type"]
        if service_policies.externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
            spec["externalTrafficPolicy"] = "Cluster"
        if spec.get("internalTrafficPolicy") is None and kind in ("ClusterIP", "NodePort", "LoadBalancer"):
            spec["internalTrafficPolicy"] = "Cluster"
        if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        # The strategy keeps clusterIP and clusterIPs in step, whichever one the client sent.
        if spec.get("clusterIP") and not spec.get("clusterIPs"):
            spec["clusterIPs"] = [spec["clusterIP"]]
        elif spec.get("clusterIPs") and not spec.get("clusterIP"):
            spec["clusterIP"] = spec["clusterIPs"][0]
        if kind != "ExternalName":
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            if not spec.get("ipFamilies"):
                spec["ipFamilies"] = ["IPv4"]

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"loadBalancer": {}}

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
        # patchAllocatedValues: a client that leaves out what the server allocated keeps it.
        if spec.get("type", "ClusterIP") != "ExternalName" and old_spec.get("type") != "ExternalName":
            if not spec.get("clusterIP") and not spec.get("clusterIPs") and old_spec.get("clusterIP"):
                spec["clusterIP"] = old_spec["clusterIP"]
                spec["clusterIPs"] = copy.deepcopy(old_spec.get("clusterIPs") or [old_spec["clusterIP"]])
            if not spec.get("ipFamilies") and old_spec.get("ipFamilies"):
                spec["ipFamilies"] = copy.deepcopy(old_spec["ipFamilies"])
        if _needs_node_ports(spec) and _needs_node_ports(old_spec):
            by_name = {p.get("name", ""): p.get("nodePort") for p in old_spec.get("ports") or []}
            in_use = {p.get("nodePort") for p in spec.get("ports") or [] if p.get("nodePort")}
            for port in spec.get("ports") or []:
                previous = by_name.get(port.get("name", ""))
                if not port.get("nodePort") and previous and previous not in in_use:
                    port["nodePort"] = previous
        if old_spec.get("healthCheckNodePort") and not spec.get("healthCheckNodePort") \
                and spec.get("externalTrafficPolicy") == "Local" and spec.get("type") == "LoadBalancer":
            spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]
        if not _needs_node_ports(spec) and _needs_node_ports(old_spec):
            # dropTypeDependentFields: node ports the client did not change go with the old type.
            old_ports = {(p.get("port"), p.get("nodePort")) for p in old_spec.get("ports") or []}
            for port in spec.get("ports") or []:
                if (port.get("port"), port.get("nodePort")) in old_ports:
                    port.pop("nodePort", None)
        super().prepare_for_update(new, old)

    def allocate(self, obj: Obj, *, used_cluster_ips: Iterable[str], used_node_ports: Iterable[int],
                 old: Obj | None = None) -> Causes:
        """Fill in a cluster IP and node ports; causes for requested values that cannot be had.

        On update pass the stored object as `old`: what it holds is not "in use" by someone else.
        """
        spec = obj.setdefault("spec", {})
        used_ips, used_ports = set(used_cluster_ips), set(used_node_ports)
        if old is not None:
            old_ips, old_ports = used_values([old])
            used_ips -= old_ips
            used_ports -= old_ports
        causes: Causes = []
        if spec.get("type") != "ExternalName" and spec.get("clusterIP") != "None":
            if spec.get("clusterIP"):
                problem = service_allocation.cluster_ip_error(spec["clusterIP"], used_ips)
                if problem:
                    causes.append(v.invalid("spec.clusterIPs", spec.get("clusterIPs") or [spec["clusterIP"]],
                                            f"failed to allocate IP {spec['clusterIP']}: {problem}"))
            else:
                chosen = service_allocation.allocate_cluster_ip(used_ips)
                if chosen is None:
                    causes.append(v.invalid("spec.clusterIPs", [], "failed to allocate a serviceIP: range is full"))
                else:
                    spec["clusterIP"], spec["clusterIPs"] = chosen, [chosen]
        if _needs_node_ports(spec):
            for i, port in enumerate(spec.get("ports") or []):
                if port.get("nodePort"):
                    problem = service_allocation.node_port_error(port["nodePort"], used_ports)
                    if problem:
                        causes.append(v.invalid(f"spec.ports[{i}].nodePort", port["nodePort"], problem))
                    used_ports.add(port["nodePort"])
            for port in spec.get("ports") or []:
                if not port.get("nodePort"):
                    port["nodePort"] = service_allocation.allocate_node_port(used_ports)
                    used_ports.add(port["nodePort"])
        if spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local" \
                and not spec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = service_allocation.allocate_node_port(used_ports)
        return causes

    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        meta = obj.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        if _TOPOLOGY_MODE in annotations and _TOPOLOGY_HINTS in annotations \
                and annotations[_TOPOLOGY_MODE] != annotations[_TOPOLOGY_HINTS]:
            causes.append(v.invalid(f"metadata.annotations[{_TOPOLOGY_MODE}]", annotations[_TOPOLOGY_MODE],
                                    f"must match annotations[{_TOPOLOGY_HINTS}] when both are specified"))
        return causes + service_validation.validate(obj) + self._families(obj.get("spec") or {})

    @staticmethod
    def _families(spec: Obj) -> Causes:
        """This cluster is single-stack IPv4, as kube-apiserver with one service CIDR is."""
        if spec.get("type") == "ExternalName":
            return []
        if spec.get("ipFamilyPolicy") == "RequireDualStack":
            return [v.invalid("spec.ipFamilyPolicy", "RequireDualStack", "this cluster is not configured for dual-stack services")]
        return [v.invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster")
                for i, family in enumerate(spec.get("ipFamilies") or []) if family == "IPv6"]

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + service_validation.validate_update(new, old) + self.validate(new)

    def validate_status_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        ingress = ((new.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        if ingress and (new.get("spec") or {}).get("type") != "LoadBalancer":
            return causes + [v.forbidden("status.loadBalancer.ingress", "may only be used when `spec.type` is 'LoadBalancer'")]
        for i, entry in enumerate(ingress):
            path = f"status.loadBalancer.ingress[{i}]"
            if entry.get("ip"):
                causes += v.ip_address(entry["ip"], f"{path}.ip")
                if entry.get("ipMode") is None:
                    causes.append(v.required(f"{path}.ipMode", "must be specified when `ip` is set"))
            elif entry.get("ipMode") is not None:
                causes.append(v.forbidden(f"{path}.ipMode", "may not be specified when `ip` is not set"))
        return causes

    def warnings(self, obj: Obj, old: Obj | None = None) -> list[str]:
        """GetWarningsForService as of 1.36, including the externalIPs deprecation."""
        spec, annotations = obj.get("spec") or {}, (obj.get("metadata") or {}).get("annotations") or {}
        warnings: list[str] = []
        if _TOPOLOGY_HINTS in annotations:
            warnings.append(f"annotation {_TOPOLOGY_HINTS} is deprecated, please use {_TOPOLOGY_MODE} instead")
        headless = spec.get("type") == "ClusterIP" and spec.get("clusterIP") == "None"
        if headless:
            if spec.get("loadBalancerIP"):
                warnings.append("spec.loadBalancerIP is ignored for headless services")
            if spec.get("externalIPs"):
                warnings.append("spec.externalIPs is ignored for headless services")
            if spec.get("sessionAffinity") != "None":
                warnings.append("spec.SessionAffinity is ignored for headless services")
        if spec.get("externalIPs") and not headless and spec.get("type") != "ExternalName":
            warnings.append("spec.externalIPs is deprecated and may no longer be implemented in some clusters")
        if spec.get("type") == "ExternalName" and spec.get("externalIPs"):
            warnings.append('spec.externalIPs is ignored when spec.type is "ExternalName"')
        if spec.get("type") != "ExternalName" and spec.get("externalName"):
            warnings.append('spec.externalName is ignored when spec.type is not "ExternalName"')
        if spec.get("trafficDistribution") == "PreferClose":
            warnings.append('spec.trafficDistribution: "PreferClose" is deprecated; use "PreferSameZone"')
        return warnings


def used_values(services: Iterable[dict[str, Any]]) -> tuple[set[str], set[int]]:
    """The cluster IPs and node ports that stored services hold, for `allocate()`."""
    ips: set[str] = set()
    ports: set[int] = set()
    for svc in services:
        spec = svc.get("spec") or {}
        ips.update(ip for ip in spec.get("clusterIPs") or [] if ip and ip != "None")
        ports.update(p["nodePort"] for p in spec.get("ports") or [] if p.get("nodePort"))
        if spec.get("healthCheckNodePort"):
            ports.add(spec["healthCheckNodePort"])
    return ips, ports
