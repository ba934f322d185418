"""The Deployment controller: ReplicaSets per pod template, rolled from old to new within maxSurge
and maxUnavailable (or all at once with Recreate), and the status and conditions kubectl reads.

Upstream's pkg/controller/deployment, keyed `namespace/name`. One reconcile: claim the namespace's
ReplicaSets (`controller_refs.claim`); a deleted Deployment only gets status; otherwise note
pause/resume in Progressing; a paused Deployment or a change of replicas (`desired-replicas`
differs) is a scale (`_sync`: proportional across active ReplicaSets); else the strategy's rollout
(`deployment_rollout.py`). The new ReplicaSet is `<name>-<pod-template-hash>` (`template_hash`),
with the revision annotations of `deployment_revisions`. Writes are remembered until the informer
shows them (`_Written`), so a cache behind our own writes neither repeats nor undoes them.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Hashable
from typing import Any

from client import cache, errors
from client.informer import Event
from client.resources import DEPLOYMENTS, PODS, REPLICASETS
from client.rest import RestClient
from controllers import (controller_refs, deployment_conditions as conditions, deployment_revisions as revisions,
                         deployment_rollout as rollout, events, label_selectors, pod_states, rollout_math,
                         template_hash)
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.deployment")
Obj = dict[str, Any]
COMPONENT = "deployment-controller"
NAMESPACE_INDEX = "namespace"
CONTROLLER_INDEX = "controller-uid"
MAX_INT32 = 2**31 - 1


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _rv(obj: Obj) -> int:
    try:
        return int(_meta(obj).get("resourceVersion") or 0)
    except ValueError:
        return 0


class _Written:
    """Objects we wrote, by key, until the informer's copy is at least as new (client-go's
    mutation cache): reads take whichever is newer."""

    def __init__(self) -> None:
        self.objects: dict[str, Obj] = {}

    def remember(self, obj: Obj) -> None:
        self.objects[cache.key_of(obj)] = obj

    def forget(self, key: str) -> None:
        self.objects.pop(key, None)

    def newest(self, key: str, cached: Obj | None) -> Obj | None:
        written = self.objects.get(key)
        if written is None:
            return cached
        if cached is not None and (_meta(cached).get("uid") != _meta(written).get("uid") or _rv(cached) >= _rv(written)):
            del self.objects[key]
            return cached
        return written

    def unseen(self, namespace: str, known: set[str]) -> list[Obj]:
        return [o for k, o in self.objects.items() if _meta(o).get("namespace") == namespace and k not in known]


def normalized(status: Obj) -> Obj:
    """A status as the server returns it: zero counts and empty lists are left out (omitempty)."""
    return {k: v for k, v in status.items() if v not in (0, None, [], {})}


def find_new_replica_set(deployment: Obj, replica_sets: list[Obj]) -> Obj | None:
    """The oldest ReplicaSet whose template is the Deployment's, hash label aside."""
    template = (deployment.get("spec") or {}).get("template")
    for rs in sorted(replica_sets, key=rollout.by_creation):
        if template_hash.equal_ignoring_hash((rs.get("spec") or {}).get("template"), template):
            return rs
    return None


