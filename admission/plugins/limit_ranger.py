"""The LimitRanger plugin: LimitRange defaults into containers, then min/max/ratio checks.

Mutating (pod CREATE): each LimitRange's Container `default` limits and `defaultRequest`
requests fill what containers and init containers leave out, noted in the
`kubernetes.io/limit-ranger` annotation. Validating (pod CREATE, PVC CREATE/UPDATE): Container
and Pod min, max and maxLimitRequestRatio, PersistentVolumeClaim min/max of storage requests;
all failures of a LimitRange together refuse the request with 403 and upstream's texts
("maximum cpu usage per Container is 500m, but limit is 1"). The LimitRange item defaults
(max → default → defaultRequest, min → defaultRequest) are applied on read, as the API would.
Upstream: plugin/pkg/admission/limitranger/admission.go.
"""

from __future__ import annotations

from typing import Any, Callable

import msgspec

from admission import errors, quantities
from admission.attributes import CREATE, UPDATE, Attributes
from admission.quantities import Quantity
from admission.view import ClusterView

ANNOTATION = "kubernetes.io/limit-ranger"
Resources = dict[str, Quantity]


def _item_with_defaults(item: dict[str, Any]) -> dict[str, Any]:
    """SetDefaults_LimitRangeItem for Container items."""
    if item.get("type") != "Container":
        return item
    item = dict(item)
    default = dict(item.get("default") or {})
    request = dict(item.get("defaultRequest") or {})
    for key, value in (item.get("max") or {}).items():
        default.setdefault(key, value)
    for key, value in default.items():
        request.setdefault(key, value)
    for key, value in (item.get("min") or {}).items():
        request.setdefault(key, value)
    item["default"], item["defaultRequest"] = default, request
    return item


def _items(limit_range: dict[str, Any]) -> list[dict[str, Any]]:
    return [_item_with_defaults(i) for i in (limit_range.get("spec") or {}).get("limits") or []]


def min_constraint(kind: str, name: str, enforced: Quantity, requests: Resources, limits: Resources) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    if request is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if request.value < enforced.value:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {request}"
    if limit is not None and limit.value < enforced.value:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {limit}"
    return None


def max_constraint(kind: str, name: str, enforced: Quantity, requests: Resources, limits: Resources) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    if limit is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if limit.value > enforced.value:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {limit}"
    if request is not None and request.value > enforced.value:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {request}"
    return None


def max_request_constraint(kind: str, name: str, enforced: Quantity, requests: Resources) -> str | None:
    request = requests.get(name)
    if request is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
    if request.value > enforced.value:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {request}"
    return None


def ratio_constraint(kind: str, name: str, enforced: Quantity, requests: Resources, limits: Resources) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    if request is None or request.value == 0:
        return (f"{name} max limit to request ratio per {kind} is {enforced}, "
                "but no request is specified or request is 0")
    if limit is None or limit.value == 0:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"
    ratio = limit.value / request.value
    if ratio > enforced.value:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {float(ratio):f}"
    return None


def _add(total: Resources, more: Resources) -> None:
    for name, q in more.items():
        total[name] = total[name] + q if name in total else q


def _max(total: Resources, more: Resources) -> None:
    for name, q in more.items():
        if name not in total or q.value > total[name].value:
            total[name] = q


def _container_resources(container: dict[str, Any], bucket: str) -> Resources:
    return quantities.resource_list((container.get("resources") or {}).get(bucket))


def pod_totals(spec: dict[str, Any], bucket: str) -> Resources:
    """The pod's effective requests or limits: containers plus sidecars, at least each init container."""
    total: Resources = {}
    for container in spec.get("containers") or []:
        _add(total, _container_resources(container, bucket))
    sidecars: Resources = {}
    init_peak: Resources = {}
    for container in spec.get("initContainers") or []:
        own = _container_resources(container, bucket)
        if container.get("restartPolicy") == "Always":
            _add(total, own)
            _add(sidecars, own)
            _max(init_peak, dict(sidecars))
        else:
            combined = dict(own)
            _add(combined, sidecars)
            _max(init_peak, combined)
    _max(total, init_peak)
    return total


def _check(items: list[dict[str, Any]], kind: str, requests: Resources, limits: Resources) -> list[str]:
    problems: list[str | None] = []
    for item in items:
        if item.get("type") != kind:
            continue
        for name, text in (item.get("min") or {}).items():
            problems.append(min_constraint(kind, name, quantities.parse(text), requests, limits))
        for name, text in (item.get("max") or {}).items():
            problems.append(max_constraint(kind, name, quantities.parse(text), requests, limits))
        for name, text in (item.get("maxLimitRequestRatio") or {}).items():
            problems.append(ratio_constraint(kind, name, quantities.parse(text), requests, limits))
    return [p for p in problems if p]


