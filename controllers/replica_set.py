"""The ReplicaSet controller: as many active pods as `spec.replicas`, and the status that counts them.

Upstream's pkg/controller/replicaset, keyed `namespace/name`. One reconcile: claim the namespace's
pods (`controller_refs.claim`: adopt matching orphans, release owned pods that stopped matching);
if the last creations and deletions have all been seen (`expectations.py`) and the ReplicaSet is
not being deleted, create the missing pods in slow-start batches (1, 2, 4, … at most
`burst_replicas` per pass) or delete the surplus in `pod_states.deletion_order`; then write
status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas, terminatingReplicas,
observedGeneration, the ReplicaFailure condition; not again while the informer is behind our last
write). Events as kube-controller-manager writes them:
SuccessfulCreate "Created pod: x", SuccessfulDelete "Deleted pod: x", FailedCreate, FailedDelete
(creation events are sent in the background, off the slow-start path).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Hashable
from typing import Any

from client import cache, errors
from client.informer import Event
from client.resources import PODS, REPLICASETS
from client.rest import RestClient
from controllers import controller_refs, events, pod_deletions, label_selectors, pod_states
from controllers.expectations import Expectations
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.replicaset")
Obj = dict[str, Any]
COMPONENT = "replicaset-controller"
BURST_REPLICAS = 500
NAMESPACE_INDEX = "namespace"
CONTROLLER_INDEX = "controller-uid"


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def slow_start_batches(count: int, initial: int = 1) -> list[int]:
    """Batch sizes for `count` creations: 1, 2, 4, … so a failing template costs few calls."""
    sizes, batch, left = [], initial, count
    while left > 0:
        size = min(batch, left)
        sizes.append(size)
        left -= size
        batch *= 2
    return sizes


def pod_from_template(rs: Obj, kind: str = "ReplicaSet", api_version: str = "apps/v1") -> Obj:
    """The pod a controller creates: the template's metadata and spec, generateName `<rs>-`, owned by rs."""
    template = (rs.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    meta: Obj = {"generateName": f"{_meta(rs)['name']}-",
                 "ownerReferences": [controller_refs.owner_reference(rs, api_version, kind)]}
    for field in ("labels", "annotations", "finalizers"):
        if tmeta.get(field):
            meta[field] = copy.deepcopy(tmeta[field])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(template.get("spec") or {})}


def failure_condition(status: Obj, error: str | None, diff: int, now: str) -> list[Obj]:
    """The conditions after a pass: ReplicaFailure added on the first error, dropped once one passes."""
    conditions = [c for c in status.get("conditions") or []]
    current = next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)
    if error is not None and current is None:
        reason = "FailedCreate" if diff < 0 else ("FailedDelete" if diff > 0 else "")
        conditions.append({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": now,
                           "reason": reason, "message": error})
    elif error is None and current is not None:
        conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
    return conditions


def calculate_status(rs: Obj, pods: list[Obj], terminating: int, error: str | None, now: float) -> Obj:
    spec = rs.get("spec") or {}
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = spec.get("minReadySeconds") or 0
    labeled = sum(1 for p in pods if all(_meta(p).get("labels", {}).get(k) == v for k, v in template_labels.items()))
    ready = sum(1 for p in pods if pod_states.is_ready(p))
    available = sum(1 for p in pods if pod_states.is_available(p, min_ready, now))
    old = rs.get("status") or {}
    status: Obj = {"replicas": len(pods), "fullyLabeledReplicas": labeled, "readyReplicas": ready,
                   "availableReplicas": available, "terminatingReplicas": terminating,
                   "observedGeneration": _meta(rs).get("generation") or 0}
    conditions = failure_condition(old, error, len(pods) - (spec.get("replicas") if spec.get("replicas") is not None else 1),
                                   pod_states.format_time(now))
    if conditions:
        status["conditions"] = conditions
    return status


def _same_status(old: Obj, new: Obj) -> bool:
    keys = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "terminatingReplicas",
            "observedGeneration")
    return all((old.get(k) or 0) == (new.get(k) or 0) for k in keys) and \
        (old.get("conditions") or []) == (new.get("conditions") or [])


