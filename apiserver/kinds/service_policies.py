"""The Service fields that depend on its type: session affinity, traffic policies, load-balancer fields.

Part of ValidateService (pkg/apis/core/validation), with its messages — including upstream's
`spec.LoadBalancerSourceRanges` and bare `allocateLoadBalancerNodePorts` paths. Called by
`service_validation.validate()`; `externally_accessible()` also serves the defaults in `service.py`.
"""

from __future__ import annotations

from typing import Any

from apiserver import validation as v

Obj = dict[str, Any]
Causes = list[dict[str, str]]

_LB_ONLY = "may only be used when `type` is 'LoadBalancer'"
_TRAFFIC_DISTRIBUTIONS = ["PreferClose", "PreferSameZone", "PreferSameNode"]


def externally_accessible(spec: Obj) -> bool:
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (kind == "ClusterIP" and bool(spec.get("externalIPs")))


def validate(spec: Obj) -> Causes:
    causes: Causes = []
    kind, affinity = spec.get("type"), spec.get("sessionAffinity") or ""
    if not affinity:
        causes.append(v.required("spec.sessionAffinity"))
    elif affinity not in ("ClientIP", "None"):
        causes.append(v.not_supported("spec.sessionAffinity", affinity, ["ClientIP", "None"]))
    if affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        causes.append(v.forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None"))
    if affinity == "ClientIP":
        timeout = (((spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}).get("timeoutSeconds"))
        if timeout is None:
            causes.append(v.required("spec.sessionAffinityConfig.clientIP.timeoutSeconds", "when session affinity type is ClientIP"))
        elif not 0 < timeout <= 86400:
            causes.append(v.invalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds", timeout, "must be greater than 0 and less than 86400"))
    if spec.get("loadBalancerSourceRanges"):
        if kind != "LoadBalancer":
            causes.append(v.forbidden("spec.LoadBalancerSourceRanges", _LB_ONLY))
        for i, value in enumerate(spec["loadBalancerSourceRanges"]):
            causes += v.cidr(value.strip(), f"spec.LoadBalancerSourceRanges[{i}]")
    if spec.get("allocateLoadBalancerNodePorts") is not None and kind != "LoadBalancer":
        causes.append(v.forbidden("spec.allocateLoadBalancerNodePorts", _LB_ONLY))
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        causes.append(v.required("allocateLoadBalancerNodePorts"))
    if spec.get("loadBalancerClass") is not None:
        if kind != "LoadBalancer":
            causes.append(v.forbidden("spec.loadBalancerClass", _LB_ONLY))
        else:
            causes += [v.invalid("spec.loadBalancerClass", spec["loadBalancerClass"], m)
                       for m in v.qualified_name(spec["loadBalancerClass"])]
    external = spec.get("externalTrafficPolicy") or ""
    if not externally_accessible(spec):
        if external:
            causes.append(v.invalid("spec.externalTrafficPolicy", external, "may only be set for externally-accessible services"))
    elif not external:
        causes.append(v.required("spec.externalTrafficPolicy"))
    elif external not in ("Cluster", "Local"):
        causes.append(v.not_supported("spec.externalTrafficPolicy", external, ["Cluster", "Local"]))
    needs_health_check = kind == "LoadBalancer" and external == "Local"
    health = spec.get("healthCheckNodePort") or 0
    if not needs_health_check and health:
        causes.append(v.invalid("spec.healthCheckNodePort", health,
                                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
    internal = spec.get("internalTrafficPolicy")
    if internal is None and kind in ("ClusterIP", "NodePort", "LoadBalancer"):
        causes.append(v.required("spec.internalTrafficPolicy"))
    elif internal is not None and internal not in ("Cluster", "Local"):
        causes.append(v.not_supported("spec.internalTrafficPolicy", internal, ["Cluster", "Local"]))
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution not in _TRAFFIC_DISTRIBUTIONS:
        causes.append(v.not_supported("spec.trafficDistribution", distribution, _TRAFFIC_DISTRIBUTIONS))
    return causes
