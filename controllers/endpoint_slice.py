"""The EndpointSlice controller: each selector Service's pods published as EndpointSlices.

Upstream's pkg/controller/endpointslice, keyed by the Service's `namespace/name`. A pass takes
the namespace's pods the selector picks, `endpoint_slice_plan.plan`s them against the slices this
controller manages for the Service (label kubernetes.io/service-name, managed-by
endpointslice-controller.k8s.io; owned by the Service so they go with it), and creates, updates
and deletes slices, stamping endpoints.kubernetes.io/last-change-trigger-time. Services without
a selector are the user's and left alone. Until the informer shows our own last writes, a pass
waits rather than planning from a stale cache (upstream's endpointSliceTracker).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from client import cache, errors
from client.informer import Event
from client.resources import ENDPOINTSLICES, NODES, PODS, SERVICES
from client.rest import RestClient
from controllers import endpoint_slice_plan, service_endpoints
from controllers.reconciling import Result, Watch

Obj = dict[str, Any]
NAMESPACE_INDEX = "namespace"
SERVICE_INDEX = "service"
RECHECK = 0.2


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _service_key(slice_: Obj) -> list[str]:
    name = (_meta(slice_).get("labels") or {}).get(endpoint_slice_plan.SERVICE_NAME)
    return [f"{_meta(slice_).get('namespace')}/{name}"] if name else []


def _revision(obj: Obj) -> int:
    try:
        return int(_meta(obj).get("resourceVersion") or 0)
    except ValueError:
        return 0


class EndpointSliceController:
    name = "endpointslice"

    def __init__(self, client: RestClient, *, max_endpoints_per_slice: int = endpoint_slice_plan.MAX_PER_SLICE) -> None:
        self.client = client
        self.max_per_slice = max_endpoints_per_slice
        self.services = Watch(SERVICES, lambda e: [e.key], indexers={NAMESPACE_INDEX: cache.by_namespace})
        self.pods = Watch(PODS, self._pod_keys, indexers={NAMESPACE_INDEX: cache.by_namespace})
        self.slices = Watch(ENDPOINTSLICES, lambda e: _service_key(e.obj),
                            label_selector=f"{endpoint_slice_plan.MANAGED_BY}={endpoint_slice_plan.CONTROLLER_NAME}",
                            indexers={SERVICE_INDEX: _service_key})
        self.nodes = Watch(NODES, self._node_keys)
        self.watches = [self.services, self.pods, self.slices, self.nodes]
        self._ctx: Any = None
        # Per service: slice name → the revision we wrote (0 once deleted); the cache must catch up.
        self._written: dict[str, dict[str, int]] = {}

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _services_in(self, namespace: str) -> list[Obj]:
        store = self._store(self.services)
        return list(store.by_index(NAMESPACE_INDEX, namespace)) if store is not None else []

    def _pod_keys(self, event: Event) -> list[Hashable]:
        pods = [event.obj] + ([event.old] if event.old is not None else [])
        return [cache.key_of(s) for s in self._services_in(_meta(event.obj).get("namespace") or "")
                if any(service_endpoints.selects(s, p) for p in pods)]

    def _node_keys(self, event: Event) -> list[Hashable]:
        # Only a node's zone reaches the slices; heartbeats must not wake every Service.
        zone = endpoint_slice_plan.ZONE
        if event.old is not None and (_meta(event.old).get("labels") or {}).get(zone) == \
                (_meta(event.obj).get("labels") or {}).get(zone):
            return []
        store = self._store(self.services)
        return [cache.key_of(s) for s in store.list()] if store is not None and not event.initial else []

    def _caught_up(self, key: str) -> bool:
        written = self._written.get(key)
        store = self._store(self.slices)
        if not written or store is None:
            return True
        namespace = key.split("/", 1)[0]
        for name, revision in list(written.items()):
            seen = store.get(f"{namespace}/{name}")
            if (revision == 0 and seen is not None) or (revision and (seen is None or _revision(seen) < revision)):
                return False
            del written[name]
        return True

    async def reconcile(self, key: Hashable) -> Result | None:
        key = str(key)
        store = self._store(self.services)
        service = store.get(key) if store is not None else None
        external = ((service or {}).get("spec") or {}).get("type") == "ExternalName"  # a DNS name has no endpoints
        if service is None or not service_endpoints.managed(service) or external:
            self._written.pop(key, None)
            return None  # the slices of a deleted Service go with it (they are owned by it)
        if _meta(service).get("deletionTimestamp"):
            return None
        if not self._caught_up(key):
            return Result(requeue_after=RECHECK)
        namespace = _meta(service)["namespace"]
        pod_store, node_store, slice_store = self._store(self.pods), self._store(self.nodes), self._store(self.slices)
        pods = list(pod_store.by_index(NAMESPACE_INDEX, namespace)) if pod_store is not None else []
        nodes = {_meta(n)["name"]: n for n in node_store.list()} if node_store is not None else {}
        existing = [s for s in (slice_store.by_index(SERVICE_INDEX, key) if slice_store is not None else [])
                    if any(r.get("uid") == _meta(service).get("uid") for r in _meta(s).get("ownerReferences") or [])
                    or not _meta(s).get("ownerReferences")]
        selected = [p for p in pods if service_endpoints.selects(service, p)]
        wanted = endpoint_slice_plan.desired(service, selected, nodes)
        todo = endpoint_slice_plan.plan(service, wanted, existing, self.max_per_slice)
        trigger = service_endpoints.trigger_time(service, selected)
        written = self._written.setdefault(key, {})
        for slice_ in todo.create + todo.update:
            if trigger:
                slice_["metadata"].setdefault("annotations", {})[service_endpoints.TRIGGER_TIME] = trigger
        for slice_ in todo.delete:
            try:
                await self.client.delete(ENDPOINTSLICES, _meta(slice_)["name"], namespace)
            except errors.APIError as exc:
                if not errors.is_not_found(exc):
                    raise
            written[_meta(slice_)["name"]] = 0
        for slice_ in todo.update:
            answer = await self.client.update(ENDPOINTSLICES, slice_, namespace)
            written[_meta(answer)["name"]] = _revision(answer)
        for slice_ in todo.create:
            answer = await self.client.create(ENDPOINTSLICES, slice_, namespace)
            written[_meta(answer)["name"]] = _revision(answer)
        return None
