"""The DaemonSet controller: one pod on every node that should run it, rolled out node by node.

Upstream's pkg/controller/daemon, keyed `namespace/name`. One reconcile: claim the pods, find or
create the update ControllerRevision (its hash labels the pods), then `plan`: a pod for each wanted
node without one; failed, surplus and evicted pods deleted; under RollingUpdate old pods replaced
within maxUnavailable (delete first) or maxSurge (new beside old). Pods are pinned by node
affinity for the scheduler to bind; creations and deletions wait for the informer
(`expectations.py`). Events: SuccessfulCreate "Created pod: x", SuccessfulDelete, FailedCreate.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from client import cache, errors
from client.informer import Event
from client.resources import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS
from client.rest import RestClient
from controllers import controller_history, controller_refs, events, pod_deletions, pod_states, rollout_math, stale_cache
from controllers import daemon_placement as placement
from controllers.expectations import Expectations
from controllers.reconciling import Result, Watch
from controllers.replica_set import slow_start_batches

log = logging.getLogger("haru.controllers.daemonset")
Obj = dict[str, Any]
COMPONENT = "daemonset-controller"
NAMESPACE_INDEX = "namespace"
STATUS_KEYS = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
               "observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable", "collisionCount")


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _by_age(pods: list[Obj]) -> list[Obj]:
    """podByCreationTimestampAndPhase: running pods first, then the oldest."""
    return sorted(pods, key=lambda p: ((p.get("status") or {}).get("phase") != "Running",
                                       _meta(p).get("creationTimestamp") or "", _meta(p).get("name") or ""))


def pods_by_node(pods: list[Obj]) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for pod in pods:
        node = placement.target_node(pod)
        if node is not None:
            out.setdefault(node, []).append(pod)
    return {node: _by_age(group) for node, group in out.items()}


def rolling_limits(ds: Obj, desired: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved against the number of nodes that want a pod."""
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate") or {}
    surge = rollout_math.scaled_value(rolling.get("maxSurge", 0), desired, True)
    unavailable = rollout_math.scaled_value(rolling.get("maxUnavailable", 1), desired, True)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


@dataclass
class Plan:
    create_on: list[str] = field(default_factory=list)  # node names
    delete: list[Obj] = field(default_factory=list)     # pods