class DeploymentController:
    name = "deployment"

    def __init__(self, client: RestClient) -> None:
        self.client = client
        self.deployments = Watch(DEPLOYMENTS, self._deployment_keys, indexers={NAMESPACE_INDEX: cache.by_namespace})
        self.replicasets = Watch(REPLICASETS, self._rs_keys, indexers={NAMESPACE_INDEX: cache.by_namespace,
                                                                       CONTROLLER_INDEX: controller_refs.controller_uid})
        self.pods = Watch(PODS, self._pod_keys, indexers={CONTROLLER_INDEX: controller_refs.controller_uid})
        self.watches = [self.deployments, self.replicasets, self.pods]
        self.written = {"deployments": _Written(), "replicasets": _Written()}
        self._ctx: Any = None

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    # -- cache reads -------------------------------------------------------------------------

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _deployment(self, key: str) -> Obj | None:
        store = self._store(self.deployments)
        return self.written["deployments"].newest(key, store.get(key) if store is not None else None)

    def _replica_sets_in(self, namespace: str) -> list[Obj]:
        store = self._store(self.replicasets)
        cached = list(store.by_index(NAMESPACE_INDEX, namespace)) if store is not None else []
        written = self.written["replicasets"]
        found = [written.newest(cache.key_of(rs), rs) for rs in cached]
        return [rs for rs in found if rs is not None] + written.unseen(namespace, {cache.key_of(rs) for rs in cached})

    # -- events → keys -----------------------------------------------------------------------

    def _deployment_keys(self, event: Event) -> list[Hashable]:
        if event.type == "DELETED":
            self.written["deployments"].forget(event.key)
        return [event.key]

    def _deployment_key_of(self, namespace: str, ref: Obj | None) -> str | None:
        if not ref or ref.get("kind") != "Deployment":
            return None
        key = f"{namespace}/{ref.get('name')}"
        found = self._deployment(key)
        return key if found is not None and _meta(found).get("uid") == ref.get("uid") else None

    def _rs_keys(self, event: Event) -> list[Hashable]:
        rs, meta = event.obj, _meta(event.obj)
        namespace = meta.get("namespace") or ""
        if event.type == "DELETED":
            self.written["replicasets"].forget(event.key)
        keys: list[Hashable] = []
        ref = controller_refs.controller_of(rs)
        if event.type == "MODIFIED" and event.old is not None:
            old_ref = controller_refs.controller_of(event.old)
            if old_ref and (not ref or old_ref.get("uid") != ref.get("uid")):
                keys += [k for k in [self._deployment_key_of(namespace, old_ref)] if k]
        owner = self._deployment_key_of(namespace, ref)
        if owner:
            keys.append(owner)
        elif ref is None and event.type != "DELETED":
            store = self._store(self.deployments)
            for d in store.by_index(NAMESPACE_INDEX, namespace) if store is not None else []:
                if label_selectors.matches((d.get("spec") or {}).get("selector"), meta.get("labels")):
                    keys.append(cache.key_of(d))
        return keys

    def _pod_keys(self, event: Event) -> list[Hashable]:
        """Recreate waits for the old pods to be gone (or finished) before it makes the new ones."""
        phase = (event.obj.get("status") or {}).get("phase")
        if event.type != "DELETED" and phase not in ("Succeeded", "Failed"):
            return []
        namespace = _meta(event.obj).get("namespace") or ""
        ref = controller_refs.controller_of(event.obj)
        if not ref or ref.get("kind") != "ReplicaSet":
            return []
        store = self._store(self.replicasets)
        rs = store.get(f"{namespace}/{ref.get('name')}") if store is not None else None
        if rs is None:
            return []
        owner = self._deployment_key_of(namespace, controller_refs.controller_of(rs))
        deployment = self._deployment(owner) if owner else None
        if deployment is None or ((deployment.get("spec") or {}).get("strategy") or {}).get("type") != "Recreate":
            return []
        return [owner]

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        found = self._deployment(str(key))
        if found is None:
            return None
        d = copy.deepcopy(found)
        spec = d.get("spec") or {}
        if label_selectors.is_empty(spec.get("selector")):
            await self.event(d, "Warning", "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
            if ((d.get("status") or {}).get("observedGeneration") or 0) < (_meta(d).get("generation") or 0):
                d.setdefault("status", {})["observedGeneration"] = _meta(d).get("generation")
                await self.update_status(d)
            return None
        rs_list = await self._claim_replica_sets(d)
        if _meta(d).get("deletionTimestamp"):
            return await self.sync_status_only(d, rs_list)
        await self._check_paused_conditions(d)
        if spec.get("paused") or self._is_scaling_event(d, rs_list):
            return await self.sync(d, rs_list)
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            return await rollout.recreate(self, d, rs_list, self._pods_by_replica_set(rs_list))
        return await rollout.rolling(self, d, rs_list)

    async def _claim_replica_sets(self, d: Obj) -> list[Obj]:
        candidates = [copy.deepcopy(rs) for rs in self._replica_sets_in(_meta(d)["namespace"])]
        claimed = controller_refs.claim(d, candidates, (d.get("spec") or {}).get("selector"))
        owned = list(claimed.owned)
        if claimed.adopt and await self._can_adopt(d):
            for rs in claimed.adopt:
                patched = await self._patch_rs(rs, controller_refs.adopt_patch(d, "apps/v1", "Deployment", rs))
                if patched is not None:
                    owned.append(patched)
        for rs in claimed.release:
            await self._patch_rs(rs, controller_refs.release_patch(d, rs))
        return owned

    async def _can_adopt(self, d: Obj) -> bool:
        try:
            fresh = await self.client.get(DEPLOYMENTS, _meta(d)["name"], _meta(d)["namespace"])
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return False
            raise
        return _meta(fresh).get("uid") == _meta(d).get("uid") and not _meta(fresh).get("deletionTimestamp")

    async def _patch_rs(self, rs: Obj, patch: Obj) -> Obj | None:
        try:
            patched = await self.client.patch(REPLICASETS, _meta(rs)["name"], patch, _meta(rs)["namespace"],
                                              patch_type="strategic")
        except errors.APIError as exc:
            if errors.is_not_found(exc) or exc.code == 422:
                return None
            raise
        self.written["replicasets"].remember(patched)
        return patched

    def _pods_by_replica_set(self, rs_list: list[Obj]) -> dict[str, list[Obj]]:
        store = self._store(self.pods)
        return {_meta(rs)["uid"]: list(store.by_index(CONTROLLER_INDEX, _meta(rs)["uid"])) if store is not None else []
                for rs in rs_list}

    def _is_scaling_event(self, d: Obj, rs_list: list[Obj]) -> bool:
        """A replicas change with the template unchanged: some active ReplicaSet was sized for another count."""
        wanted = rollout_math.replicas(d)
        for rs in rs_list:
            if not rollout_math.spec_replicas(rs):
                continue
            desired = revisions.int_annotation(rs, revisions.DESIRED_REPLICAS)
            if desired is not None and desired != wanted:
                return True
        return False

    async def _check_paused_conditions(self, d: Obj) -> None:
        if not conditions.has_deadline(d):
            return
        status = d.setdefault("status", {})
        current = conditions.get_condition(status, "Progressing")
        if current is not None and current.get("reason") == conditions.TIMED_OUT:
            return  # a reported lack of progress is not overwritten by a pause
        paused = bool((d.get("spec") or {}).get("paused"))
        was_paused = current is not None and current.get("reason") == conditions.PAUSED
        stamp = pod_states.format_time(time.time())
        if paused and not was_paused:
            conditions.set_condition(status, conditions.condition("Progressing", "Unknown", conditions.PAUSED,
                                                                  "Deployment is paused", stamp))
        elif not paused and was_paused:
            conditions.set_condition(status, conditions.condition("Progressing", "Unknown", conditions.RESUMED,
                                                                  "Deployment is resumed", stamp))
        else:
            return
        await self.update_status(d)

    # -- the pieces the strategies share ---------------------------------------------------------

    async def get_all_replica_sets(self, d: Obj, rs_list: list[Obj], create: bool) -> tuple[Obj | None, list[Obj]]:
        """The new ReplicaSet (made when `create`, revision annotations synced) and all the old ones."""
        new_rs = find_new_replica_set(d, rs_list)
        old = [rs for rs in rs_list if rs is not new_rs]
        new_revision = revisions.max_revision(old) + 1
        if new_rs is not None:
            await self._sync_existing_new_rs(d, new_rs, new_revision)
            return new_rs, old
        if not create:
            return None, old
        return await self._create_new_rs(d, old, new_revision), old

    async def _sync_existing_new_rs(self, d: Obj, new_rs: Obj, new_revision: int) -> None:
        wanted = rollout_math.replicas(d)
        draft = copy.deepcopy(new_rs)
        changed = revisions.set_new_rs_annotations(d, draft, new_revision, True, wanted,
                                                   wanted + rollout_math.max_surge(d))
        min_ready = (d.get("spec") or {}).get("minReadySeconds") or 0
        if changed or ((draft.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
            draft["spec"]["minReadySeconds"] = min_ready
            await self.update_rs(new_rs, draft)
            return
        needs_update = self._set_deployment_revision(d, revisions.annotations(new_rs).get(revisions.REVISION) or "")
        status = d.setdefault("status", {})
        if conditions.has_deadline(d) and conditions.get_condition(status, "Progressing") is None:
            conditions.set_condition(status, conditions.condition(
                "Progressing", "True", conditions.FOUND_NEW_RS, f'Found new replica set "{_meta(new_rs)["name"]}"',
                pod_states.format_time(time.time())))
            needs_update = True
        if needs_update:
            await self.update_status(d)

    def _set_deployment_revision(self, d: Obj, revision: str) -> bool:
        annotations = d.setdefault("metadata", {}).setdefault("annotations", {})
        if annotations.get(revisions.REVISION) == revision:
            return False
        annotations[revisions.REVISION] = revision
        return True

    def _new_rs_body(self, d: Obj, collision_count: int | None) -> Obj:
        spec = d.get("spec") or {}
        template = copy.deepcopy(spec.get("template") or {})
        pod_hash = template_hash.compute(spec.get("template"), collision_count)
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), template_hash.LABEL: pod_hash}
        selector = copy.deepcopy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), template_hash.LABEL: pod_hash}
        meta = _meta(d)
        return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": f"{meta['name']}-{pod_hash}", "namespace": meta["namespace"],
                             "labels": dict(tmeta["labels"]),
                             "ownerReferences": [controller_refs.owner_reference(d, "apps/v1", "Deployment")]},
                "spec": {"replicas": 0, "minReadySeconds": spec.get("minReadySeconds") or 0, "selector": selector,
                         "template": template}}

    async def _create_new_rs(self, d: Obj, old: list[Obj], new_revision: int) -> Obj:
        status = d.setdefault("status", {})
        body = self._new_rs_body(d, status.get("collisionCount"))
        body["spec"]["replicas"] = rollout_math.new_rs_replicas(d, old + [body], body)
        wanted = rollout_math.replicas(d)
        revisions.set_new_rs_annotations(d, body, new_revision, False, wanted, wanted + rollout_math.max_surge(d))
        name, namespace = body["metadata"]["name"], body["metadata"]["namespace"]
        created = True
        try:
            made = await self.client.create(REPLICASETS, body, namespace)
        except errors.APIError as exc:
            if errors.is_already_exists(exc):
                made = await self.client.get(REPLICASETS, name, namespace)
                owner = controller_refs.controller_of(made)
                if not (owner and owner.get("uid") == _meta(d).get("uid") and template_hash.equal_ignoring_hash(
                        (made.get("spec") or {}).get("template"), (d.get("spec") or {}).get("template"))):
                    # Another template (or owner) has this name: hash again with the next collision count.
                    status["collisionCount"] = (status.get("collisionCount") or 0) + 1
                    await self.update_status(d)
                    raise
                created = False
            elif errors.has_cause(exc, "NamespaceTerminating"):
                raise  # no condition or event: the namespace is going away
            else:
                message = f'Failed to create new replica set "{name}": {exc.message or exc}'
                if conditions.has_deadline(d):
                    conditions.set_condition(status, conditions.condition(
                        "Progressing", "False", conditions.FAILED_RS_CREATE, message, pod_states.format_time(time.time())))
                    await self.update_status(d, quiet=True)
                await self.event(d, "Warning", conditions.FAILED_RS_CREATE, message)
                raise
        self.written["replicasets"].remember(made)
        replicas = rollout_math.spec_replicas(made)
        if created and replicas > 0:
            await self.event(d, "Normal", "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to {replicas}")
        needs_update = self._set_deployment_revision(d, str(new_revision))
        if created and conditions.has_deadline(d):
            conditions.set_condition(status, conditions.condition(
                "Progressing", "True", conditions.NEW_RS_CREATED, f'Created new replica set "{name}"',
                pod_states.format_time(time.time())))
            needs_update = True
        if needs_update:
            await self.update_status(d)
        return made

    async def update_rs(self, rs: Obj, draft: Obj) -> None:
        """Write the draft's replicas, minReadySeconds and annotations as a merge patch guarded by
        uid and resourceVersion (sizes computed from an old copy must not land, as with upstream's
        Update); the answer goes into `rs`, so the lists the strategies hold see it."""
        meta = _meta(rs)
        spec = draft.get("spec") or {}
        patch = {"metadata": {"uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion"),
                              "annotations": _meta(draft).get("annotations") or {}},
                 "spec": {"replicas": spec.get("replicas"), "minReadySeconds": spec.get("minReadySeconds") or 0}}
        answer = await self.client.patch(REPLICASETS, meta["name"], patch, meta["namespace"])
        self.written["replicasets"].remember(answer)
        rs.clear()
        rs.update(copy.deepcopy(answer))

    async def update_status(self, d: Obj, quiet: bool = False) -> None:
        """PUT the Deployment's status (with the revision annotation: the status strategy keeps annotations)."""
        try:
            answer = await self.client.update(DEPLOYMENTS, d, _meta(d)["namespace"], subresource="status")
        except errors.APIError:
            if quiet:
                return
            raise
        self.written["deployments"].remember(answer)
        d.clear()
        d.update(copy.deepcopy(answer))

    async def event(self, d: Obj, kind: str, reason: str, message: str) -> None:
        await events.record(self.client, COMPONENT, {**d, "kind": "Deployment", "apiVersion": "apps/v1"}, kind, reason, message)

    async def scale_rs(self, rs: Obj, new_scale: int, d: Obj) -> bool:
        """scaleReplicaSet: size and the replicas annotations; the event when the size moved."""
        old_scale = rollout_math.spec_replicas(rs)
        wanted = rollout_math.replicas(d)
        maximum = wanted + rollout_math.max_surge(d)
        size_changes = old_scale != new_scale
        if not size_changes and not revisions.replicas_annotations_need_update(rs, wanted, maximum):
            return False
        draft = copy.deepcopy(rs)
        draft["spec"]["replicas"] = new_scale
        revisions.set_replicas_annotations(draft, wanted, maximum)
        await self.update_rs(rs, draft)
        if size_changes:
            direction = "up" if old_scale < new_scale else "down"
            await self.event(d, "Normal", "ScalingReplicaSet",
                             f"Scaled {direction} replica set {_meta(rs)['name']} from {old_scale} to {new_scale}")
        return size_changes

    async def scale_and_record(self, rs: Obj, new_scale: int, d: Obj) -> bool:
        if rollout_math.spec_replicas(rs) == new_scale:
            return False
        return await self.scale_rs(rs, new_scale, d)

    async def cleanup(self, old: list[Obj], d: Obj) -> None:
        """revisionHistoryLimit: the oldest revisions that are scaled down and settled are deleted."""
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None or limit == MAX_INT32:
            return
        alive = [rs for rs in old if not _meta(rs).get("deletionTimestamp")]
        extra = len(alive) - limit
        if extra <= 0:
            return
        alive.sort(key=lambda rs: (revisions.revision(rs), rollout.by_creation(rs)))
        for rs in alive[:extra]:
            status = rs.get("status") or {}
            if status.get("replicas") or rollout_math.spec_replicas(rs) or \
                    (_meta(rs).get("generation") or 0) > (status.get("observedGeneration") or 0):
                continue
            try:
                await self.client.delete(REPLICASETS, _meta(rs)["name"], _meta(rs)["namespace"])
            except errors.APIError as exc:
                if not errors.is_not_found(exc):
                    raise

    async def sync(self, d: Obj, rs_list: list[Obj]) -> Result | None:
        """A scale or a paused Deployment: sizes only, no rollout."""
        new_rs, old = await self.get_all_replica_sets(d, rs_list, False)
        await rollout.scale(self, d, new_rs, old)
        if (d.get("spec") or {}).get("paused"):
            await self.cleanup(old, d)
        return await self.sync_deployment_status(old + ([new_rs] if new_rs else []), new_rs, d)

    async def sync_status_only(self, d: Obj, rs_list: list[Obj]) -> Result | None:
        new_rs, old = await self.get_all_replica_sets(d, rs_list, False)
        return await self.sync_deployment_status(old + ([new_rs] if new_rs else []), new_rs, d)

    async def sync_deployment_status(self, all_rs: list[Obj], new_rs: Obj | None, d: Obj) -> Result | None:
        status = conditions.calculate_status(d, all_rs, new_rs, pod_states.format_time(time.time()))
        if normalized(status) != normalized(d.get("status") or {}):
            d["status"] = status
            await self.update_status(d)
        return None

    async def sync_rollout_status(self, all_rs: list[Obj], new_rs: Obj | None, d: Obj) -> Result | None:
        now = time.time()
        status = conditions.calculate_status(d, all_rs, new_rs, pod_states.format_time(now))
        conditions.rollout_progress(d, status, new_rs, now)
        conditions.replica_failure(status, all_rs, new_rs)
        if normalized(status) == normalized(d.get("status") or {}):
            return self._requeue_stuck(d, status, now)
        d["status"] = status
        await self.update_status(d)
        return None

    def _requeue_stuck(self, d: Obj, status: Obj, now: float) -> Result | None:
        """Come back when the progress deadline would pass, so ProgressDeadlineExceeded is noticed."""
        current = conditions.get_condition(d.get("status") or {}, "Progressing")
        if not conditions.has_deadline(d) or current is None:
            return None
        if conditions.complete(d, status) or current.get("reason") == conditions.TIMED_OUT:
            return None
        since = pod_states.parse_time(current.get("lastUpdateTime"))
        if since is None:
            return None
        after = since + int((d.get("spec") or {}).get("progressDeadlineSeconds") or 0) - now
        return Result(requeue_after=max(after, 0.0) + 1.0)


