"""The Endpoints controller: the legacy core/v1 Endpoints object of each selector Service.

Upstream's pkg/controller/endpoint, keyed by the Service's `namespace/name`. The object has the
Service's name and labels (plus endpoints.kubernetes.io/managed-by: endpoint-controller, and
service.kubernetes.io/headless for a headless one); its subsets group the pods by the ports they
resolve to, ready pods under `addresses` and the rest under
`notReadyAddresses` (all ready under publishNotReadyAddresses; deleting pods left out unless it
is set). Past 1000 addresses the rest are dropped, ready ones kept first, and the object says so
with endpoints.kubernetes.io/over-capacity: truncated. When the subsets change, the
last-change-trigger-time annotation moves. A deleted Service's Endpoints are deleted if this
controller made them; Services without a selector are left alone. The shared pieces are `service_endpoints.py`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from client import cache, errors
from client.informer import Event
from client.resources import ENDPOINTS, PODS, SERVICES
from client.rest import RestClient
from controllers import endpoint_slice_plan, service_endpoints, stale_cache
from controllers.reconciling import Result, Watch

Obj = dict[str, Any]
NAMESPACE_INDEX = "namespace"
MAX_CAPACITY = 1000
OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"
MANAGED_BY = "endpoints.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpoint-controller"


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _address(service: Obj, pod: Obj, ip: str) -> Obj:
    address: Obj = {"ip": ip}
    host = service_endpoints.hostname(service, pod)
    if host:
        address["hostname"] = host
    node = (pod.get("spec") or {}).get("nodeName")
    if node:
        address["nodeName"] = node
    address["targetRef"] = service_endpoints.target_ref(pod)
    return address


def subsets(service: Obj, pods: list[Obj]) -> list[Obj]:
    """The subsets, one per port set, addresses sorted by IP as upstream's RepackSubsets leaves them."""
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    groups: dict[Any, Obj] = {}
    for pod in pods:
        ip = service_endpoints.ipv4(pod)
        if ip is None or not service_endpoints.selects(service, pod) or not service_endpoints.in_endpoints(pod, publish):
            continue
        ports = endpoint_slice_plan.ports_for(service, pod)
        if (service.get("spec") or {}).get("ports") and not ports:
            continue  # no port of the Service resolves on this pod: it cannot serve it
        key = endpoint_slice_plan.port_key(ports)
        group = groups.setdefault(key, {"addresses": [], "notReadyAddresses": [], "ports": ports})
        ready = service_endpoints.conditions(service, pod)["ready"]
        group["addresses" if ready else "notReadyAddresses"].append(_address(service, pod, ip))
    result = []
    for _, group in sorted(groups.items()):
        subset: Obj = {}
        for field in ("addresses", "notReadyAddresses"):
            if group[field]:
                subset[field] = sorted(group[field], key=lambda a: (a["ip"], a["targetRef"].get("uid") or ""))
        if group["ports"]:
            subset["ports"] = sorted(group["ports"], key=lambda p: (p["name"], p["port"], p["protocol"]))
        result.append(subset)
    return result


def truncate(found: list[Obj], capacity: int = MAX_CAPACITY) -> tuple[list[Obj], bool]:
    """At most `capacity` addresses in all, ready ones kept before not-ready ones."""
    total = sum(len(s.get("addresses") or []) + len(s.get("notReadyAddresses") or []) for s in found)
    if total <= capacity:
        return found, False
    left = capacity
    result = []
    for field in ("addresses", "notReadyAddresses"):
        for index, subset in enumerate(found):
            if len(result) <= index:
                result.append({k: v for k, v in subset.items() if k == "ports"})
            taken = (subset.get(field) or [])[:left]
            left -= len(taken)
            if taken:
                result[index][field] = taken
    ordered = [{k: s[k] for k in ("addresses", "notReadyAddresses", "ports") if k in s} for s in result]
    return [s for s in ordered if s.get("addresses") or s.get("notReadyAddresses")], True


