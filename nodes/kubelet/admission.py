"""Node-side admission: whether this kubelet may run a pod, with upstream's reason and message.

Follows `pkg/kubelet/lifecycle/predicate.go` (the predicate admit handler), in its order: the
`kubernetes.io/os` label and `spec.os` checks, then the scheduler's AdmissionCheck — resources fit
(pods, cpu, memory, ephemeral-storage, extended resources the node has), node affinity and
selector, node name, host ports — then untolerated NoExecute taints. Only the first failure is
reported. `admit(...)` is pure: the kubelet passes the pods it already runs. A rejected pod is
written Failed with `reason` and `"Pod was rejected: " + message` (kubelet.go rejectPod).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nodes.kubelet import resources

Obj = dict[str, Any]
_REASON_BY_RESOURCE = {"cpu": "OutOfcpu", "memory": "OutOfmemory", "ephemeral-storage": "OutOfephemeral-storage",
                       "pods": "OutOfpods"}
_NATIVE = ("cpu", "memory", "ephemeral-storage")


@dataclass(frozen=True)
class Rejection:
    reason: str
    message: str


def _predicate(name: str, description: str) -> Rejection:
    return Rejection(name, f"Predicate {name} failed: {description}")


def _insufficient(name: str, requested: int, used: int, capacity: int) -> Rejection:
    return Rejection(_REASON_BY_RESOURCE.get(name, f"OutOf{name}"),
                     f"Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}")


def admit(pod: Obj, node: Obj, running: list[Obj]) -> Rejection | None:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    spec = pod.get("spec") or {}
    if "kubernetes.io/os" in labels and labels["kubernetes.io/os"] != "linux":
        return Rejection("PodOSSelectorNodeLabelDoesNotMatch",
                         "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label")
    if (spec.get("os") or {}).get("name") not in (None, "linux"):
        return Rejection("PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS")
    for check in (_fits, _affinity, _node_name, _ports, _taints):
        rejection = check(pod, node, running)
        if rejection is not None:
            return rejection
    return None


def _fits(pod: Obj, node: Obj, running: list[Obj]) -> Rejection | None:
    allocatable = {name: resources.amount(name, q) for name, q in ((node.get("status") or {}).get("allocatable") or {}).items()}
    if len(running) + 1 > allocatable.get("pods", 0):
        return _insufficient("pods", 1, len(running), allocatable.get("pods", 0))
    wanted = {name: v for name, v in resources.pod_requests(pod).items()
              if name in _NATIVE or name in allocatable}  # extended resources the node lacks are cluster-level or DRA's
    if not any(wanted.values()):
        return None
    used: dict[str, int] = {}
    for other in running:
        for name, value in resources.pod_requests(other).items():
            used[name] = used.get(name, 0) + value
    for name in (*_NATIVE, *sorted(n for n in wanted if n not in _NATIVE)):
        requested = wanted.get(name, 0)
        if requested and requested + used.get(name, 0) > allocatable.get(name, 0):
            return _insufficient(name, requested, used.get(name, 0), allocatable.get(name, 0))
    return None


def _match_expression(expr: Obj, value: str | None) -> bool:
    operator, values = expr.get("operator"), expr.get("values") or []
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def _term_matches(term: Obj, node: Obj) -> bool:
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not expressions and not fields:
        return False  # an empty term matches nothing
    labels = (node.get("metadata") or {}).get("labels") or {}
    name = (node.get("metadata") or {}).get("name")
    return (all(_match_expression(e, labels.get(e.get("key", ""))) for e in expressions)
            and all(e.get("key") == "metadata.name" and _match_expression(e, name) for e in fields))


def _affinity(pod: Obj, node: Obj, running: list[Obj]) -> Rejection | None:
    spec = pod.get("spec") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    selector = spec.get("nodeSelector") or {}
    ok = all(labels.get(k) == v for k, v in selector.items())
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if ok and required is not None:
        ok = any(_term_matches(term, node) for term in required.get("nodeSelectorTerms") or [])
    return None if ok else _predicate("NodeAffinity", "node(s) didn't match Pod's node affinity/selector")


def _node_name(pod: Obj, node: Obj, running: list[Obj]) -> Rejection | None:
    wanted = (pod.get("spec") or {}).get("nodeName")
    if wanted and wanted != (node.get("metadata") or {}).get("name"):
        return _predicate("NodeName", "node(s) didn't match the requested node name")
    return None


def _host_ports(pod: Obj) -> list[tuple[str, str, int]]:
    ports = []
    spec = pod.get("spec") or {}
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                ports.append((port.get("protocol") or "TCP", port.get("hostIP") or "0.0.0.0", int(port["hostPort"])))
    return ports


def _ports(pod: Obj, node: Obj, running: list[Obj]) -> Rejection | None:
    taken = [p for other in running for p in _host_ports(other)]
    for protocol, ip, port in _host_ports(pod):
        for t_protocol, t_ip, t_port in taken:
            if (protocol, port) == (t_protocol, t_port) and (ip == t_ip or "0.0.0.0" in (ip, t_ip)):
                return _predicate("NodePorts", "node(s) didn't have free ports for the requested pod ports")
    return None


def tolerates(toleration: Obj, taint: Obj) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def _taints(pod: Obj, node: Obj, running: list[Obj]) -> Rejection | None:
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") != "NoExecute":
            continue  # the kubelet only cares about NoExecute; NoSchedule is the scheduler's
        if not any(tolerates(t, taint) for t in tolerations):
            return _predicate("TaintToleration", "node(s) had taints that the pod didn't tolerate")
    return None
