"""PodGC: force-deletes the pods nothing else will clean up, every `period` (upstream: 20 s).

Upstream's pkg/controller/podgc, one sweep over the pod and node caches (a background loop; no
keys). In order: terminated pods (Succeeded/Failed) beyond `threshold` (12,500, 0 = off), the
evicted first and then the oldest; terminating pods on a not-ready node with the
node.kubernetes.io/out-of-service taint; pods bound to a node that has been missing from the cache
for `quarantine` (40 s) and that a GET confirms gone (with DisruptionTarget DeletionByPodGC
"PodGC: node no longer exists"); terminating pods no node was ever assigned. A pod not yet
terminal is first patched to phase Failed (no kubelet will do it), then deleted with grace 0.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Hashable
from datetime import datetime, timezone
from typing import Any

from client import errors
from client.informer import Event
from client.resources import NODES, PODS
from client.rest import RestClient
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.podgc")
Obj = dict[str, Any]
PERIOD = 20.0
QUARANTINE = 40.0
THRESHOLD = 12_500
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
ORPHANED = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
            "message": "PodGC: node no longer exists"}
_CONCURRENT = 32


def _no_keys(event: Event) -> list[Hashable]:
    return []  # the sweep reads the caches; events need not wake it


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def terminated(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Pending", "Running", "Unknown", None, "")


def _evicted(pod: Obj) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Failed" and status.get("reason") == "Evicted"


def oldest_first(pods: list[Obj]) -> list[Obj]:
    """Evicted pods first, then by creationTimestamp, names breaking ties (byEvictionAndCreationTimestamp)."""
    return sorted(pods, key=lambda p: (not _evicted(p), _meta(p).get("creationTimestamp") or "", _meta(p).get("name") or ""))


def _ready(node: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


class PodGCController:
    name = "pod-garbage-collector"

    def __init__(self, client: RestClient, *, period: float = PERIOD, quarantine: float = QUARANTINE,
                 threshold: int = THRESHOLD) -> None:
        self.client = client
        self.period = period
        self.quarantine = quarantine
        self.threshold = threshold
        self.pods = Watch(PODS, _no_keys)
        self.nodes = Watch(NODES, _no_keys)
        self.watches = [self.pods, self.nodes]
        self.missing_since: dict[str, float] = {}  # node name → when the cache first lacked it
        self._ctx: Any = None

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    async def reconcile(self, key: Hashable) -> Result | None:
        return None

    async def run(self, ctx: Any) -> None:
        self._ctx = ctx
        while True:
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the next sweep tries again
                log.warning("pod GC sweep failed: %s", exc)
            await asyncio.sleep(self.period)

    def _items(self, watch: Watch) -> list[Obj]:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store.list() if informer is not None else []

    async def sweep(self) -> None:
        pods, nodes = self._items(self.pods), {_meta(n).get("name"): n for n in self._items(self.nodes)}
        if self.threshold > 0:
            done = [p for p in pods if terminated(p)]
            await self._delete_all(oldest_first(done)[:max(0, len(done) - self.threshold)])
        await self._delete_all([p for p in pods if _meta(p).get("deletionTimestamp") and self._out_of_service(nodes, p)])
        gone = await self._deleted_nodes(pods, nodes)
        await self._delete_all([p for p in pods if (p.get("spec") or {}).get("nodeName") in gone], ORPHANED)
        await self._delete_all([p for p in pods
                                if _meta(p).get("deletionTimestamp") and not (p.get("spec") or {}).get("nodeName")])

    @staticmethod
    def _out_of_service(nodes: dict[str, Obj], pod: Obj) -> bool:
        node = nodes.get((pod.get("spec") or {}).get("nodeName"))
        return node is not None and not _ready(node) and \
            any(t.get("key") == OUT_OF_SERVICE for t in (node.get("spec") or {}).get("taints") or [])

    async def _deleted_nodes(self, pods: list[Obj], nodes: dict[str, Obj]) -> set[str]:
        """Nodes pods are bound to that the cache has lacked for the quarantine and a GET cannot find."""
        now = time.time()
        wanted = {(p.get("spec") or {}).get("nodeName") for p in pods} - {None, ""} - set(nodes)
        for name in list(self.missing_since):
            if name not in wanted:
                del self.missing_since[name]
        gone: set[str] = set()
        for name in wanted:
            since = self.missing_since.setdefault(name, now)
            if now - since < self.quarantine:
                continue
            try:
                await self.client.get(NODES, name)
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    gone.add(name)
                else:
                    log.warning("pod GC: cannot tell whether node %s exists: %s", name, exc)
        return gone

    async def _delete_all(self, pods: list[Obj], condition: Obj | None = None) -> None:
        for start in range(0, len(pods), _CONCURRENT):
            await asyncio.gather(*(self._force_delete(p, condition) for p in pods[start:start + _CONCURRENT]))

    async def _force_delete(self, pod: Obj, condition: Obj | None) -> None:
        meta = _meta(pod)
        namespace, name, uid = meta.get("namespace"), meta.get("name") or "", meta.get("uid")
        try:
            if not terminated(pod):
                status: Obj = {"phase": "Failed"}
                if condition is not None:
                    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                    status["conditions"] = [{**condition, "lastTransitionTime": now}]
                await self.client.patch(PODS, name, {"metadata": {"uid": uid}, "status": status}, namespace,
                                        patch_type="strategic", subresource="status")
            await self.client.delete(PODS, name, namespace, uid=uid, grace_period_seconds=0)
            log.info("pod GC force-deleted pod %s/%s", namespace, name)
        except errors.APIError as exc:
            if not (errors.is_not_found(exc) or exc.code == 409):
                log.warning("pod GC could not delete pod %s/%s: %s", namespace, name, exc)
