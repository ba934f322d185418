"""`Kubelet`: one hollow node — its Node, its Lease, its driver, and a worker per pod bound to it.

`start()`:
1. Register the Node (POST with status; if it exists, as after a restart, reconcile labels and
   write the status again).
2. Create or renew the Lease, start the DRA driver through `devices_seam`, and list and watch
   the pods with `spec.nodeName=<me>` (the host's shared `PodFeed`, else a field-selected informer).
3. Once that list is in: re-derive user-namespace blocks from the checkpoints of pods that still
   exist, resume the pods an earlier incarnation started (`PodWorker(recovered=True)`), and admit
   the rest in creation order.
Node status is written again only when it changes or every `report_interval` (the kubelet's
nodeStatusReportFrequency, 5 min); the Lease carries liveness every 10 s. Everything a kubelet runs
(lease, status reports, pod workers) lives in one asyncio task group. Hosted by `nodes.host`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from client import errors
from client.informer import Event, Informer
from client.resources import NODES, PODS
from client.rest import RestClient
from nodes import pools, userns
from nodes.kubelet import admission, checkpoint, crash_backoff, devices_seam, events, ipam, node_labels, node_object
from nodes.kubelet.lease import LeaseKeeper
from nodes.kubelet.pod_worker import PodWorker, Settings
from nodes.pod_feed import PodFeed
from nodes.runtime.records import ContainerRecord, Registry, rfc3339

log = logging.getLogger("haru.nodes.kubelet")
Obj = dict[str, Any]


@dataclass(frozen=True)
class NodeSettings:
    pods: Settings = Settings()
    report_interval: float = 300.0
    lease_duration: int = 40
    ids_per_pod: int = userns.UNIT


class Kubelet:
    def __init__(self, client: RestClient, shape: pools.NodeShape, *, registry: Registry, state_dir: str,
                 address: str = "127.0.0.1", port: int = 10250, settings: NodeSettings = NodeSettings(),
                 pods: PodFeed | None = None, host_client: RestClient | None = None) -> None:
        # `client` is the kubelet's own identity (system:node:<name> when the host was given one):
        # its Node, Lease, pod statuses, events and what its pods reference. `host_client` is the
        # nodes process's, for what is not a kubelet's to do: the DRA driver's cluster-wide claim
        # reads, PodGroup lookups, and the labels a kubelet may not set on its own Node.
        self.client = client
        self.host_client = host_client or client
        self.feed = pods  # the host's shared pod informer; None: this kubelet watches its own pods
        self.shape = shape
        self.name = shape.name
        self.registry = registry
        self.host_ip = address
        self.port = port
        self.node_settings = settings
        self.settings = settings.pods
        self.checkpoint = checkpoint.Checkpoint(state_dir, shape.name)
        self.userns = userns.Allocator(shape.userns_blocks, settings.ids_per_pod)
        self.ips = ipam.PodIPs(shape.pod_cidr)
        self.backoff = crash_backoff.CrashBackoff()
        self.node: Obj = {}
        self.driver: Any = None
        self.workers: dict[str, PodWorker] = {}
        self.finished: dict[str, Obj] = {}  # pods this node will not run (rejected, or done before we came)
        self.informer: Informer | None = None
        self.ready = asyncio.Event()
        self._node_dirty = asyncio.Event()
        self._group: asyncio.TaskGroup | None = None
        self._group_task: asyncio.Task[None] | None = None
        self._boot_id = self.checkpoint.boot_id()

    # -- start and stop ----------------------------------------------------------------------

    async def start(self) -> None:
        """Register, heartbeat once, list our pods; then the kubelet runs as one task group."""
        self.node = await self._register()
        lease = LeaseKeeper(self.client, self.name, self.node["metadata"]["uid"],
                            duration=self.node_settings.lease_duration)
        await lease.renew_once()
        self.driver = await devices_seam.start_driver(self.host_client, self.node, self.shape.devices)
        devices_seam.on_health_change(self.driver, self._devices_changed)
        if self.feed is None:
            self.informer = Informer.for_resource(self.client, PODS, None,
                                                  field_selector=f"spec.nodeName={self.name}")
            self.informer.start()
            await self.informer.wait_synced()
        self._group_task = asyncio.create_task(self._run(lease), name=f"kubelet {self.name}")
        ready = asyncio.create_task(self.ready.wait())
        await asyncio.wait({ready, self._group_task}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            self._group_task.result()  # the group ended before it was ready: say why

    async def _run(self, lease: LeaseKeeper) -> None:
        # One task group per kubelet: its lease, its status reports and its pod workers live and
        # end together; stopping the kubelet cancels the group.
        async with asyncio.TaskGroup() as group:
            self._group = group
            group.create_task(lease.run(), name=f"{self.name} lease")
            group.create_task(self._report_status(), name=f"{self.name} node status")
            if self.feed is not None:
                self._resume(self.feed.pods_on(self.name))
                self.feed.subscribe(self.name, self._on_event)  # no await since pods_on: no event is missed
            else:
                assert self.informer is not None
                self._resume(self.informer.store.list())
                self.informer.add_handler(self._on_event)
            self.ready.set()

    async def stop(self) -> None:
        if self.feed is not None:
            self.feed.unsubscribe(self.name)
        if self.informer is not None:
            await self.informer.stop()
        if self._group_task is not None:
            self._group_task.cancel()
            await asyncio.gather(self._group_task, return_exceptions=True)
        await asyncio.gather(*(w.stop() for w in self.workers.values()), return_exceptions=True)
        if self.driver is not None:
            await devices_seam.stop_driver(self.driver)

    def _devices_changed(self) -> None:
        for worker in list(self.workers.values()):
            worker.update(worker.pod)  # renders allocatedResourcesStatus again

    def _spawn(self, coro: Any, what: str) -> None:
        if self._group is None:
            raise RuntimeError(f"kubelet {self.name} is not running")
        self._group.create_task(_logged(coro, f"{self.name} {what}"), name=f"{self.name} {what}")

    def _start_worker(self, worker: PodWorker) -> None:
        self.workers[worker.uid] = worker
        self._spawn(worker.run(), f"pod {worker.key}")

    # -- the Node ----------------------------------------------------------------------------

    async def _register(self) -> Obj:
        now = datetime.now(timezone.utc)
        desired = node_object.registration(self.shape, address=self.host_ip, port=self.port, boot_id=self._boot_id,
                                           now=now)
        labels = desired["metadata"]["labels"]
        # NodeRestriction refuses a kubelet labels it may not set (topology.kubernetes.io/rack...):
        # with its own identity it registers without them and the host sets them, as a cloud
        # provider labels its machines.
        own, other = (node_labels.split(labels) if self.host_client is not self.client else (labels, {}))
        desired["metadata"]["labels"] = own
        try:
            created = await self.client.create(NODES, desired)
        except errors.APIError as exc:
            if not errors.is_already_exists(exc):
                raise
        else:
            if other:
                created = await self.host_client.patch(NODES, self.name, {"metadata": {"labels": other}})
            return created
        existing = await self.client.get(NODES, self.name)
        # Registered before (a restart): keep what others set, put back our labels, report again.
        patch = {"metadata": {"labels": own}}
        if not (existing.get("spec") or {}).get("podCIDR"):
            patch["spec"] = {"podCIDR": self.shape.pod_cidr, "podCIDRs": [self.shape.pod_cidr]}
        await self.client.patch(NODES, self.name, patch)
        if other:
            await self.host_client.patch(NODES, self.name, {"metadata": {"labels": other}})
        since = {c["type"]: c.get("lastTransitionTime") for c in (existing.get("status") or {}).get("conditions") or []
                 if c.get("type") and c.get("status") == ("True" if c["type"] == "Ready" else "False")}
        status = node_object.status(self.shape, address=self.host_ip, port=self.port, boot_id=self._boot_id, now=now,
                                    since=since)
        return await self.client.patch(NODES, self.name, {"status": status}, patch_type="merge", subresource="status")

    def request_status_update(self) -> None:
        self._node_dirty.set()

    async def _report_status(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._node_dirty.wait(), self.node_settings.report_interval)
            except asyncio.TimeoutError:
                pass
            self._node_dirty.clear()
            since = {c["type"]: c["lastTransitionTime"] for c in (self.node.get("status") or {}).get("conditions") or []}
            conditions = node_object.conditions(datetime.now(timezone.utc), since)
            try:
                self.node = await self.client.patch(NODES, self.name, {"status": {"conditions": conditions}},
                                                    patch_type="strategic", subresource="status")
            except Exception as exc:  # noqa: BLE001 - try again at the next interval
                log.warning("node %s: status update failed: %s", self.name, exc)
                await asyncio.sleep(1.0)
                self._node_dirty.set()

    # -- pods --------------------------------------------------------------------------------

    def _resume(self, pods: list[Obj]) -> None:
        present = {p["metadata"]["uid"] for p in pods}
        for uid, mapping in self.checkpoint.userns().items():
            if uid not in present:
                self.checkpoint.remove(uid)  # an orphan: its pod went while we were away
                continue
            entry = (mapping.get("uidMappings") or [{}])[0]
            try:
                self.userns.restore(uid, int(entry["hostId"]), int(entry["length"]))
            except (KeyError, ValueError) as exc:
                log.warning("node %s: pod %s: ignoring its user namespace record: %s", self.name, uid, exc)
        fresh = []
        for pod in pods:
            status = pod.get("status") or {}
            if status.get("phase") in ("Succeeded", "Failed"):
                self.finished[pod["metadata"]["uid"]] = pod
            elif status.get("startTime"):
                self._start_worker(PodWorker(self, pod, recovered=True))
            else:
                fresh.append(pod)
        fresh.sort(key=lambda p: (p["metadata"].get("creationTimestamp") or "", p["metadata"]["name"]))
        for pod in fresh:
            self._admit(pod)

    def _on_event(self, event: Event) -> None:
        pod = event.obj
        uid = (pod.get("metadata") or {}).get("uid")
        if not uid:
            return
        if event.type == "DELETED":
            worker = self.workers.pop(uid, None)
            if worker is not None:
                worker.gone()
            self.finished.pop(uid, None)
            self.userns.release(uid)
            self.checkpoint.remove(uid)
            return
        if event.old is not None and (event.old.get("metadata") or {}).get("uid") not in (None, uid):
            self._on_event(Event("DELETED", event.old))  # deleted and recreated under the same name
        worker = self.workers.get(uid)
        if worker is not None:
            worker.update(pod)
        elif uid not in self.finished:
            self._admit(pod)

    def _admit(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        running = [w.pod for w in self.workers.values() if not w.done]
        rejection = admission.admit(pod, self.node, running)
        if rejection is None:
            self._start_worker(PodWorker(self, pod))
            return
        self.finished[uid] = pod
        if rejection.reason == "NodeAffinity":
            # Our copy of the Node may predate a new label: upstream fetches it again and re-checks.
            self._spawn(self._admit_with_fresh_node(pod), f"admit {pod['metadata']['name']}")
        else:
            self._spawn(self._reject(pod, rejection), f"reject {pod['metadata']['name']}")

    async def _admit_with_fresh_node(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        try:
            self.node = await self.client.get(NODES, self.name)
        except errors.APIError as exc:
            log.warning("node %s: could not read its Node again: %s", self.name, exc)
        if self.finished.get(uid) is not pod:
            return  # deleted meanwhile
        current = self.informer.store.get(f"{pod['metadata'].get('namespace')}/{pod['metadata']['name']}") \
            if self.informer else None
        latest = current if current is not None and current["metadata"].get("uid") == uid else pod
        running = [w.pod for w in self.workers.values() if not w.done]
        rejection = admission.admit(latest, self.node, running)
        if rejection is None:
            del self.finished[uid]
            self._start_worker(PodWorker(self, latest))
        else:
            await self._reject(latest, rejection)

    async def _reject(self, pod: Obj, rejection: admission.Rejection) -> None:
        meta = pod["metadata"]
        message = "Pod was rejected: " + rejection.message
        await events.record(self.client, self.name, pod, "Warning", rejection.reason, rejection.message)
        status = {"phase": "Failed", "reason": rejection.reason, "message": message,
                  "startTime": (pod.get("status") or {}).get("startTime") or rfc3339(datetime.now(timezone.utc))}
        qos = (pod.get("status") or {}).get("qosClass")
        if qos:
            status["qosClass"] = qos
        try:
            await self.client.patch(PODS, meta["name"], {"metadata": {"uid": meta["uid"]}, "status": status},
                                    meta.get("namespace"), patch_type="strategic", subresource="status")
        except errors.APIError as exc:
            if not errors.is_not_found(exc):
                log.warning("pod %s/%s: could not write its rejection: %s", meta.get("namespace"), meta["name"], exc)

    def backoff_forget(self, uid: str, containers: dict[str, ContainerRecord]) -> None:
        for name in containers:
            self.backoff.forget(f"{uid}/{name}")


async def _logged(coro: Any, what: str) -> None:
    """A task of the group that fails is logged, not allowed to take the whole kubelet down."""
    try:
        await coro
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - one pod's trouble is not the node's
        log.exception("%s failed", what)
