"""What a Service's endpoints are made of, shared by the EndpointSlice and Endpoints controllers.

`selects(service, pod)` (a plain-map selector over the pod's labels), `in_endpoints(pod,
include_terminating)` (upstream's ShouldPodBeInEndpoints: an IP, not finished, optionally not
deleting), `conditions(service, pod)` (ready / serving / terminating, publishNotReadyAddresses
making every pod ready), `resolve_port(service_port, pod)` (a named targetPort found among the
containers' ports of the same protocol) and `trigger_time(service, pods)`. Pure functions.
"""

from __future__ import annotations

from typing import Any

from controllers import pod_states, timestamps

Obj = dict[str, Any]
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
HEADLESS = "service.kubernetes.io/headless"


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def managed(service: Obj) -> bool:
    """Only Services with a selector have their endpoints made for them; the rest are the user's."""
    return bool((service.get("spec") or {}).get("selector"))


def is_headless(service: Obj) -> bool:
    return (service.get("spec") or {}).get("clusterIP") == "None"


def selects(service: Obj, pod: Obj) -> bool:
    selector = (service.get("spec") or {}).get("selector") or {}
    labels = _meta(pod).get("labels") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def in_endpoints(pod: Obj, include_terminating: bool) -> bool:
    status = pod.get("status") or {}
    if not status.get("podIP"):
        return False
    if not include_terminating and _meta(pod).get("deletionTimestamp"):
        return False
    restart = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    phase = status.get("phase")
    if restart == "Never" and phase in ("Succeeded", "Failed"):
        return False
    return not (restart == "OnFailure" and phase == "Succeeded")


def conditions(service: Obj, pod: Obj) -> Obj:
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    ready = publish or pod_states.is_ready(pod)
    terminating = bool(_meta(pod).get("deletionTimestamp"))
    # A terminating pod is never ready, unless the Service publishes the not-ready ones.
    return {"ready": ready and (publish or not terminating), "serving": ready, "terminating": terminating}


def ipv4(pod: Obj) -> str | None:
    status = pod.get("status") or {}
    for entry in status.get("podIPs") or [{"ip": status.get("podIP")}]:
        ip = (entry or {}).get("ip") or ""
        if ip and ":" not in ip:
            return str(ip)
    return None


def resolve_port(service_port: Obj, pod: Obj) -> int | None:
    """The pod's port for this service port: a number as it is, a name looked up in the containers."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol") or "TCP"
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port["containerPort"])
    return None


def hostname(service: Obj, pod: Obj) -> str | None:
    """A pod's hostname is published when it names this (headless) Service as its subdomain."""
    spec = pod.get("spec") or {}
    if is_headless(service) and spec.get("hostname") and spec.get("subdomain") == _meta(service).get("name"):
        return str(spec["hostname"])
    return None


def target_ref(pod: Obj) -> Obj:
    meta = _meta(pod)
    return {"kind": "Pod", "namespace": meta.get("namespace"), "name": meta.get("name"), "uid": meta.get("uid")}


def trigger_time(service: Obj, pods: list[Obj]) -> str | None:
    """The newest change among the service and its pods (creation, readiness), as upstream's tracker keeps it."""
    moments = [timestamps.parse(_meta(service).get("creationTimestamp"))]
    for pod in pods:
        moments.append(timestamps.parse(_meta(pod).get("creationTimestamp")))
        moments.append(timestamps.parse((pod_states.ready_condition(pod) or {}).get("lastTransitionTime")))
    known = [m for m in moments if m is not None]
    return timestamps.format(max(known)) if known else None
