"""The node lifecycle controller: a node whose kubelet went quiet is marked Unknown and tainted.

Upstream's pkg/controller/nodelifecycle, keyed by node name. A node's last sign of life is the
time we last saw its Lease (kube-node-lease/<node>) renewed or its Ready heartbeat change; when
that is older than `grace` (upstream's --node-monitor-grace-period, 50 s since 1.32; a node that never
posted Ready gets `startup_grace`, --node-startup-grace-period, 60 s) its Ready,
MemoryPressure, DiskPressure and PIDPressure conditions become Unknown ("Kubelet stopped posting
node status."). Then the taints follow the Ready condition: Unknown → node.kubernetes.io/unreachable,
False → node.kubernetes.io/not-ready, both NoSchedule and NoExecute (with timeAdded); True → neither.
The kubelet's next status write (Ready True) lifts them. `taint_eviction.py` acts on NoExecute.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Hashable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from client import errors
from client.informer import Event
from client.resources import LEASES, NODES
from client.rest import RestClient
from controllers import stale_cache
from controllers.reconciling import Result, Watch, by_name

log = logging.getLogger("haru.controllers.nodelifecycle")
Obj = dict[str, Any]
LEASE_NAMESPACE = "kube-node-lease"
GRACE = 50.0
STARTUP_GRACE = 60.0
MONITOR_PERIOD = 5.0
UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"
WATCHED_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


def now_rfc3339() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(node: Obj, kind: str) -> Obj | None:
    return next((c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def wanted_taint_key(node: Obj) -> str | None:
    """Which lifecycle taint the Ready condition calls for (None: Ready, or no condition yet —
    a node that never posted one is tainted once the startup grace has made it Unknown)."""
    status = (condition(node, "Ready") or {}).get("status")
    if status in (None, "True"):
        return None
    return NOT_READY if status == "False" else UNREACHABLE


def lifecycle_taints(taints: list[Obj], wanted: str | None, now: str) -> list[Obj]:
    """`taints` with the two lifecycle keys replaced by what `wanted` says (kept when unchanged)."""
    others = [t for t in taints if t.get("key") not in (UNREACHABLE, NOT_READY)]
    if wanted is None:
        return others
    mine = []
    for effect in ("NoSchedule", "NoExecute"):
        existing = next((t for t in taints if t.get("key") == wanted and t.get("effect") == effect), None)
        taint = existing or {"key": wanted, "effect": effect}
        if effect == "NoExecute" and not taint.get("timeAdded"):
            taint = {**taint, "timeAdded": now}
        mine.append(taint)
    return others + mine


@dataclass
class Health:
    """What we last saw of a node's heartbeat, and when (our clock: probe_time)."""
    renew_time: str | None
    heartbeat: str | None
    probe_time: float


def _lease_key(event: Event) -> list[Hashable]:
    return [(event.obj.get("metadata") or {}).get("name")]


class NodeLifecycleController:
    name = "node-lifecycle"

    def __init__(self, client: RestClient, *, grace: float = GRACE, startup_grace: float = STARTUP_GRACE,
                 monitor_period: float = MONITOR_PERIOD) -> None:
        self.client = client
        self.grace = grace
        self.startup_grace = startup_grace
        self.monitor_period = monitor_period
        self.nodes = Watch(NODES, by_name)
        self.leases = Watch(LEASES, _lease_key, namespace=LEASE_NAMESPACE)
        self.watches = [self.nodes, self.leases]
        self.health: dict[str, Health] = {}
        self._ctx: Any = None
        self.writes = stale_cache.LastWrites()

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _cached(self, watch: Watch, key: str) -> Obj | None:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store.get(key) if informer is not None else None

    def _observe(self, name: str, node: Obj, lease: Obj | None) -> Health:
        """Refresh the probe time when the lease's renewTime or the Ready heartbeat moved."""
        renew = ((lease or {}).get("spec") or {}).get("renewTime")
        heartbeat = (condition(node, "Ready") or {}).get("lastHeartbeatTime")
        now = time.time()
        seen = self.health.get(name)
        if seen is None or seen.renew_time != renew or seen.heartbeat != heartbeat:
            seen = Health(renew, heartbeat, now)
            self.health[name] = seen
        return seen

    async def reconcile(self, key: Hashable) -> Result | None:
        name = str(key)
        node = self._cached(self.nodes, name)
        if node is None:
            self.health.pop(name, None)
            self.writes.forget(key)
            return None
        if not self.writes.caught_up(key, self._ctx, self.watches):
            # Acting on a copy without our Unknown conditions would write them (and their times) again.
            return Result(requeue_after=stale_cache.REQUEUE)
        health = self._observe(name, node, self._cached(self.leases, f"{LEASE_NAMESPACE}/{name}"))
        grace = self.grace if condition(node, "Ready") is not None else self.startup_grace
        left = health.probe_time + grace - time.time()
        if left <= 0:
            node = await self._mark_unknown(node, grace)
        await self._taint(node)
        return Result(requeue_after=max(left, 0.0) + 0.01 if left > 0 else self.monitor_period)

    async def _mark_unknown(self, node: Obj, grace: float) -> Obj:
        now = now_rfc3339()
        changed = []
        for kind in WATCHED_CONDITIONS:
            current = condition(node, kind)
            if current is None:
                changed.append({"type": kind, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                                "message": "Kubelet never posted node status.", "lastHeartbeatTime": now,
                                "lastTransitionTime": now})
            elif current.get("status") != "Unknown":
                changed.append({**current, "status": "Unknown", "reason": "NodeStatusUnknown",
                                "message": "Kubelet stopped posting node status.", "lastTransitionTime": now})
        if not changed:
            return node
        name = node["metadata"]["name"]
        log.info("node %s: no heartbeat for %.0fs, conditions set to Unknown", name, grace)
        patch = {"metadata": {"uid": node["metadata"].get("uid")}, "status": {"conditions": changed}}
        try:
            answer = await self.client.patch(NODES, name, patch, patch_type="strategic", subresource="status")
            return self.writes.wrote(name, NODES, answer)  # type: ignore[no-any-return]
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return node
            raise

    async def _taint(self, node: Obj) -> None:
        taints = list((node.get("spec") or {}).get("taints") or [])
        wanted = lifecycle_taints(taints, wanted_taint_key(node), now_rfc3339())
        if wanted == taints:
            return
        meta = node["metadata"]
        # The resourceVersion makes this a compare-and-swap: a taint someone else added meanwhile is not lost.
        patch = {"metadata": {"uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")},
                 "spec": {"taints": wanted or None}}
        try:
            self.writes.wrote(meta["name"], NODES, await self.client.patch(NODES, meta["name"], patch, patch_type="merge"))
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return
            raise  # a Conflict retries with the cache's next copy
