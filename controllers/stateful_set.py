"""The StatefulSet controller: pods `<set>-<ordinal>` with stable names, claims and ordered rollouts.

Upstream's pkg/controller/statefulset, keyed `namespace/name`. One reconcile: claim the pods named
for the set, find or create the update ControllerRevision (`controller_history.py`), do what
`stateful_identity.plan` says (failed pods replaced, missing ordinals created with their claims
first, condemned ones deleted highest first, pods at or above the partition rolled highest first),
align the claims' ownerReferences with the retention policy, write status, trim the history.
Events as upstream: SuccessfulCreate "create Pod web-0 in StatefulSet web successful", etc.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Hashable
from typing import Any

from client import cache, errors
from client.informer import Event
from client.resources import CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS
from client.rest import RestClient
from controllers import controller_history, controller_refs, events, pod_states, stale_cache
from controllers import stateful_identity as ident
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.statefulset")
Obj = dict[str, Any]
COMPONENT = "statefulset-controller"
NAMESPACE_INDEX = "namespace"
STATUS_KEYS = ("observedGeneration", "replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
               "availableReplicas", "currentRevision", "updateRevision", "collisionCount")


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def calculate_status(sts: Obj, pods: list[Obj], current: str, update: str, collision_count: int, now: float) -> Obj:
    """Upstream's computeReplicaStatus and completeRollingUpdate."""
    min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
    status: Obj = {"observedGeneration": _meta(sts).get("generation") or 0, "replicas": 0, "readyReplicas": 0,
                   "currentReplicas": 0, "updatedReplicas": 0, "availableReplicas": 0,
                   "currentRevision": current, "updateRevision": update, "collisionCount": collision_count}
    for pod in pods:
        status["replicas"] += 1
        if (pod.get("status") or {}).get("phase") == "Running" and pod_states.is_ready(pod):
            status["readyReplicas"] += 1
            if pod_states.is_available(pod, min_ready, now):
                status["availableReplicas"] += 1
        if not _meta(pod).get("deletionTimestamp"):
            revision = ident.revision_of(pod)
            status["currentReplicas"] += revision == current
            status["updatedReplicas"] += revision == update
    strategy = ((sts.get("spec") or {}).get("updateStrategy") or {}).get("type", "RollingUpdate")
    wanted = ident.replicas(sts)
    if strategy == "RollingUpdate" and status["updatedReplicas"] == wanted == status["replicas"] \
            and status["readyReplicas"] == wanted:
        status["currentRevision"], status["currentReplicas"] = update, status["updatedReplicas"]
    old_conditions = (sts.get("status") or {}).get("conditions")
    if old_conditions:
        status["conditions"] = old_conditions
    # The API's omitempty counts are left out at zero, as a real controller's writes leave them.
    for key in ("readyReplicas", "currentReplicas", "updatedReplicas"):
        if not status[key]:
            del status[key]
    return status


