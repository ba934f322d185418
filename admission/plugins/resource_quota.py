"""The ResourceQuota plugin: refuse writes that would pass a quota's `hard`; compute `status.used`.

Usage per object follows upstream's evaluators: pods (`pods` and compute requests/limits of live
pods, `count/pods` of all), services (count, load balancers, node ports), PVCs (count, storage,
per storage class), and `count/<resource>[.<group>]` (plus the legacy names) for anything else.
Pod quotas may be scoped (Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass,
CrossNamespacePodAffinity). Validating (CREATE/UPDATE): usage now (from the store, plus
admitted writes not yet stored) plus this request's increase must stay within `hard`, else 403
"exceeded quota: …" with upstream's text; quotas on cpu/memory also require every container to
state them ("failed quota: q: must specify …"). `status_for(quota)` is what the API server's
follower writes into `status` (hard and used). Upstream: plugin/pkg/admission/resourcequota.
"""

from __future__ import annotations

import calendar
import time
from decimal import Decimal
from typing import Any, Callable

import msgspec

from admission import errors, quantities
from admission.attributes import CREATE, UPDATE, Attributes
from admission.plugins import limit_ranger
from admission.quantities import Quantity
from admission.view import ClusterView

Usage = dict[str, Quantity]
_ONE = Quantity(Decimal(1))
_PENDING_SECONDS = 30.0
_VALIDATED = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
_LEGACY_COUNTS = {("", "services"): "services", ("", "configmaps"): "configmaps", ("", "secrets"): "secrets",
                  ("", "persistentvolumeclaims"): "persistentvolumeclaims",
                  ("", "replicationcontrollers"): "replicationcontrollers", ("", "resourcequotas"): "resourcequotas"}
_POD_COMPUTE = ("cpu", "memory", "ephemeral-storage")


def _count_name(group: str, resource: str) -> str:
    return f"count/{resource}.{group}" if group else f"count/{resource}"


def _add(total: Usage, more: Usage) -> Usage:
    result = dict(total)
    for name, q in more.items():
        result[name] = result[name] + q if name in result else q
    return result


def _is_extended(name: str) -> bool:
    # helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io, not requests.* itself.
    return "/" in name and not name.startswith("requests.") and "kubernetes.io/" not in name.split("/")[0] + "/"


