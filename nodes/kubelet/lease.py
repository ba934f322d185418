"""A kubelet's heartbeat: its Lease `kube-node-lease/<node>`, renewed every 10 s.

As upstream's node lease controller: leaseDurationSeconds 40, renew at a quarter of it, holder
the node name, an ownerReference to the Node (so the Lease goes with it). The first pass GETs the
Lease or creates it; later passes PUT the last copy with a new renewTime (a Conflict re-reads it).
A failed renewal retries after 200 ms, doubling to 7 s, as the kubelet's retry does. Started by
`kubelet.Kubelet.run`; `renew_once()` is one pass, for tests.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone
from typing import Any

from client import errors
from client.resources import LEASES
from client.rest import RestClient

log = logging.getLogger("haru.nodes.lease")
NAMESPACE = "kube-node-lease"
DURATION = 40


def micro_time(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaseKeeper:
    def __init__(self, client: RestClient, node_name: str, node_uid: str, *, duration: int = DURATION,
                 interval: float | None = None) -> None:
        self.client = client
        self.node_name = node_name
        self.node_uid = node_uid
        self.duration = duration
        self.interval = interval if interval is not None else duration / 4
        self.lease: dict[str, Any] | None = None
        self.renewals = 0

    def _desired(self, now: datetime) -> dict[str, Any]:
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.node_name,
                "namespace": NAMESPACE,
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": self.node_name, "uid": self.node_uid}],
            },
            "spec": {"holderIdentity": self.node_name, "leaseDurationSeconds": self.duration,
                     "renewTime": micro_time(now)},
        }

    async def renew_once(self) -> dict[str, Any]:
        now = datetime.now(timezone.utc)
        if self.lease is None:
            try:
                self.lease = await self.client.get(LEASES, self.node_name, NAMESPACE)
            except errors.APIError as exc:
                if not errors.is_not_found(exc):
                    raise
                self.lease = await self.client.create(LEASES, self._desired(now), NAMESPACE)
                self.renewals += 1
                return self.lease
        lease = dict(self.lease)
        lease["spec"] = {**(lease.get("spec") or {}), "holderIdentity": self.node_name,
                         "leaseDurationSeconds": self.duration, "renewTime": micro_time(now)}
        meta = dict(lease.get("metadata") or {})
        if not any(ref.get("uid") == self.node_uid for ref in meta.get("ownerReferences") or []):
            meta["ownerReferences"] = self._desired(now)["metadata"]["ownerReferences"]
        lease["metadata"] = meta
        try:
            self.lease = await self.client.update(LEASES, lease, NAMESPACE)
        except errors.APIError as exc:
            self.lease = None  # re-read on the next pass: someone else wrote it, or it is gone
            if errors.is_conflict(exc) or errors.is_not_found(exc):
                return await self.renew_once()
            raise
        self.renewals += 1
        return self.lease

    async def run(self) -> None:
        delay = 0.2
        while True:
            try:
                await self.renew_once()
                delay = 0.2
                await asyncio.sleep(self.interval)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a heartbeat never gives up
                log.warning("node %s: failed to renew lease: %s; retrying in %.1fs", self.node_name, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 7.0)