class StatefulSetController:
    name = "statefulset"

    def __init__(self, client: RestClient) -> None:
        self.client = client
        self.history = controller_history.History(client, "StatefulSet")
        by_ns = {NAMESPACE_INDEX: cache.by_namespace}
        self.sets = Watch(STATEFULSETS, lambda e: [e.key], indexers=dict(by_ns))
        self.pods = Watch(PODS, self._owner_keys, indexers=dict(by_ns))
        self.revisions = Watch(CONTROLLERREVISIONS, self._owner_keys, indexers=dict(by_ns))
        self.claims = Watch(PERSISTENTVOLUMECLAIMS, lambda e: [], indexers=dict(by_ns))
        self.watches = [self.sets, self.pods, self.revisions, self.claims]
        self._ctx: Any = None
        self.writes = stale_cache.LastWrites()

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _owner_keys(self, event: Event) -> list[Hashable]:
        """The set that controls the object (or did, before this change), or the sets that may adopt it."""
        return controller_refs.owner_keys(event.obj, event.old, event.type == "DELETED", "StatefulSet",
                                          self._store(self.sets), NAMESPACE_INDEX)

    def _event(self, sts: Obj, kind: str, reason: str, message: str) -> Any:
        return events.record(self.client, COMPONENT, {**sts, "kind": "StatefulSet", "apiVersion": "apps/v1"},
                             kind, reason, message)

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        store = self._store(self.sets)
        sts = store.get(str(key)) if store is not None else None
        if sts is None:
            self.writes.forget(key)
            return None
        if not self.writes.caught_up(key, self._ctx, self.watches):
            return Result(requeue_after=stale_cache.REQUEUE)  # our last write is not in the cache yet
        now = time.time()
        namespace = _meta(sts)["namespace"]
        pods = await self._claim_pods(sts)
        revision_store = self._store(self.revisions)
        candidates = list(revision_store.by_index(NAMESPACE_INDEX, namespace)) if revision_store is not None else []
        owned_revisions = await self.history.owned(sts, candidates)
        revs = await self.history.revisions(sts, owned_revisions)
        current, update = _meta(revs.current)["name"], _meta(revs.update)["name"]
        by_ordinal = {o: p for p in pods if (o := ident.ordinal_of(_meta(sts)["name"], _meta(p)["name"])) is not None}
        failure: errors.APIError | None = None
        if not _meta(sts).get("deletionTimestamp"):
            await self._retain_claims(sts, by_ordinal)
            failure = await self._act(sts, by_ordinal, revs, now)
        pods = await self._claim_pods(sts) if failure is None else pods
        status = calculate_status(sts, pods, current, update, revs.collision_count, now)
        await self._write_status(sts, status)
        live = {ident.revision_of(p) for p in pods} | {current, update, status["currentRevision"]}
        await self.history.truncate(sts, revs.all, live, lambda r: False)
        if failure is not None:
            raise failure
        min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
        if min_ready and status.get("readyReplicas", 0) != status["availableReplicas"]:
            return Result(requeue_after=float(min_ready))
        return None

    async def _claim_pods(self, sts: Obj) -> list[Obj]:
        store = self._store(self.pods)
        namespace, name = _meta(sts)["namespace"], _meta(sts)["name"]
        candidates = list(store.by_index(NAMESPACE_INDEX, namespace)) if store is not None else []
        # Upstream's isMemberOf: a set only takes pods named for it.
        candidates = [p for p in candidates if ident.ordinal_of(name, _meta(p)["name"]) is not None
                      or (controller_refs.controller_of(p) or {}).get("uid") == _meta(sts).get("uid")]
        claimed = controller_refs.claim(sts, candidates, (sts.get("spec") or {}).get("selector"))
        owned = list(claimed.owned)
        for pod in claimed.adopt:
            if ident.ordinal_of(name, _meta(pod)["name"]) is None or not pod_states.is_active(pod):
                continue
            patched = await self._patch_pod(pod, controller_refs.adopt_patch(sts, "apps/v1", "StatefulSet", pod))
            if patched is not None:
                owned.append(patched)
        for pod in claimed.release:
            await self._patch_pod(pod, controller_refs.release_patch(sts, pod))
        return [p for p in owned if ident.ordinal_of(name, _meta(p)["name"]) is not None]

    async def _patch_pod(self, pod: Obj, patch: Obj) -> Obj | None:
        try:
            return await self.client.patch(PODS, _meta(pod)["name"], patch, _meta(pod)["namespace"], patch_type="strategic")
        except errors.APIError as exc:
            if errors.is_not_found(exc) or exc.code == 422:
                return None
            raise

    async def _act(self, sts: Obj, pods: dict[int, Obj], revs: controller_history.Revisions, now: float) -> errors.APIError | None:
        current, update = _meta(revs.current)["name"], _meta(revs.update)["name"]
        steps = ident.plan(sts, pods, update, now)
        if steps.wait:
            log.debug("statefulset %s: %s", cache.key_of(sts), steps.wait)
        set_name = _meta(sts)["name"]
        for pod_name in steps.delete:
            ordinal = ident.ordinal_of(set_name, pod_name)
            pod = pods.get(ordinal) if ordinal is not None else None
            if pod is not None and ordinal is not None and not ident.in_range(sts, ordinal):
                await self._retain_claims(sts, {ordinal: pod})  # whenScaled=Delete: the claim follows its pod
            failure = await self._delete_pod(sts, pod_name)
            if failure is not None:
                return failure
        for ordinal in steps.create:
            revision = revs.current if ident.revision_for(sts, ordinal, current, update) == current else revs.update
            failure = await self._create_pod(sts, ordinal, revision)
            if failure is not None:
                return failure
        return None

    async def _create_pod(self, sts: Obj, ordinal: int, revision: Obj) -> errors.APIError | None:
        namespace, set_name = _meta(sts)["namespace"], _meta(sts)["name"]
        pod = ident.new_pod(sts, controller_history.template_of(revision), _meta(revision)["name"], ordinal)
        name = _meta(pod)["name"]
        for claim in ident.new_claims(sts, ordinal):
            claim["metadata"]["ownerReferences"] = ident.claim_owner_refs(sts, claim, None, ordinal) or None
            if claim["metadata"]["ownerReferences"] is None:
                del claim["metadata"]["ownerReferences"]
            claim_name = _meta(claim)["name"]
            try:
                await self.client.create(PERSISTENTVOLUMECLAIMS, claim, namespace)
            except errors.APIError as exc:
                if exc.code == 409:
                    continue  # the claim outlives its pods: that is the point
                await self._event(sts, "Warning", "FailedCreate",
                                  f"create Claim {claim_name} for Pod {name} in StatefulSet {set_name} failed error: {_text(exc)}")
                return exc
            await self._event(sts, "Normal", "SuccessfulCreate",
                              f"create Claim {claim_name} Pod {name} in StatefulSet {set_name} success")
        try:
            self.writes.wrote(cache.key_of(sts), PODS, await self.client.create(PODS, pod, namespace))
        except errors.APIError as exc:
            if exc.code == 409:
                return None  # our cache is behind: the pod is there
            await self._event(sts, "Warning", "FailedCreate",
                              f"create Pod {name} in StatefulSet {set_name} failed error: {_text(exc)}")
            return exc
        await self._event(sts, "Normal", "SuccessfulCreate", f"create Pod {name} in StatefulSet {set_name} successful")
        return None

    async def _delete_pod(self, sts: Obj, name: str) -> errors.APIError | None:
        set_name = _meta(sts)["name"]
        try:
            self.writes.wrote(cache.key_of(sts), PODS, await self.client.delete(PODS, name, _meta(sts)["namespace"]))
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return None
            await self._event(sts, "Warning", "FailedDelete",
                              f"delete Pod {name} in StatefulSet {set_name} failed error: {_text(exc)}")
            return exc
        await self._event(sts, "Normal", "SuccessfulDelete", f"delete Pod {name} in StatefulSet {set_name} successful")
        return None

    async def _retain_claims(self, sts: Obj, pods: dict[int, Obj]) -> None:
        """Bring the claims' ownerReferences in line with the retention policy (upstream's
        claimsMatchRetentionPolicy / updatePodClaimForRetentionPolicy)."""
        store = self._store(self.claims)
        if store is None or not ident.claim_templates(sts):
            return
        namespace = _meta(sts)["namespace"]
        for ordinal, pod in pods.items():
            for template in ident.claim_templates(sts):
                claim = store.get(f"{namespace}/{ident.claim_name(template['metadata']['name'], sts, ordinal)}")
                if claim is None:
                    continue
                await self._set_claim_owners(sts, claim, pod, ordinal)

    async def _set_claim_owners(self, sts: Obj, claim: Obj, pod: Obj, ordinal: int) -> None:
        """An update (upstream's role grants update, not patch, of claims), so guarded by the claim's
        resourceVersion; on a conflict (the binder wrote it) read it and retry once."""
        namespace = _meta(sts)["namespace"]
        for attempt in range(2):
            refs = ident.claim_owner_refs(sts, claim, pod, ordinal)
            if refs == (_meta(claim).get("ownerReferences") or []):
                return
            meta = {k: v for k, v in _meta(claim).items() if k != "ownerReferences"}
            body = {**claim, "metadata": {**meta, **({"ownerReferences": refs} if refs else {})}}
            try:
                await self.client.update(PERSISTENTVOLUMECLAIMS, body, namespace)
                return
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return
                if not errors.is_conflict(exc) or attempt:
                    raise
            claim = await self.client.get(PERSISTENTVOLUMECLAIMS, _meta(claim)["name"], namespace)

    async def _write_status(self, sts: Obj, status: Obj) -> None:
        meta = _meta(sts)
        for attempt in range(2):
            old = sts.get("status") or {}
            if all(old.get(k) == status.get(k) for k in STATUS_KEYS):
                return
            try:
                answer = await self.client.update(STATEFULSETS, {**sts, "status": status}, meta["namespace"],
                                                  subresource="status")
                self.writes.wrote(cache.key_of(sts), STATEFULSETS, answer)
                return
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return
                if not errors.is_conflict(exc) or attempt:
                    raise
            sts = await self.client.get(STATEFULSETS, meta["name"], meta["namespace"])
            if _meta(sts).get("uid") != meta.get("uid"):
                return
            status = {**status, "observedGeneration": _meta(sts).get("generation") or 0}
            # Computed from a stale copy, the count could go back; it only ever grows.
            fresh_count = (sts.get("status") or {}).get("collisionCount")
            if fresh_count is not None:
                status["collisionCount"] = max(int(fresh_count), int(status.get("collisionCount") or 0))


def _text(exc: BaseException) -> str:
    return exc.message if isinstance(exc, errors.APIError) and exc.message else str(exc)