def labels_for(service: Obj) -> dict[str, str]:
    labels = dict(_meta(service).get("labels") or {})
    labels[MANAGED_BY] = CONTROLLER_NAME
    if service_endpoints.is_headless(service):
        labels[service_endpoints.HEADLESS] = ""
    return labels


class EndpointsController:
    name = "endpoint"

    def __init__(self, client: RestClient, *, max_capacity: int = MAX_CAPACITY) -> None:
        self.client = client
        self.max_capacity = max_capacity
        self.services = Watch(SERVICES, lambda e: [e.key], indexers={NAMESPACE_INDEX: cache.by_namespace})
        self.pods = Watch(PODS, self._pod_keys, indexers={NAMESPACE_INDEX: cache.by_namespace})
        self.endpoints = Watch(ENDPOINTS, lambda e: [e.key])
        self.watches = [self.services, self.pods, self.endpoints]
        self._ctx: Any = None
        self.writes = stale_cache.LastWrites()

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _pod_keys(self, event: Event) -> list[Hashable]:
        store = self._store(self.services)
        pods = [event.obj] + ([event.old] if event.old is not None else [])
        services = store.by_index(NAMESPACE_INDEX, _meta(event.obj).get("namespace") or "") if store is not None else []
        return [cache.key_of(s) for s in services if any(service_endpoints.selects(s, p) for p in pods)]

    async def reconcile(self, key: Hashable) -> Result | None:
        key = str(key)
        namespace, name = key.split("/", 1)
        if not self.writes.caught_up(key, self._ctx, self.watches):
            return Result(requeue_after=stale_cache.REQUEUE)  # our last write is not in the cache yet
        services, endpoint_store = self._store(self.services), self._store(self.endpoints)
        service = services.get(key) if services is not None else None
        current = endpoint_store.get(key) if endpoint_store is not None else None
        if service is None:
            if current is not None and (_meta(current).get("labels") or {}).get(MANAGED_BY) == CONTROLLER_NAME:
                try:
                    self.writes.wrote(key, ENDPOINTS, await self.client.delete(ENDPOINTS, name, namespace))
                except errors.APIError as exc:
                    if not errors.is_not_found(exc):
                        raise
            return None
        if not service_endpoints.managed(service) or _meta(service).get("deletionTimestamp"):
            return None
        pod_store = self._store(self.pods)
        pods = [p for p in (pod_store.by_index(NAMESPACE_INDEX, namespace) if pod_store is not None else [])
                if service_endpoints.selects(service, p)]
        found, truncated = truncate(subsets(service, pods), self.max_capacity)
        labels = labels_for(service)
        annotations = dict(_meta(current).get("annotations") or {})
        over = annotations.get(OVER_CAPACITY)
        if current is not None and (current.get("subsets") or []) == found and \
                (_meta(current).get("labels") or {}) == labels and (over == "truncated") == truncated:
            return None
        if truncated:
            annotations[OVER_CAPACITY] = "truncated"
        else:
            annotations.pop(OVER_CAPACITY, None)
        trigger = service_endpoints.trigger_time(service, pods)
        if trigger and (current is None or (current.get("subsets") or []) != found):
            annotations[service_endpoints.TRIGGER_TIME] = trigger
        meta: Obj = {"name": name, "namespace": namespace, "labels": labels}
        if annotations:
            meta["annotations"] = annotations
        body: Obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta, "subsets": found}
        if current is None:
            # AlreadyExists: the cache is behind; retried
            self.writes.wrote(key, ENDPOINTS, await self.client.create(ENDPOINTS, body, namespace))
        else:
            body["metadata"]["resourceVersion"] = _meta(current).get("resourceVersion")
            self.writes.wrote(key, ENDPOINTS, await self.client.update(ENDPOINTS, body, namespace))
        return None
