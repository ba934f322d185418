"""The built-in controllers and one call that runs them: `run(client, stop)`.

`controllers(client)` builds the list (namespace lifecycle, garbage collector, service accounts,
the ResourceClaim controller, device-taint eviction, ReplicaSet, Deployment, Job,
TTL-after-finished, CronJob, StatefulSet, DaemonSet, the PersistentVolume binder, node lifecycle,
taint eviction, PodGC, the kube-root-ca.crt publisher),
each with its keyword settings from `settings[name]` (tests shorten the rechecks); `start` runs a
`manager.Manager` over them; `run` also waits for `stop` and shuts down. Called by
`python -m controllers` (`__main__.py`) and by `cluster/supervisor.py` when embedded in `haru up`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from client.rest import RestClient
from controllers.cron_job import CronJobController
from controllers.daemon_set import DaemonSetController
from controllers.deployment import DeploymentController
from controllers.device_taint_eviction import DeviceTaintEvictionController
from controllers.garbage_collector import GarbageCollector
from controllers.job import JobController
from controllers.job_ttl import TTLAfterFinishedController
from controllers.manager import Manager
from controllers.namespace import NamespaceController
from controllers.node_lifecycle import NodeLifecycleController
from controllers.reconciling import Controller
from controllers.pod_gc import PodGCController
from controllers.replica_set import ReplicaSetController
from controllers.root_ca_publisher import RootCAPublisher
from controllers.resource_claims import ResourceClaimController
from controllers.service_accounts import ServiceAccountsController
from controllers.stateful_set import StatefulSetController
from controllers.taint_eviction import TaintEvictionController
from controllers.volume_binder import VolumeBinder

NAMES = ("namespace", "garbage-collector", "serviceaccount", "resource-claim", "device-taint-eviction", "replicaset",
         "deployment", "job", "ttl-after-finished", "cronjob", "statefulset", "daemonset", "persistentvolume-binder",
         "node-lifecycle", "taint-eviction", "pod-garbage-collector", "root-ca-certificate-publisher")
Settings = dict[str, dict[str, Any]]
# Concurrent reconciles, kube-controller-manager's defaults (--concurrent-gc-syncs=20,
# --concurrent-namespace-syncs=10, --concurrent-replicaset-syncs=5, ...); the others get DEFAULT_WORKERS.
WORKERS = {"garbage-collector": 20, "namespace": 10, "replicaset": 5, "deployment": 5, "job": 5,
           "ttl-after-finished": 5, "cronjob": 5, "statefulset": 5, "daemonset": 2}
DEFAULT_WORKERS = 2


def controllers(client: RestClient, only: tuple[str, ...] = NAMES, settings: Settings | None = None) -> list[Controller]:
    settings = settings or {}
    built: list[Controller] = []
    if "namespace" in only:
        built.append(NamespaceController(client, **settings.get("namespace", {})))
    if "garbage-collector" in only:
        built.append(GarbageCollector(client, **settings.get("garbage-collector", {})))
    if "serviceaccount" in only:
        built.append(ServiceAccountsController(client, **settings.get("serviceaccount", {})))
    if "resource-claim" in only:
        built.append(ResourceClaimController(client, **settings.get("resource-claim", {})))
    if "device-taint-eviction" in only:
        built.append(DeviceTaintEvictionController(client, **settings.get("device-taint-eviction", {})))
    if "replicaset" in only:
        built.append(ReplicaSetController(client, **settings.get("replicaset", {})))
    if "deployment" in only:
        built.append(DeploymentController(client, **settings.get("deployment", {})))
    if "job" in only:
        built.append(JobController(client, **settings.get("job", {})))
    if "ttl-after-finished" in only:
        built.append(TTLAfterFinishedController(client, **settings.get("ttl-after-finished", {})))
    if "cronjob" in only:
        built.append(CronJobController(client, **settings.get("cronjob", {})))
    if "statefulset" in only:
        built.append(StatefulSetController(client, **settings.get("statefulset", {})))
    if "daemonset" in only:
        built.append(DaemonSetController(client, **settings.get("daemonset", {})))
    if "persistentvolume-binder" in only:
        built.append(VolumeBinder(client, **settings.get("persistentvolume-binder", {})))
    if "node-lifecycle" in only:
        built.append(NodeLifecycleController(client, **settings.get("node-lifecycle", {})))
    if "taint-eviction" in only:
        built.append(TaintEvictionController(client, **settings.get("taint-eviction", {})))
    if "pod-garbage-collector" in only:
        built.append(PodGCController(client, **settings.get("pod-garbage-collector", {})))
    if "root-ca-certificate-publisher" in only:
        built.append(RootCAPublisher(client, **settings.get("root-ca-certificate-publisher", {})))
    return built


async def start(client: RestClient, only: tuple[str, ...] = NAMES, *, workers: int | None = None,
                settings: Settings | None = None) -> Manager:
    """`workers` given: that many for every controller; else upstream's numbers (`WORKERS`)."""
    manager = Manager(client, controllers(client, only, settings), workers=workers or DEFAULT_WORKERS,
                      workers_for=WORKERS if workers is None else None)
    try:
        await manager.start()
    except BaseException:
        await manager.stop()
        raise
    return manager


async def run(client: RestClient, stop: asyncio.Event, only: tuple[str, ...] = NAMES, *, workers: int | None = None,
              settings: Settings | None = None) -> None:
    manager = await start(client, only, workers=workers, settings=settings)
    try:
        await stop.wait()
    finally:
        await manager.stop()