def plan(ds: Obj, nodes: list[Obj], by_node: dict[str, list[Obj]], hash_: str, now: float) -> Plan:
    """One pass of upstream's manage + rollingUpdate over the nodes and the pods meant for each."""
    spec = ds.get("spec") or {}
    template = spec.get("template") or {}
    generation = (_meta(ds).get("annotations") or {}).get(placement.GENERATION_ANNOTATION)
    min_ready = int(spec.get("minReadySeconds") or 0)
    rolling = ((spec.get("updateStrategy") or {}).get("type") or "RollingUpdate") == "RollingUpdate"
    out = Plan()
    known = {_meta(n)["name"] for n in nodes}
    wanted: list[str] = []
    for node in nodes:
        name = _meta(node)["name"]
        run, stay = placement.should_run(template, node)
        pods = [p for p in by_node.get(name, []) if not _meta(p).get("deletionTimestamp")]
        if run:
            wanted.append(name)
        if not stay:
            out.delete += pods
            continue
        failed = [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"]
        out.delete += failed
        alive = [p for p in pods if p not in failed]
        if run and not alive and not failed:
            out.create_on.append(name)
        elif len(alive) > 1:
            out.delete += _surplus(alive, hash_, generation, rolling and rolling_limits(ds, 1)[0] > 0)
    for name, pods in by_node.items():
        if name not in known:  # the node is gone: its pods can never run
            out.delete += [p for p in pods if not _meta(p).get("deletionTimestamp")]
    if rolling and not out.create_on and not out.delete:
        _roll(ds, wanted, by_node, hash_, generation, min_ready, now, out)
    return out


def _surplus(pods: list[Obj], hash_: str, generation: str | None, surging: bool) -> list[Obj]:
    """More than one pod on a node: keep the oldest; during a surge an old and a new pod may share it."""
    if surging and len(pods) == 2 and sum(placement.is_updated(p, hash_, generation) for p in pods) == 1:
        return []
    return pods[1:]


def _roll(ds: Obj, wanted: list[str], by_node: dict[str, list[Obj]], hash_: str, generation: str | None,
          min_ready: int, now: float, out: Plan) -> None:
    surge, max_unavailable = rolling_limits(ds, len(wanted))
    unavailable = surging = 0
    now_old: list[Obj] = []          # old pods that are unavailable anyway: replace at once
    candidates: list[Obj] = []       # available old pods, replaced within the budget
    new_now: list[str] = []
    new_candidates: list[str] = []
    for name in wanted:
        pods = [p for p in by_node.get(name, []) if not _meta(p).get("deletionTimestamp")]
        new = [p for p in pods if placement.is_updated(p, hash_, generation)]
        old = [p for p in pods if not placement.is_updated(p, hash_, generation)]
        if len(new) > 1 or len(old) > 1 or not pods:
            unavailable += 1
            continue
        available = {id(p): pod_states.is_available(p, min_ready, now) for p in pods}
        if surge == 0:
            if new and old:
                unavailable += 1
            elif new:
                unavailable += not available[id(new[0])]
            elif not available[id(old[0])]:
                now_old.append(old[0])
            else:
                candidates.append(old[0])
            continue
        if not old:
            unavailable += not available[id(new[0])]
        elif not new:
            (new_candidates if available[id(old[0])] else new_now).append(name)
        else:
            if available[id(new[0])]:
                out.delete.append(old[0])
            else:
                surging += 1
    if surge == 0:
        out.delete += now_old + candidates[:max(max_unavailable - unavailable - len(now_old), 0)]
    else:
        out.create_on += new_now + new_candidates[:max(surge - surging, 0)]


def calculate_status(ds: Obj, nodes: list[Obj], by_node: dict[str, list[Obj]], hash_: str, collision_count: int,
                     now: float) -> Obj:
    template = (ds.get("spec") or {}).get("template") or {}
    generation = (_meta(ds).get("annotations") or {}).get(placement.GENERATION_ANNOTATION)
    min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
    status = {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0,
              "updatedNumberScheduled": 0, "numberAvailable": 0}
    for node in nodes:
        run, _ = placement.should_run(template, node)
        pods = [p for p in by_node.get(_meta(node)["name"], []) if not _meta(p).get("deletionTimestamp")]
        if run:
            status["desiredNumberScheduled"] += 1
            if pods:
                status["currentNumberScheduled"] += 1
                first = pods[0]
                if pod_states.is_ready(first):
                    status["numberReady"] += 1
                    status["numberAvailable"] += pod_states.is_available(first, min_ready, now)
                status["updatedNumberScheduled"] += placement.is_updated(first, hash_, generation)
        elif pods:
            status["numberMisscheduled"] += 1
    result: Obj = {**status, "observedGeneration": _meta(ds).get("generation") or 0,
                   "numberUnavailable": status["desiredNumberScheduled"] - status["numberAvailable"]}
    # The API's omitempty fields are left out at zero, as a real controller's writes leave them.
    for key in ("updatedNumberScheduled", "numberAvailable", "numberUnavailable"):
        if not result[key]:
            del result[key]
    if collision_count or (ds.get("status") or {}).get("collisionCount") is not None:
        result["collisionCount"] = collision_count
    old_conditions = (ds.get("status") or {}).get("conditions")
    if old_conditions:
        result["conditions"] = old_conditions
    return result


class DaemonSetController:
    name = "daemonset"

    def __init__(self, client: RestClient, *, burst_replicas: int = 250) -> None:
        self.client = client
        self.burst_replicas = burst_replicas
        self.history = controller_history.History(client, "DaemonSet", hash_label=placement.REVISION_LABEL)
        self.expectations = Expectations()
        by_ns = {NAMESPACE_INDEX: cache.by_namespace}
        self.sets = Watch(DAEMONSETS, self._set_keys, indexers=dict(by_ns))
        self.pods = Watch(PODS, self._pod_keys, indexers=dict(by_ns))
        self.revisions = Watch(CONTROLLERREVISIONS, self._owner_keys, indexers=dict(by_ns))
        self.nodes = Watch(NODES, self._node_keys)
        self.watches = [self.sets, self.pods, self.revisions, self.nodes]
        self._ctx: Any = None
        self.writes = stale_cache.LastWrites()

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    # -- events → keys -----------------------------------------------------------------------

    def _set_keys(self, event: Event) -> list[Hashable]:
        if event.type == "DELETED":
            self.expectations.forget(event.key)
            self.writes.forget(event.key)
        return [event.key]

    def _node_keys(self, event: Event) -> list[Hashable]:
        if event.type == "MODIFIED" and event.old is not None and _placement_view(event.old) == _placement_view(event.obj):
            return []  # a heartbeat: nothing a DaemonSet places by has changed
        store = self._store(self.sets)
        return [cache.key_of(ds) for ds in (store.list() if store is not None else [])]

    def _owner_keys(self, event: Event) -> list[Hashable]:
        """The set that controls the object (or did, before this change), or the sets that may adopt it."""
        return controller_refs.owner_keys(event.obj, event.old, event.type == "DELETED", "DaemonSet",
                                          self._store(self.sets), NAMESPACE_INDEX)

    def _pod_keys(self, event: Event) -> list[Hashable]:
        keys = self._owner_keys(event)
        ref = controller_refs.controller_of(event.obj)
        if ref is not None and ref.get("kind") == "DaemonSet":
            owner = f"{_meta(event.obj).get('namespace')}/{ref.get('name')}"
            if event.type == "ADDED" and not event.initial:
                self.expectations.creation_observed(owner)
            elif event.type == "DELETED":
                self.expectations.deletion_observed(owner, event.key)
            elif event.type == "MODIFIED" and _meta(event.obj).get("deletionTimestamp") and event.old is not None \
                    and not _meta(event.old).get("deletionTimestamp"):
                self.expectations.deletion_observed(owner, event.key)
        return keys

    def _event(self, ds: Obj, kind: str, reason: str, message: str) -> Any:
        return events.record(self.client, COMPONENT, {**ds, "kind": "DaemonSet", "apiVersion": "apps/v1"},
                             kind, reason, message)

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        store = self._store(self.sets)
        ds = store.get(str(key)) if store is not None else None
        if ds is None:
            self.expectations.forget(key)
            return None
        if not self.writes.caught_up(key, self._ctx, self.watches):
            return Result(requeue_after=stale_cache.REQUEUE)  # our last write is not in the cache yet
        now = time.time()
        namespace = _meta(ds)["namespace"]
        node_store = self._store(self.nodes)
        nodes = sorted(node_store.list() if node_store is not None else [], key=lambda n: _meta(n)["name"])
        pods = await self._claim_pods(ds)
        revision_store = self._store(self.revisions)
        candidates = list(revision_store.by_index(NAMESPACE_INDEX, namespace)) if revision_store is not None else []
        revs = await self.history.revisions(ds, await self.history.owned(ds, candidates))
        hash_ = controller_history.hash_of(revs.update)
        by_node = pods_by_node(pods)
        failure: errors.APIError | None = None
        if self.expectations.satisfied(key) and not _meta(ds).get("deletionTimestamp"):
            steps = plan(ds, nodes, by_node, hash_, now)
            failure = await self._delete_pods(str(key), ds, steps.delete)
            if failure is None:
                failure = await self._create_pods(str(key), ds, steps.create_on[:self.burst_replicas], hash_)
        status = calculate_status(ds, nodes, by_node, hash_, revs.collision_count, now)
        await self._write_status(ds, status)
        live = {f"{_meta(ds)['name']}-{(_meta(p).get('labels') or {}).get(placement.REVISION_LABEL)}" for p in pods}
        await self.history.truncate(ds, revs.all, live | {_meta(revs.update)["name"]}, lambda r: False)
        if failure is not None:
            raise failure
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        if min_ready and status["numberReady"] != status.get("numberAvailable", 0):
            return Result(requeue_after=float(min_ready))
        return None

    async def _claim_pods(self, ds: Obj) -> list[Obj]:
        store = self._store(self.pods)
        candidates = list(store.by_index(NAMESPACE_INDEX, _meta(ds)["namespace"])) if store is not None else []
        claimed = controller_refs.claim(ds, candidates, (ds.get("spec") or {}).get("selector"))
        owned = list(claimed.owned)
        for pod in claimed.adopt:
            if pod_states.is_active(pod):
                patched = await self._patch_pod(pod, controller_refs.adopt_patch(ds, "apps/v1", "DaemonSet", pod))
                if patched is not None:
                    owned.append(patched)
        for pod in claimed.release:
            await self._patch_pod(pod, controller_refs.release_patch(ds, pod))
        return owned

    async def _patch_pod(self, pod: Obj, patch: Obj) -> Obj | None:
        try:
            return await self.client.patch(PODS, _meta(pod)["name"], patch, _meta(pod)["namespace"], patch_type="strategic")
        except errors.APIError as exc:
            if errors.is_not_found(exc) or exc.code == 422:
                return None
            raise

    async def _create_pods(self, key: str, ds: Obj, node_names: list[str], hash_: str) -> errors.APIError | None:
        if not node_names:
            return None
        self.expectations.expect_creations(key, len(node_names))
        namespace = _meta(ds)["namespace"]
        done = 0
        for size in slow_start_batches(len(node_names)):
            batch = node_names[done:done + size]
            results = await asyncio.gather(*(self.client.create(PODS, placement.new_pod(ds, n, hash_), namespace)
                                             for n in batch), return_exceptions=True)
            done += size
            failures = [r for r in results if isinstance(r, BaseException)]
            for result in results:
                if isinstance(result, BaseException):
                    self.expectations.creation_observed(key)
                    await self._event(ds, "Warning", "FailedCreate", f"Error creating: {pod_deletions.error_text(result)}")
                else:
                    self.writes.wrote(key, PODS, result)
                    await self._event(ds, "Normal", "SuccessfulCreate", f"Created pod: {_meta(result)['name']}")
            if failures:
                for _ in range(len(node_names) - done):
                    self.expectations.creation_observed(key)
                if not isinstance(failures[0], errors.APIError):
                    raise failures[0]
                return failures[0]
        return None

    async def _delete_pods(self, key: str, ds: Obj, pods: list[Obj]) -> errors.APIError | None:
        return await pod_deletions.delete_all(self.client, self.expectations, key, pods,
                                              lambda *event: self._event(ds, *event))

    async def _write_status(self, ds: Obj, status: Obj) -> None:
        meta = _meta(ds)
        for attempt in range(2):
            old = ds.get("status") or {}
            if all((old.get(k) or 0) == (status.get(k) or 0) for k in STATUS_KEYS):
                return
            try:
                answer = await self.client.update(DAEMONSETS, {**ds, "status": copy.deepcopy(status)},
                                                  meta["namespace"], subresource="status")
                self.writes.wrote(cache.key_of(ds), DAEMONSETS, answer)
                return
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return
                if not errors.is_conflict(exc) or attempt:
                    raise
            ds = await self.client.get(DAEMONSETS, meta["name"], meta["namespace"])
            if _meta(ds).get("uid") != meta.get("uid"):
                return
            status = {**status, "observedGeneration": _meta(ds).get("generation") or 0}
            # Computed from a stale copy, the count could go back; it only ever grows.
            fresh_count = (ds.get("status") or {}).get("collisionCount")
            if fresh_count is not None:
                status["collisionCount"] = max(int(fresh_count), int(status.get("collisionCount") or 0))


def _placement_view(node: Obj) -> tuple[Any, ...]:
    spec = node.get("spec") or {}
    return (_meta(node).get("labels"), spec.get("taints"), spec.get("unschedulable"))

