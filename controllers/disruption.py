"""The disruption controller: each PodDisruptionBudget's status from the pods it selects.

Upstream's pkg/controller/disruption, keyed `namespace/name`. A pass lists the budget's pods
(its selector over the namespace's pods; an empty selector takes them all), asks their
controllers' scale when the rule needs it (a ReplicaSet's spec.replicas unless a Deployment owns
it, then the Deployment's; StatefulSets and ReplicationControllers likewise; any other kind through its scale subresource,
found by discovery), and writes
expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed, disruptedPods (evictions the
eviction subresource recorded, kept two minutes until the pod's deletion shows) and the
DisruptionAllowed condition; a pass that cannot compute them writes SyncFailed and allows
nothing. The arithmetic is `disruption_budgets.py`. Events: NoPods, CalculateExpectedPodCountFailed,
NotDeleted (on the pod), as kube-controller-manager writes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any

from client import cache, errors
from client.discovery import Discovered, Discovery
from client.informer import Event
from client.resources import (DEPLOYMENTS, PODDISRUPTIONBUDGETS, PODS, REPLICASETS, REPLICATIONCONTROLLERS,
                              STATEFULSETS)
from client.rest import RestClient
from controllers import controller_refs, disruption_budgets, events, label_selectors, stale_cache
from controllers.disruption_budgets import BudgetError
from controllers.reconciling import Result, Watch

Obj = dict[str, Any]
COMPONENT = "controllermanager"  # upstream's disruption recorder reports as the controller manager
NAMESPACE_INDEX = "namespace"


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _replicas(obj: Obj) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


class DisruptionController:
    name = "disruption"

    def __init__(self, client: RestClient, *, clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.clock = clock
        self.budgets = Watch(PODDISRUPTIONBUDGETS, lambda e: [e.key], indexers={NAMESPACE_INDEX: cache.by_namespace})
        self.pods = Watch(PODS, self._pod_keys, indexers={NAMESPACE_INDEX: cache.by_namespace})
        # The scale of the pods' controllers; their changes move expectedPods.
        self.scalers = {kind: Watch(resource, self._namespace_keys)
                        for kind, resource in (("ReplicaSet", REPLICASETS), ("Deployment", DEPLOYMENTS),
                                               ("StatefulSet", STATEFULSETS),
                                               ("ReplicationController", REPLICATIONCONTROLLERS))}
        self.watches = [self.budgets, self.pods, *self.scalers.values()]
        self._ctx: Any = None
        self.writes = stale_cache.LastWrites()
        self.discovery = Discovery(client)
        self._discovered = Discovered([])

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    # -- events → keys -----------------------------------------------------------------------

    def _budgets_in(self, namespace: str) -> list[Obj]:
        store = self._store(self.budgets)
        return list(store.by_index(NAMESPACE_INDEX, namespace)) if store is not None else []

    def _pod_keys(self, event: Event) -> list[Hashable]:
        namespace = _meta(event.obj).get("namespace") or ""
        label_sets = [_meta(event.obj).get("labels")]
        if event.old is not None:
            label_sets.append(_meta(event.old).get("labels"))
        return [cache.key_of(pdb) for pdb in self._budgets_in(namespace)
                if any(label_selectors.matches((pdb.get("spec") or {}).get("selector"), ls) for ls in label_sets)]

    def _namespace_keys(self, event: Event) -> list[Hashable]:
        return [cache.key_of(pdb) for pdb in self._budgets_in(_meta(event.obj).get("namespace") or "")]

    # -- the controllers' scale ----------------------------------------------------------------

    def _owned(self, kind: str, namespace: str, ref: Obj | None) -> Obj | None:
        """The object `ref` names if it is of `kind` and still the one with that uid."""
        if ref is None or ref.get("kind") != kind:
            return None
        store = self._store(self.scalers[kind])
        obj = store.get(f"{namespace}/{ref.get('name')}") if store is not None else None
        return obj if obj is not None and _meta(obj).get("uid") == ref.get("uid") else None

    def _scale_of(self, pod: Obj) -> tuple[str, int] | None:
        """(uid, replicas) of the controller that decides how many pods like this one there should be."""
        namespace = _meta(pod).get("namespace") or ""
        ref = controller_refs.controller_of(pod)
        rs = self._owned("ReplicaSet", namespace, ref)
        if rs is not None:
            deployment = self._owned("Deployment", namespace, controller_refs.controller_of(rs))
            if deployment is not None:
                return _meta(deployment)["uid"], _replicas(deployment)
            if (controller_refs.controller_of(rs) or {}).get("kind") != "Deployment":
                return _meta(rs)["uid"], _replicas(rs)
            return None
        for kind in ("StatefulSet", "ReplicationController"):
            owner = self._owned(kind, namespace, ref)
            if owner is not None:
                return _meta(owner)["uid"], _replicas(owner)
        return None

    async def _scale_subresource(self, pod: Obj) -> tuple[str, int] | None:
        """Any other controller through its scale subresource (upstream's getScaleController):
        a custom resource that serves /scale counts by its spec.replicas there."""
        ref = controller_refs.controller_of(pod) or {}
        resource = self._discovered.for_kind(ref.get("apiVersion") or "", ref.get("kind") or "")
        if resource is None:
            self._discovered = await self.discovery.preferred()  # a CRD may be newer than our last look
            resource = self._discovered.for_kind(ref.get("apiVersion") or "", ref.get("kind") or "")
        if resource is None or not resource.namespaced:
            return None
        try:
            scale = await self.client.get_path(resource.path(_meta(pod).get("namespace"), ref.get("name"), "scale"))
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return None
            raise BudgetError(exc.message or str(exc)) from None
        if _meta(scale).get("uid") != ref.get("uid"):
            return None
        return str(ref.get("uid")), int((scale.get("spec") or {}).get("replicas") or 0)

    async def _expected_scale(self, pods: list[Obj]) -> int:
        """The sum of the scale of the pods' controllers, each counted once (a Deployment's
        ReplicaSets share it); unmanaged pods add nothing, as upstream."""
        seen: dict[str, tuple[str, int]] = {}
        for pod in pods:
            ref = controller_refs.controller_of(pod)
            if ref is None or ref.get("uid") in seen:
                continue
            found = self._scale_of(pod)
            if found is None and ref.get("kind") not in self.scalers:
                found = await self._scale_subresource(pod)
            if found is None:
                raise BudgetError(f'found no controllers for pod "{_meta(pod).get("name")}"')
            seen[ref["uid"]] = found
        return sum(dict(seen.values()).values())

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        store = self._store(self.budgets)
        pdb = store.get(str(key)) if store is not None else None
        if pdb is None:
            self.writes.forget(key)
            return None
        if not self.writes.caught_up(key, self._ctx, self.watches):
            return Result(requeue_after=stale_cache.REQUEUE)  # our last status write is not in the cache yet
        now = self.clock()
        stamp = disruption_budgets.format_time(now)
        namespace = _meta(pdb).get("namespace") or ""
        pod_store = self._store(self.pods)
        selector = (pdb.get("spec") or {}).get("selector")
        try:
            pods = [p for p in (pod_store.by_index(NAMESPACE_INDEX, namespace) if pod_store is not None else [])
                    if label_selectors.matches(selector, _meta(p).get("labels"))]
        except label_selectors.InvalidSelector as exc:
            await self._write(pdb, disruption_budgets.failed_status(pdb, str(exc), stamp))
            return None
        if not pods:
            await self._event(pdb, "Normal", "NoPods", "No matching pods found")
        spec = pdb.get("spec") or {}
        try:
            # Only maxUnavailable and a percentage minAvailable need the controllers' scale.
            scale = await self._expected_scale(pods) if spec.get("maxUnavailable") is not None or \
                isinstance(spec.get("minAvailable"), str) else 0
            expected, desired = disruption_budgets.desired_healthy(spec, len(pods), lambda: scale)
        except BudgetError as exc:
            await self._event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                              f"Failed to calculate the number of expected pods: {exc}")
            await self._write(pdb, disruption_budgets.failed_status(pdb, str(exc), stamp))
            return None
        disrupted, recheck, overdue = disruption_budgets.disrupted_pods(pdb, pods, now)
        for pod in overdue:
            await events.record(self.client, COMPONENT, {**pod, "kind": "Pod", "apiVersion": "v1"}, "Warning",
                                "NotDeleted", f"Pod was expected by PDB {namespace}/{_meta(pdb)['name']} to be "
                                "deleted but it wasn't")
        healthy = disruption_budgets.current_healthy(pods, disrupted)
        await self._write(pdb, disruption_budgets.status(pdb, healthy, desired, expected, disrupted, stamp))
        if recheck is not None:
            return Result(requeue_after=max(recheck - now, 0.0) + 0.001)
        return None

    async def _event(self, pdb: Obj, kind: str, reason: str, message: str) -> None:
        await events.record(self.client, COMPONENT, {**pdb, "kind": "PodDisruptionBudget", "apiVersion": "policy/v1"},
                            kind, reason, message)

    async def _write(self, pdb: Obj, status: Obj) -> None:
        if disruption_budgets.same(pdb.get("status") or {}, status):
            return
        try:
            answer = await self.client.update(PODDISRUPTIONBUDGETS, {**pdb, "status": status}, _meta(pdb)["namespace"],
                                              subresource="status")
            self.writes.wrote(cache.key_of(pdb), PODDISRUPTIONBUDGETS, answer)
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return
            raise  # a conflict: the informer brings the newer budget and the next pass uses it
