"""Taint-based eviction: pods on a node with a NoExecute taint they do not tolerate are deleted.

Upstream's pkg/controller/tainteviction, keyed by pod `namespace/name`; a node's taint change
requeues the pods bound to it (an index on spec.nodeName). A pod's deadline: at once for a
NoExecute taint none of its tolerations match; otherwise the taint's timeAdded (else when we first
saw it) plus the smallest tolerationSeconds of the matching tolerations, never when none has
seconds. At the deadline the pod gets the DisruptionTarget condition (reason
DeletionByTaintManager) and is deleted with its uid as precondition, with the event
TaintManagerEviction "Marking for deletion Pod ns/x" ("Cancelling deletion ..." when the taint
goes first). The API server's DefaultTolerationSeconds gives every pod 300 s for the lifecycle
taints `node_lifecycle.py` sets.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Hashable
from typing import Any

from client import errors
from client.informer import Event
from client.resources import NODES, PODS
from client.rest import RestClient
from controllers import disruption_target, events, timestamps
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.tainteviction")
Obj = dict[str, Any]
COMPONENT = "taint-eviction-controller"
NODE_INDEX = "node"
CONDITION = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
             "message": "Taint manager: deleting due to NoExecute taint"}


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """v1 Toleration.ToleratesTaint: an empty effect matches every effect, an empty key with
    Exists every key; Equal (the default) compares values."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def no_execute_taints(node: Obj | None) -> list[Obj]:
    return [t for t in ((node or {}).get("spec") or {}).get("taints") or [] if t.get("effect") == "NoExecute"]


def _node_of(pod: Obj) -> list[str]:
    node = (pod.get("spec") or {}).get("nodeName")
    return [node] if node else []


def _eviction_inputs(pod: Obj | None) -> tuple[Any, ...]:
    spec = (pod or {}).get("spec") or {}
    return (spec.get("nodeName"), spec.get("tolerations"))


class TaintEvictionController:
    name = "taint-eviction"

    def __init__(self, client: RestClient) -> None:
        self.client = client
        self.pods = Watch(PODS, self._pod_keys, indexers={NODE_INDEX: _node_of})
        self.nodes = Watch(NODES, self._node_keys)
        self.watches = [self.pods, self.nodes]
        self._ctx: Any = None
        self._pending: set[str] = set()  # pods whose deletion is scheduled
        self._first_seen: dict[tuple[str, str, str, str], float] = {}

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    # -- events → keys -----------------------------------------------------------------------

    def _pod_keys(self, event: Event) -> list[Hashable]:
        if event.type == "DELETED":
            self._pending.discard(event.key)
            return []
        if not _node_of(event.obj):
            return []
        if event.old is not None and _eviction_inputs(event.old) == _eviction_inputs(event.obj):
            return []
        return [event.key]

    def _node_keys(self, event: Event) -> list[Hashable]:
        before = no_execute_taints(event.old if event.type == "MODIFIED" else None)
        after = [] if event.type == "DELETED" else no_execute_taints(event.obj)
        if event.type == "DELETED" or before == after:
            return []
        store = self._store(self.pods)
        if store is None:
            return []
        return [f"{_meta(p).get('namespace')}/{_meta(p).get('name')}"
                for p in store.by_index(NODE_INDEX, _meta(event.obj).get("name") or "")]

    # -- the deadline ------------------------------------------------------------------------

    def _added(self, node_name: str, taint: Obj) -> float:
        added = timestamps.parse(taint.get("timeAdded"))
        if added is not None:
            return added
        seen = (node_name, taint.get("key") or "", taint.get("value") or "", taint.get("effect") or "")
        return self._first_seen.setdefault(seen, time.time())

    def deadline(self, pod: Obj, node: Obj | None) -> float | None:
        """When the pod must go (epoch seconds), None when its node's taints let it stay."""
        taints = no_execute_taints(node)
        if not taints:
            return None
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        node_name = _meta(node).get("name") or ""
        when: float | None = None
        for taint in taints:
            matching = [t for t in tolerations if tolerates(t, taint)]
            if not matching:
                return time.time()  # not tolerated at all: now
            limited = [max(0, int(t["tolerationSeconds"])) for t in matching if t.get("tolerationSeconds") is not None]
            if not limited:
                continue  # tolerated for ever
            due = self._added(node_name, taint) + min(limited)
            when = due if when is None else min(when, due)
        return when

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        name = str(key)
        pods, nodes = self._store(self.pods), self._store(self.nodes)
        pod = pods.get(name) if pods is not None else None
        if pod is None or _meta(pod).get("deletionTimestamp") or not _node_of(pod):
            self._pending.discard(name)
            return None
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return None
        node = nodes.get(_node_of(pod)[0]) if nodes is not None else None
        when = self.deadline(pod, node)
        if when is None:
            if name in self._pending:
                self._pending.discard(name)
                await events.record(self.client, COMPONENT, pod, "Normal", "TaintManagerEviction",
                                    f"Cancelling deletion Pod {name}")
            return None
        delay = when - time.time()
        if delay > 0:
            self._pending.add(name)
            return Result(requeue_after=delay)
        await self._evict(pod)
        self._pending.discard(name)
        return None

    async def _evict(self, cached: Obj) -> bool:
        """Event, condition, then delete; False when the pod was gone, replaced or already going."""
        meta = _meta(cached)
        namespace, name, uid = meta.get("namespace"), meta.get("name") or "", meta.get("uid")
        try:
            pod = await self.client.get(PODS, name, namespace)
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return False
            raise
        if _meta(pod).get("uid") != uid or _meta(pod).get("deletionTimestamp"):
            return False
        await events.record(self.client, COMPONENT, pod, "Normal", "TaintManagerEviction",
                            f"Marking for deletion Pod {namespace}/{name}")
        if not await disruption_target.evict(self.client, pod, CONDITION):
            return False
        log.info("evicted pod %s/%s: its node has a NoExecute taint it does not tolerate", namespace, name)
        return True