def pod_is_live(pod: dict[str, Any]) -> bool:
    """QuotaV1Pod: terminal pods, and pods past their deletion grace, no longer count."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    deletion = (pod.get("metadata") or {}).get("deletionTimestamp")
    if deletion:
        expiry = calendar.timegm(time.strptime(deletion, "%Y-%m-%dT%H:%M:%SZ"))
        grace = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds") or 0
        return time.time() <= expiry + grace
    return True


def _compute(requests: Usage, limits: Usage) -> Usage:
    usage: Usage = {"pods": _ONE}
    for name in _POD_COMPUTE:
        if name in requests:
            usage[name] = requests[name]
            usage[f"requests.{name}"] = requests[name]
        if name in limits:
            usage[f"limits.{name}"] = limits[name]
    for name, q in requests.items():
        if name.startswith("hugepages-"):
            usage[name] = q
            usage[f"requests.{name}"] = q
        elif _is_extended(name):
            usage[f"requests.{name}"] = q
    return usage


def pod_usage(pod: dict[str, Any]) -> Usage:
    usage: Usage = {"count/pods": _ONE}
    if not pod_is_live(pod):
        return usage
    spec = pod.get("spec") or {}
    requests = limit_ranger.pod_totals(spec, "requests")
    limits = limit_ranger.pod_totals(spec, "limits")
    overhead = quantities.resource_list(spec.get("overhead"))
    if overhead:
        requests = _add(requests, overhead)
        limits = _add(limits, {k: v for k, v in overhead.items() if k in limits})
    return _add(usage, _compute(requests, limits))


def service_usage(service: dict[str, Any]) -> Usage:
    spec = service.get("spec") or {}
    usage: Usage = {"services": _ONE, "count/services": _ONE}
    kind = spec.get("type") or "ClusterIP"
    if kind == "LoadBalancer":
        usage["services.loadbalancers"] = _ONE
    if kind in ("NodePort", "LoadBalancer"):
        ports = sum(1 for p in spec.get("ports") or [] if p.get("nodePort") or kind == "NodePort")
        usage["services.nodeports"] = Quantity(Decimal(len(spec.get("ports") or []) if kind == "NodePort" else ports))
    return usage


def claim_usage(claim: dict[str, Any]) -> Usage:
    spec = claim.get("spec") or {}
    usage: Usage = {"persistentvolumeclaims": _ONE, "count/persistentvolumeclaims": _ONE}
    storage = quantities.parse_or_none(((spec.get("resources") or {}).get("requests") or {}).get("storage"))
    if storage is not None:
        usage["requests.storage"] = storage
    class_name = spec.get("storageClassName")
    if class_name:
        usage[f"{class_name}.storageclass.storage.k8s.io/persistentvolumeclaims"] = _ONE
        if storage is not None:
            usage[f"{class_name}.storageclass.storage.k8s.io/requests.storage"] = storage
    return usage


def object_usage(group: str, resource: str, obj: dict[str, Any]) -> Usage:
    if (group, resource) == ("", "pods"):
        return pod_usage(obj)
    if (group, resource) == ("", "services"):
        return service_usage(obj)
    if (group, resource) == ("", "persistentvolumeclaims"):
        return claim_usage(obj)
    usage = {_count_name(group, resource): _ONE}
    legacy = _LEGACY_COUNTS.get((group, resource))
    if legacy:
        usage[legacy] = _ONE
    return usage


def tracked_names(group: str, resource: str, hard: dict[str, Any]) -> set[str]:
    """The quota's hard names this resource's usage can move (MatchingResources upstream)."""
    names = set(hard)
    if (group, resource) == ("", "pods"):
        return {n for n in names if n in ("pods", "count/pods") or n.split(".", 1)[-1] in _POD_COMPUTE
                or n in _POD_COMPUTE or n.startswith("hugepages-") or n.startswith("requests.hugepages-")
                or (n.startswith("requests.") and _is_extended(n[len("requests."):]))}
    wanted = {_count_name(group, resource), _LEGACY_COUNTS.get((group, resource), "")}
    if (group, resource) == ("", "services"):
        wanted |= {"services.loadbalancers", "services.nodeports"}
    if (group, resource) == ("", "persistentvolumeclaims"):
        wanted |= {"requests.storage"}
        return {n for n in names if n in wanted or ".storageclass.storage.k8s.io/" in n}
    return {n for n in names if n in wanted}


# -- scopes ----------------------------------------------------------------------------------------

def _is_best_effort(pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        resources = container.get("resources") or {}
        if resources.get("requests") or resources.get("limits"):
            return False
    return True


def _has_cross_namespace_affinity(pod: dict[str, Any]) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        terms = list(section.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [t.get("podAffinityTerm") or {} for t in section.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
        if any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in terms):
            return True
    return False


def _selectors(quota: dict[str, Any]) -> list[dict[str, Any]]:
    spec = quota.get("spec") or {}
    selectors = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    return selectors + list((spec.get("scopeSelector") or {}).get("matchExpressions") or [])


def _scope_matches(selector: dict[str, Any], pod: dict[str, Any]) -> bool:
    scope = selector.get("scopeName")
    spec = pod.get("spec") or {}
    if scope == "Terminating":
        return spec.get("activeDeadlineSeconds") is not None
    if scope == "NotTerminating":
        return spec.get("activeDeadlineSeconds") is None
    if scope == "BestEffort":
        return _is_best_effort(pod)
    if scope == "NotBestEffort":
        return not _is_best_effort(pod)
    if scope == "CrossNamespacePodAffinity":
        return _has_cross_namespace_affinity(pod)
    if scope == "PriorityClass":
        name, operator = spec.get("priorityClassName") or "", selector.get("operator")
        values = selector.get("values") or []
        if operator == "Exists":
            return bool(name)
        if operator == "DoesNotExist":
            return not name
        if operator == "In":
            return name in values
        if operator == "NotIn":
            return name not in values
    return False


def quota_covers(quota: dict[str, Any], group: str, resource: str, obj: dict[str, Any]) -> bool:
    selectors = _selectors(quota)
    if not selectors:
        return True
    if (group, resource) != ("", "pods"):
        return False  # scopes only ever match pods
    return all(_scope_matches(s, obj) for s in selectors)


# -- the plugin ------------------------------------------------------------------------------------

def _pretty(usage: Usage) -> str:
    return ",".join(f"{name}={usage[name]}" for name in sorted(usage))


class ResourceQuotaPlugin:
    name = "ResourceQuota"

    def __init__(self, view: ClusterView, clock: Callable[[], float] = time.monotonic):
        self.view = view
        self.clock = clock
        # Admitted creates not yet stored: (group, resource, namespace, name) → (object, expiry).
        self._pending: dict[tuple[str, str, str, str], tuple[dict[str, Any], float]] = {}
        self._decoded: dict[tuple[str, str, str, str], tuple[int, dict[str, Any]]] = {}

    def quotas(self, namespace: str) -> list[dict[str, Any]]:
        return [msgspec.json.decode(s.value) for s in self.view.objects("", "resourcequotas", namespace)]

    def _objects(self, group: str, resource: str, namespace: str) -> dict[str, dict[str, Any]]:
        """The stored objects of a resource in a namespace, decoded once per revision."""
        found: dict[str, dict[str, Any]] = {}
        for stored in self.view.objects(group, resource, namespace):
            key = (group, resource, namespace, stored.name)
            cached = self._decoded.get(key)
            if cached is None or cached[0] != stored.revision:
                cached = (stored.revision, msgspec.json.decode(stored.value))
                self._decoded[key] = cached
            found[stored.name] = cached[1]
        return found

    def usage(self, quota: dict[str, Any], group: str, resource: str, namespace: str,
              exclude: str = "") -> Usage:
        """What the objects of one resource use of this quota now (stored plus pending creates)."""
        objects = self._objects(group, resource, namespace)
        now = self.clock()
        for key, (obj, expiry) in list(self._pending.items()):
            if key[:3] != (group, resource, namespace):
                continue
            if key[3] in objects or expiry < now:
                del self._pending[key]
            else:
                objects[key[3]] = obj
        total: Usage = {}
        for name, obj in objects.items():
            if name != exclude and quota_covers(quota, group, resource, obj):
                total = _add(total, object_usage(group, resource, obj))
        return total

    def validate(self, attrs: Attributes) -> None:
        if attrs.operation not in (CREATE, UPDATE) or not attrs.namespace or attrs.object is None:
            return
        if attrs.subresource and not (attrs.resource == "pods" and attrs.subresource == "resize"):
            return
        quotas = self.quotas(attrs.namespace)
        if not quotas:
            return
        group, resource = attrs.group, attrs.resource
        new_usage = object_usage(group, resource, attrs.object)
        old = attrs.old_object if attrs.operation == UPDATE else None
        delta = dict(new_usage)
        if old is not None:
            old_usage = object_usage(group, resource, old)
            delta = {n: Quantity(max(q.value - old_usage[n].value, Decimal(0)), q.format) if n in old_usage else q
                     for n, q in new_usage.items()}
        delta = {n: q for n, q in delta.items() if q.value != 0}
        if not delta:
            return
        for quota in sorted(quotas, key=lambda q: q["metadata"]["name"]):
            if not quota_covers(quota, group, resource, attrs.object):
                continue
            hard = quantities.resource_list((quota.get("spec") or {}).get("hard"))
            tracked = tracked_names(group, resource, hard)
            if not tracked:
                continue
            name = quota["metadata"]["name"]
            if (group, resource) == ("", "pods"):
                self._require_stated(attrs, name, tracked)
            requested = {n: q for n, q in delta.items() if n in tracked}
            if not requested:
                continue
            used = self.usage(quota, group, resource, attrs.namespace,
                              exclude=attrs.name if attrs.operation == UPDATE else "")
            if old is not None and quota_covers(quota, group, resource, old):
                used = _add(used, object_usage(group, resource, old))
            exceeded = [n for n, q in requested.items()
                        if (used.get(n, quantities.ZERO).value + q.value) > hard[n].value]
            if exceeded:
                raise errors.forbidden(attrs, (
                    f"exceeded quota: {name}, requested: {_pretty({n: requested[n] for n in exceeded})}, "
                    f"used: {_pretty({n: used.get(n, quantities.ZERO) for n in exceeded})}, "
                    f"limited: {_pretty({n: hard[n] for n in exceeded})}"))
        # A generateName create has no name in its attributes (they are built before the name is
        # drawn), but its object has one by validation: without it concurrent creates (a
        # controller's burst) would each see the others as unused quota.
        name = attrs.name or ((attrs.object.get("metadata") or {}).get("name") or "")
        if attrs.operation == CREATE and not attrs.dry_run and name:
            self._pending[(group, resource, attrs.namespace, name)] = (attrs.object, self.clock() + _PENDING_SECONDS)

    @staticmethod
    def _require_stated(attrs: Attributes, quota_name: str, tracked: set[str]) -> None:
        required = tracked & _VALIDATED
        if not required:
            return
        missing: set[str] = set()
        spec = (attrs.object or {}).get("spec") or {}
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            resources = container.get("resources") or {}
            stated = set(_compute(quantities.resource_list(resources.get("requests")),
                                  quantities.resource_list(resources.get("limits"))))
            missing |= required - stated
        if missing:
            raise errors.forbidden(attrs, f"failed quota: {quota_name}: must specify {','.join(sorted(missing))}")

    def status_for(self, quota: dict[str, Any], resources: list[tuple[str, str]]) -> dict[str, Any]:
        """`status` of a quota: hard as the spec says, used summed over the namespace's objects."""
        namespace = quota["metadata"].get("namespace", "")
        hard = quantities.resource_list((quota.get("spec") or {}).get("hard"))
        used: Usage = {}
        for group, resource in resources:
            if tracked_names(group, resource, dict(hard)):
                used = _add(used, self.usage(quota, group, resource, namespace))
        return {"hard": {n: str(q) for n, q in hard.items()},
                "used": {n: str(used.get(n, quantities.ZERO)) for n in hard}}
