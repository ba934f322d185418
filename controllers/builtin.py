"""The built-in controllers and one call that runs them: `run(client, stop)`.

`controllers(client)` builds the list (namespace lifecycle, garbage collector, service accounts,
the ResourceClaim controller, device-taint eviction, ReplicaSet, Deployment, Job,
TTL-after-finished, CronJob, StatefulSet, DaemonSet, the PersistentVolume binder, node lifecycle,
taint eviction, PodGC, the kube-root-ca.crt publisher, disruption, EndpointSlice, Endpoints,
ReplicationController, HorizontalPodAutoscaler),
each with its keyword settings from `settings[name]` (tests shorten the rechecks) and, for the
gated ones, the `features` (`features.py`); `start` runs a
`manager.Manager` over them; `run` also waits for `stop` and shuts down. With
`service_account_credentials` (kube-controller-manager's --use-service-account-credentials) each
controller writes as its own ServiceAccount, `ACCOUNTS[name]` (`client_builder.py`), while the
shared informers read with the given client; without, every controller uses that client. Called by
`python -m controllers` (`__main__.py`) and by `cluster/supervisor.py` when embedded in `haru up`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from client.rest import RestClient
from controllers import client_builder, features as feature_gates
from controllers.cron_job import CronJobController
from controllers.daemon_set import DaemonSetController
from controllers.deployment import DeploymentController
from controllers.device_taint_eviction import DeviceTaintEvictionController
from controllers.disruption import DisruptionController
from controllers.endpoint_slice import EndpointSliceController
from controllers.endpoints import EndpointsController
from controllers.garbage_collector import GarbageCollector
from controllers.horizontal_pod_autoscaler import HorizontalPodAutoscalerController
from controllers.job import JobController
from controllers.job_ttl import TTLAfterFinishedController
from controllers.manager import Manager
from controllers.namespace import NamespaceController
from controllers.node_lifecycle import NodeLifecycleController
from controllers.reconciling import Controller
from controllers.pod_gc import PodGCController
from controllers.replica_set import ReplicaSetController
from controllers.cluster_role_aggregation import ClusterRoleAggregationController
from controllers.root_ca_publisher import RootCAPublisher
from controllers.replication_controller import ReplicationControllerController
from controllers.resource_claims import ResourceClaimController
from controllers.service_accounts import ServiceAccountsController
from controllers.stateful_set import StatefulSetController
from controllers.taint_eviction import TaintEvictionController
from controllers.volume_binder import VolumeBinder

# Every built-in controller by the name `--controllers` and `settings` use, in start order.
CONTROLLERS: dict[str, Callable[..., Controller]] = {
    "namespace": NamespaceController,
    "garbage-collector": GarbageCollector,
    "serviceaccount": ServiceAccountsController,
    "resource-claim": ResourceClaimController,
    "device-taint-eviction": DeviceTaintEvictionController,
    "replicaset": ReplicaSetController,
    "deployment": DeploymentController,
    "job": JobController,
    "ttl-after-finished": TTLAfterFinishedController,
    "cronjob": CronJobController,
    "statefulset": StatefulSetController,
    "daemonset": DaemonSetController,
    "persistentvolume-binder": VolumeBinder,
    "node-lifecycle": NodeLifecycleController,
    "taint-eviction": TaintEvictionController,
    "pod-garbage-collector": PodGCController,
    "root-ca-certificate-publisher": RootCAPublisher,
    "clusterrole-aggregation": ClusterRoleAggregationController,
    "disruption": DisruptionController,
    "endpointslice": EndpointSliceController,
    "endpoint": EndpointsController,
    "replicationcontroller": ReplicationControllerController,
    "horizontal-pod-autoscaler": HorizontalPodAutoscalerController,
}
NAMES = tuple(CONTROLLERS)
# The ServiceAccount (kube-system/<name>) each controller acts as, the name kube-controller-manager's
# client builder asks for and its bootstrap role system:controller:<name> is bound to. Upstream's
# taint-eviction controller uses the node controller's, as its node-lifecycle controller does.
ACCOUNTS = {
    "namespace": "namespace-controller",
    "garbage-collector": "generic-garbage-collector",
    "serviceaccount": "service-account-controller",
    "resource-claim": "resource-claim-controller",
    "device-taint-eviction": "device-taint-eviction-controller",
    "replicaset": "replicaset-controller",
    "deployment": "deployment-controller",
    "job": "job-controller",
    "ttl-after-finished": "ttl-after-finished-controller",
    "cronjob": "cronjob-controller",
    "statefulset": "statefulset-controller",
    "daemonset": "daemon-set-controller",
    "persistentvolume-binder": "persistent-volume-binder",
    "node-lifecycle": "node-controller",
    "taint-eviction": "node-controller",
    "pod-garbage-collector": "pod-garbage-collector",
    "root-ca-certificate-publisher": "root-ca-cert-publisher",
    "clusterrole-aggregation": "clusterrole-aggregation-controller",
    "disruption": "disruption-controller",
    "endpointslice": "endpointslice-controller",
    "endpoint": "endpoint-controller",
    "replicationcontroller": "replication-controller",
    "horizontal-pod-autoscaler": "horizontal-pod-autoscaler",
}


def select(flag: str) -> tuple[str, ...]:
    """The controllers kube-controller-manager's `--controllers` value names, in start order.

    Its syntax: a comma-separated list where `*` means every default controller, `name` turns one
    on and `-name` turns one off (`*,-deployment`: all but the Deployment controller). A name
    may carry kube-controller-manager's `-controller` suffix (`deployment-controller`). An
    unknown name is refused with ValueError, as kube-controller-manager refuses it.
    """
    on: set[str] = set()
    off: set[str] = set()
    everything = False
    for item in (part.strip() for part in flag.split(",")):
        if not item:
            continue
        if item == "*":
            everything = True
            continue
        name = item[1:] if item.startswith("-") else item
        if name not in CONTROLLERS and name.endswith("-controller") and name[: -len("-controller")] in CONTROLLERS:
            name = name[: -len("-controller")]
        if name not in CONTROLLERS:
            raise ValueError(f'"{name}" is not in the list of known controllers')
        (off if item.startswith("-") else on).add(name)
    return tuple(n for n in NAMES if n not in off and (everything or n in on))
# The controllers whose behaviour depends on feature gates; they get `features=`.
GATED = frozenset({"job", "resource-claim"})
Settings = dict[str, dict[str, Any]]
# Concurrent reconciles, kube-controller-manager's defaults (--concurrent-gc-syncs=20,
# --concurrent-namespace-syncs=10, --concurrent-replicaset-syncs=5, ...); the others get DEFAULT_WORKERS.
WORKERS = {"garbage-collector": 20, "namespace": 10, "replicaset": 5, "deployment": 5, "job": 5,
           "ttl-after-finished": 5, "cronjob": 5, "statefulset": 5, "daemonset": 2, "replicationcontroller": 5,
           "endpointslice": 5, "endpoint": 5, "horizontal-pod-autoscaler": 5, "resource-claim": 10}
DEFAULT_WORKERS = 2


def controllers(client: RestClient, only: tuple[str, ...] = NAMES, settings: Settings | None = None,
                features: feature_gates.Features | None = None,
                client_for: Callable[[str], RestClient] | None = None) -> list[Controller]:
    """`client_for(name)`: the client controller `name` acts with (default: `client` for all)."""
    settings = settings or {}
    gates = dict(feature_gates.defaults() if features is None else features)
    # A test's settings may name `features` for one controller; they win over the shared gates.
    return [factory(client_for(name) if client_for else client,
                    **{**({"features": gates} if name in GATED else {}), **settings.get(name, {})})
            for name, factory in CONTROLLERS.items() if name in only]


async def start(client: RestClient, only: tuple[str, ...] = NAMES, *, workers: int | None = None,
                settings: Settings | None = None, features: feature_gates.Features | None = None,
                service_account_credentials: bool = False, prefetch_tokens: bool = True) -> Manager:
    """`workers` given: that many for every controller; else upstream's numbers (`WORKERS`).

    `prefetch_tokens`: every account and token is made once the caches filled, as
    kube-controller-manager makes them at start; off, each controller's on its first request
    (a test cluster's start-up then pays only for the few controllers that act at once).
    """
    accounts = client_builder.ServiceAccountClients(client) if service_account_credentials else None
    client_for = (lambda name: accounts.client(ACCOUNTS[name])) if accounts is not None else None
    manager = Manager(client, controllers(client, only, settings, features, client_for),
                      workers=workers or DEFAULT_WORKERS, workers_for=WORKERS if workers is None else None,
                      closing=[accounts.close] if accounts is not None else [])
    try:
        await manager.start()
    except BaseException:
        await manager.stop()
        raise
    if accounts is not None and prefetch_tokens:
        # After the caches filled, so the tokens do not compete with the initial lists; any
        # controller that writes before then fetches its own token first.
        accounts.prefetch()
    return manager


async def run(client: RestClient, stop: asyncio.Event, only: tuple[str, ...] = NAMES, *, workers: int | None = None,
              settings: Settings | None = None, features: feature_gates.Features | None = None,
              service_account_credentials: bool = False) -> None:
    manager = await start(client, only, workers=workers, settings=settings, features=features,
                          service_account_credentials=service_account_credentials)
    try:
        await stop.wait()
    finally:
        await manager.stop()