class ReplicaSetController:
    """Also the ReplicationController controller (`replication_controller.py`): the class
    attributes below name the resource it drives, and `selector_of` reads its selector."""

    name = "replicaset"
    resource = REPLICASETS
    kind = "ReplicaSet"
    api_version = "apps/v1"
    component = COMPONENT
    counts_terminating = True  # ReplicationControllerStatus has no terminatingReplicas

    @staticmethod
    def selector_of(rs: Obj) -> dict[str, Any] | None:
        return (rs.get("spec") or {}).get("selector")  # type: ignore[no-any-return]

    def __init__(self, client: RestClient, *, burst_replicas: int = BURST_REPLICAS) -> None:
        self.client = client
        self.burst_replicas = burst_replicas
        self.expectations = Expectations()
        self.replicasets = Watch(self.resource, self._rs_keys, indexers={NAMESPACE_INDEX: cache.by_namespace})
        self.pods = Watch(PODS, self._pod_keys, indexers={NAMESPACE_INDEX: cache.by_namespace,
                                                         CONTROLLER_INDEX: controller_refs.controller_uid})
        self.watches = [self.replicasets, self.pods]
        self._ctx: Any = None
        # The status we last wrote per ReplicaSet, with the revision it got: while the informer is
        # behind that write, the same status is not written again (KEP-5647's stale-cache check).
        self._written: dict[str, tuple[str, int, Obj]] = {}
        self._recording: set[asyncio.Future[None]] = set()

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    # -- events → keys -----------------------------------------------------------------------

    def _rs_keys(self, event: Event) -> list[Hashable]:
        if event.type == "DELETED":
            self.expectations.forget(event.key)
            self._written.pop(event.key, None)
        return [event.key]

    def _owners_matching(self, pod: Obj) -> list[str]:
        """ReplicaSets of the pod's namespace whose selector takes it: who may adopt an orphan."""
        store = self._store(self.replicasets)
        if store is None:
            return []
        meta = _meta(pod)
        return [cache.key_of(rs) for rs in store.by_index(NAMESPACE_INDEX, meta.get("namespace") or "")
                if label_selectors.matches(self.selector_of(rs), meta.get("labels"))]

    def _rs_key_by_uid(self, namespace: str, ref: Obj) -> str | None:
        if ref.get("kind") != self.kind:
            return None
        store = self._store(self.replicasets)
        rs = store.get(f"{namespace}/{ref.get('name')}") if store is not None else None
        return cache.key_of(rs) if rs is not None and _meta(rs).get("uid") == ref.get("uid") else None

    def _pod_keys(self, event: Event) -> list[Hashable]:
        pod, meta = event.obj, _meta(event.obj)
        namespace = meta.get("namespace") or ""
        ref = controller_refs.controller_of(pod)
        owner = self._rs_key_by_uid(namespace, ref) if ref else None
        keys: list[Hashable] = []
        if event.type == "ADDED" and owner is not None and not event.initial:
            self.expectations.creation_observed(owner)
        if event.type == "DELETED" and owner is not None:
            self.expectations.deletion_observed(owner, event.key)
        if event.type == "MODIFIED" and event.old is not None:
            old_ref = controller_refs.controller_of(event.old)
            if old_ref and (not ref or old_ref.get("uid") != ref.get("uid")):
                old_owner = self._rs_key_by_uid(namespace, old_ref)
                if old_owner:
                    keys.append(old_owner)
            if meta.get("deletionTimestamp") and not _meta(event.old).get("deletionTimestamp") and owner:
                # A pod that starts terminating counts as gone for the replica count.
                self.expectations.deletion_observed(owner, event.key)
        if owner is not None:
            keys.append(owner)
        elif ref is None and event.type != "DELETED":
            keys += self._owners_matching(pod)
        return keys

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        store = self._store(self.replicasets)
        rs = store.get(str(key)) if store is not None else None
        if rs is None:
            self.expectations.forget(key)
            return None
        now = time.time()
        spec = rs.get("spec") or {}
        pods = await self._claim_pods(rs)
        active = [p for p in pods if pod_states.is_active(p)]
        failure: errors.APIError | None = None
        if self.expectations.satisfied(key) and not _meta(rs).get("deletionTimestamp"):
            failure = await self._manage_replicas(str(key), rs, active)
        error = pod_deletions.error_text(failure) if failure is not None else None
        pod_store = self._store(self.pods)
        owned_all = pod_store.by_index(CONTROLLER_INDEX, _meta(rs).get("uid") or "") if pod_store is not None else []
        terminating = sum(1 for p in owned_all if pod_states.is_terminating(p))
        status = calculate_status(rs, active, terminating, error, now)
        if not self.counts_terminating:
            del status["terminatingReplicas"]
        rs = await self._write_status(rs, status)
        min_ready = spec.get("minReadySeconds") or 0
        if failure is not None:
            raise failure  # retried with backoff; the API server's answer says what went wrong
        if min_ready and status["readyReplicas"] != status["availableReplicas"]:
            return Result(requeue_after=float(min_ready))  # availability comes with time, not with an event
        return None

    async def _claim_pods(self, rs: Obj) -> list[Obj]:
        store = self._store(self.pods)
        candidates = list(store.by_index(NAMESPACE_INDEX, _meta(rs).get("namespace") or "")) if store is not None else []
        # Active pods and pods we own (terminating ones stay ours); finished orphans are not adopted.
        claimed = controller_refs.claim(rs, candidates, self.selector_of(rs))
        namespace = _meta(rs)["namespace"]
        owned = list(claimed.owned)
        adopt = [p for p in claimed.adopt if pod_states.is_active(p)]
        if adopt and await controller_refs.can_adopt(self.client, self.resource, rs):
            for pod in adopt:
                patched = await controller_refs.patch(self.client, PODS, pod, controller_refs.adopt_patch(rs, self.api_version, self.kind, pod))
                if patched is not None:
                    owned.append(patched)
        for pod in claimed.release:
            await controller_refs.patch(self.client, PODS, pod, controller_refs.release_patch(rs, pod))
        log.debug("replicaset %s/%s owns %d pods", namespace, _meta(rs)["name"], len(owned))
        return owned

    async def _manage_replicas(self, key: str, rs: Obj, pods: list[Obj]) -> errors.APIError | None:
        spec = rs.get("spec") or {}
        wanted = spec.get("replicas") if spec.get("replicas") is not None else 1
        diff = len(pods) - wanted
        if diff < 0:
            return await self._create_pods(key, rs, min(-diff, self.burst_replicas))
        if diff > 0:
            return await self._delete_pods(key, rs, pods, min(diff, self.burst_replicas))
        return None

    def _event(self, rs: Obj, kind: str, reason: str, message: str) -> Any:
        return events.record(self.client, self.component, {**rs, "kind": self.kind, "apiVersion": self.api_version},
                             kind, reason, message)

    def _event_soon(self, rs: Obj, kind: str, reason: str, message: str) -> None:
        """Record without waiting for it, as client-go's broadcaster does: the next slow-start batch
        does not wait for the last one's events."""
        task = asyncio.ensure_future(self._event(rs, kind, reason, message))
        self._recording.add(task)  # held until done: the loop keeps only weak references
        task.add_done_callback(self._recording.discard)

    async def _create_pods(self, key: str, rs: Obj, count: int) -> errors.APIError | None:
        self.expectations.expect_creations(key, count)
        namespace = _meta(rs)["namespace"]
        body = pod_from_template(rs, self.kind, self.api_version)
        done = 0
        for size in slow_start_batches(count):
            results = await asyncio.gather(*(self.client.create(PODS, copy.deepcopy(body), namespace) for _ in range(size)),
                                           return_exceptions=True)
            failures = [r for r in results if isinstance(r, BaseException)]
            for result in results:
                if isinstance(result, BaseException):
                    self.expectations.creation_observed(key)  # it will never appear
                    self._event_soon(rs, "Warning", "FailedCreate", f"Error creating: {pod_deletions.error_text(result)}")
                else:
                    self._event_soon(rs, "Normal", "SuccessfulCreate", f"Created pod: {_meta(result)['name']}")
            done += size
            if failures:
                for _ in range(count - done):
                    self.expectations.creation_observed(key)  # skipped: the next pass tries again
                first = failures[0]
                if errors.has_cause(first, "NamespaceTerminating"):
                    return None  # pods cannot be made there any more; not the ReplicaSet's failure
                if not isinstance(first, errors.APIError):
                    raise first
                return first
        return None

    def _related_pods(self, rs: Obj) -> list[Obj]:
        """Pods of every ReplicaSet sharing this one's controller (a Deployment's), for the doubled-up rank."""
        pod_store, rs_store = self._store(self.pods), self._store(self.replicasets)
        if pod_store is None or rs_store is None:
            return []
        owner = controller_refs.controller_of(rs)
        siblings = [rs] if owner is None else [
            r for r in rs_store.by_index(NAMESPACE_INDEX, _meta(rs)["namespace"])
            if (controller_refs.controller_of(r) or {}).get("uid") == owner.get("uid")]
        return [p for r in siblings for p in pod_store.by_index(CONTROLLER_INDEX, _meta(r).get("uid") or "")]

    async def _delete_pods(self, key: str, rs: Obj, pods: list[Obj], count: int) -> errors.APIError | None:
        victims = pod_states.deletion_order(pods, self._related_pods(rs), time.time())[:count]
        return await pod_deletions.delete_all(self.client, self.expectations, key, victims,
                                              lambda *event: self._event(rs, *event))

    async def _write_status(self, rs: Obj, status: Obj) -> Obj:
        """PUT status; on a conflict (our cache was behind) read the ReplicaSet once and try again,
        as upstream's updateReplicaSetStatus does."""
        meta = _meta(rs)
        key = cache.key_of(rs)
        written = self._written.get(key)
        if written is not None and written[0] == meta.get("uid") and _revision(rs) < written[1] \
                and _same_status(written[2], status):
            return rs  # already written; the cache has not caught up yet
        for attempt in range(2):
            if _same_status(rs.get("status") or {}, status):
                return rs
            try:
                answer = await self.client.update(self.resource, {**rs, "status": status}, meta["namespace"],
                                                  subresource="status")
                self._written[key] = (meta.get("uid") or "", _revision(answer), status)
                return answer
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return rs
                if not errors.is_conflict(exc) or attempt:
                    raise
            rs = await self.client.get(self.resource, meta["name"], meta["namespace"])
            if _meta(rs).get("uid") != meta.get("uid"):
                return rs
            status = {**status, "observedGeneration": _meta(rs).get("generation") or 0}
        return rs


def _revision(obj: Obj) -> int:
    try:
        return int(_meta(obj).get("resourceVersion") or 0)
    except ValueError:
        return 0