class LimitRangerPlugin:
    name = "LimitRanger"

    def __init__(self, view: ClusterView):
        self.view = view
        # The last namespace's LimitRanges and the store revision they were read at: one request
        # asks up to three times (admit, a reinvocation, validate) and nothing is written meanwhile.
        self._memo: tuple[int, str, list[dict[str, Any]]] = (-1, "", [])

    def _limit_ranges(self, namespace: str) -> list[dict[str, Any]]:
        revision = self.view.revision()
        if self._memo[:2] != (revision, namespace):
            ranges = [msgspec.json.decode(s.value) for s in self.view.objects("", "limitranges", namespace)]
            self._memo = (revision, namespace, ranges)
        return self._memo[2]

    def _pod_create(self, attrs: Attributes) -> bool:
        return (not attrs.subresource and attrs.operation == CREATE and (attrs.group, attrs.resource) == ("", "pods")
                and attrs.object is not None)

    def admit(self, attrs: Attributes) -> None:
        if not self._pod_create(attrs):
            return
        assert attrs.object is not None
        for limit_range in self._limit_ranges(attrs.namespace):
            self._default(attrs.object, _items(limit_range))

    @staticmethod
    def _default(pod: dict[str, Any], items: list[dict[str, Any]]) -> None:
        limits: dict[str, Any] = {}
        requests: dict[str, Any] = {}
        for item in items:
            if item.get("type") == "Container":
                requests.update(item.get("defaultRequest") or {})
                limits.update(item.get("default") or {})
        if not limits and not requests:
            return
        notes: list[str] = []
        spec = pod.setdefault("spec", {})
        for field, label in (("containers", "container"), ("initContainers", "init container")):
            for container in spec.get(field) or []:
                resources = container.setdefault("resources", {})
                set_limits = [k for k in limits if k not in (resources.get("limits") or {})]
                set_requests = [k for k in requests if k not in (resources.get("requests") or {})]
                for key in set_limits:
                    resources.setdefault("limits", {})[key] = str(quantities.parse(limits[key]))
                for key in set_requests:
                    resources.setdefault("requests", {})[key] = str(quantities.parse(requests[key]))
                if set_requests:
                    notes.append(f"{', '.join(sorted(set_requests))} request for {label} {container.get('name', '')}")
                if set_limits:
                    notes.append(f"{', '.join(sorted(set_limits))} limit for {label} {container.get('name', '')}")
        if notes:
            meta = pod.setdefault("metadata", {})
            meta.setdefault("annotations", {})[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)

    def validate(self, attrs: Attributes) -> None:
        if attrs.subresource or attrs.object is None:
            return
        check: Callable[[dict[str, Any], list[dict[str, Any]]], list[str]]
        if self._pod_create(attrs):
            check = self._pod_problems
        elif (attrs.group, attrs.resource) == ("", "persistentvolumeclaims") and attrs.operation in (CREATE, UPDATE):
            check = self._claim_problems
        else:
            return
        for limit_range in self._limit_ranges(attrs.namespace):
            problems = check(attrs.object, _items(limit_range))
            if problems:
                raise errors.forbidden(attrs, errors.aggregate(problems))

    @staticmethod
    def _pod_problems(pod: dict[str, Any], items: list[dict[str, Any]]) -> list[str]:
        spec = pod.get("spec") or {}
        problems: list[str] = []
        for item in items:
            if item.get("type") == "Container":
                for field in ("containers", "initContainers"):
                    for container in spec.get(field) or []:
                        problems += _check([item], "Container", _container_resources(container, "requests"),
                                           _container_resources(container, "limits"))
            elif item.get("type") == "Pod":
                problems += _check([item], "Pod", pod_totals(spec, "requests"), pod_totals(spec, "limits"))
        return problems

    @staticmethod
    def _claim_problems(claim: dict[str, Any], items: list[dict[str, Any]]) -> list[str]:
        requests = quantities.resource_list(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
        problems: list[str | None] = []
        for item in items:
            if item.get("type") != "PersistentVolumeClaim":
                continue
            for name, text in (item.get("min") or {}).items():
                problems.append(min_constraint("PersistentVolumeClaim", name, quantities.parse(text), requests, {}))
            for name, text in (item.get("max") or {}).items():
                problems.append(max_request_constraint("PersistentVolumeClaim", name, quantities.parse(text), requests))
        return [p for p in problems if p]
