"""KEP-5647's stale-cache check (`controllers/stale_cache.py`), per controller family.

Each test drives one controller's `reconcile` by hand against a real API server, with informers
the test holds: synced, then stopped before the first reconcile, so they stay behind the
controller's own first write. The
second reconcile must then skip (requeue, write nothing); once the informers catch up it acts.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from typing import Any

import pytest

from client.informer import Informer
from client.resources import (CRONJOBS, DAEMONSETS, ENDPOINTS, JOBS, NODES, PODDISRUPTIONBUDGETS, PODS, SERVICES,
                              STATEFULSETS, Resource)
from client.rest import RestClient
from controllers import stale_cache
from controllers.cron_job import CronJobController
from controllers.daemon_set import DaemonSetController
from controllers.disruption import DisruptionController
from controllers.endpoints import EndpointsController
from controllers.horizontal_pod_autoscaler import HPAS, HorizontalPodAutoscalerController
from controllers.node_lifecycle import NodeLifecycleController
from controllers.reconciling import Result, Watch
from controllers.stateful_set import StatefulSetController
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ()  # nothing runs on its own: each test is the only writer
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"
SKIPPED = Result(requeue_after=stale_cache.REQUEUE)


class HeldInformers:
    """A controller context whose informers the test can stop (hold behind) and restart."""

    def __init__(self, client: RestClient, watches: Sequence[Watch]) -> None:
        self.client = client
        self.watches = list(watches)
        self.informers: dict[Any, Informer] = {}

    def informer(self, watch: Watch) -> Informer | None:
        return self.informers.get(watch.collection)

    async def sync(self) -> None:
        for watch in self.watches:
            informer = self.informers.get(watch.collection)
            if informer is None:
                informer = Informer.for_resource(self.client, watch.resource, watch.namespace,
                                                 label_selector=watch.label_selector,
                                                 field_selector=watch.field_selector)
                self.informers[watch.collection] = informer
            for name, func in watch.indexers.items():
                informer.store.add_indexer(name, func)
            informer.start()
        for informer in self.informers.values():
            await informer.wait_synced(10)

    async def hold(self) -> None:
        for informer in self.informers.values():
            await informer.stop()

    async def catch_up(self, resource: Resource, namespace: str | None) -> None:
        """Restart the informers and wait until the one on `resource` shows the server's newest write."""
        newest = int((await self.client.list(resource, namespace, limit=1))["metadata"]["resourceVersion"])
        for informer in self.informers.values():
            informer.start()

        async def shown() -> bool:
            return all(int(i.last_sync_resource_version or 0) >= newest
                       for i in self.informers.values() if i.resource == resource)

        await eventually(shown, timeout=10)

    async def stop(self) -> None:
        await self.hold()


async def _rv(client: RestClient, resource: Resource, name: str, namespace: str | None = NS) -> str:
    return str((await client.get(resource, name, namespace))["metadata"]["resourceVersion"])


async def _count(client: RestClient, resource: Resource, namespace: str = NS, **selector: str) -> int:
    items = (await client.list(resource, namespace, **selector)).get("items") or []
    return len(items)


async def _started(cluster: Cluster, controller: Any) -> HeldInformers:
    ctx = HeldInformers(cluster.client, controller.watches)
    await controller.prepare(ctx)
    await ctx.sync()
    await ctx.hold()  # from here on the caches miss whatever the controller writes
    return ctx


async def _skip_then_act(ctx: HeldInformers, controller: Any, key: Hashable, resource: Resource, name: str,
                         namespace: str | None = NS) -> None:
    """Held behind the first write, the second reconcile writes nothing; caught up, it runs."""
    before = await _rv(ctx.client, resource, name, namespace)
    assert await controller.reconcile(key) == SKIPPED
    assert await _rv(ctx.client, resource, name, namespace) == before
    await ctx.catch_up(resource, namespace)
    assert await controller.reconcile(key) != SKIPPED


# -- the mechanism -----------------------------------------------------------------------------


class _FakeInformer:
    def __init__(self, version: str) -> None:
        self.last_sync_resource_version = version


class _FakeContext:
    def __init__(self, versions: dict[Resource, str]) -> None:
        self.versions = versions

    def informer(self, watch: Watch) -> _FakeInformer | None:
        version = self.versions.get(watch.resource)
        return _FakeInformer(version) if version is not None else None


def _answer(version: str) -> dict[str, Any]:
    return {"metadata": {"name": "x", "resourceVersion": version}}


async def test_a_key_waits_for_every_informer_it_wrote_through() -> None:
    writes = stale_cache.LastWrites()
    watches = [Watch(STATEFULSETS, lambda e: []), Watch(PODS, lambda e: [])]
    writes.wrote("ns/a", PODS, _answer("10"))
    writes.wrote("ns/a", STATEFULSETS, _answer("12"))

    assert not writes.caught_up("ns/a", _FakeContext({PODS: "10", STATEFULSETS: "11"}), watches)
    assert not writes.caught_up("ns/a", _FakeContext({PODS: "9", STATEFULSETS: "12"}), watches)
    assert writes.caught_up("ns/b", _FakeContext({PODS: "1", STATEFULSETS: "1"}), watches)  # never written
    assert writes.caught_up("ns/a", _FakeContext({PODS: "10", STATEFULSETS: "12"}), watches)
    assert "ns/a" not in writes  # caught up once: the record is done


async def test_a_status_answer_and_an_old_record_hold_nothing_back() -> None:
    now = [100.0]
    writes = stale_cache.LastWrites(ttl=30.0, clock=lambda: now[0])
    watches = [Watch(PODS, lambda e: [])]
    writes.wrote("k", PODS, {"kind": "Status", "status": "Success"})  # an immediate delete: no version
    assert "k" not in writes
    writes.wrote("k", PODS, _answer("50"))
    assert not writes.caught_up("k", _FakeContext({PODS: "40"}), watches)
    now[0] += 31.0  # a lost event must not stall the key forever
    assert writes.caught_up("k", _FakeContext({PODS: "40"}), watches)


# -- workloads: StatefulSet, DaemonSet, CronJob --------------------------------------------------


def _template(app: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "main", "image": "busybox", "command": ["sleep", "3600"]}]}}


async def test_a_statefulset_behind_its_own_write_is_requeued(cluster: Cluster) -> None:
    await cluster.client.create(STATEFULSETS, {"apiVersion": "apps/v1", "kind": "StatefulSet",
                                               "metadata": {"name": "held-web"}, "spec": {
                                                   "replicas": 1, "serviceName": "held-web",
                                                   "selector": {"matchLabels": {"app": "held-web"}},
                                                   "template": _template("held-web")}}, NS)
    controller = StatefulSetController(cluster.client)
    ctx = await _started(cluster, controller)
    try:
        await controller.reconcile(f"{NS}/held-web")  # creates held-web-0 and writes status
        assert await _count(cluster.client, PODS, label_selector="app=held-web") == 1
        await _skip_then_act(ctx, controller, f"{NS}/held-web", STATEFULSETS, "held-web")
        assert await _count(cluster.client, PODS, label_selector="app=held-web") == 1
    finally:
        await ctx.stop()


async def test_a_daemonset_behind_its_own_write_is_requeued(cluster: Cluster) -> None:
    await cluster.client.create(NODES, {"metadata": {"name": "held-node", "labels": {"kubernetes.io/hostname": "held-node"}},
                                        "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    await cluster.client.create(DAEMONSETS, {"apiVersion": "apps/v1", "kind": "DaemonSet",
                                             "metadata": {"name": "held-agent"}, "spec": {
                                                 "selector": {"matchLabels": {"app": "held-agent"}},
                                                 "template": _template("held-agent")}}, NS)
    controller = DaemonSetController(cluster.client)
    ctx = await _started(cluster, controller)
    try:
        await controller.reconcile(f"{NS}/held-agent")
        assert await _count(cluster.client, PODS, label_selector="app=held-agent") == 1
        await _skip_then_act(ctx, controller, f"{NS}/held-agent", DAEMONSETS, "held-agent")
        assert await _count(cluster.client, PODS, label_selector="app=held-agent") == 1
    finally:
        await ctx.stop()
        await cluster.client.delete(NODES, "held-node")


async def test_a_cronjob_behind_its_own_write_is_requeued(cluster: Cluster) -> None:
    created = await cluster.client.create(CRONJOBS, {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "held-cron"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "Never"}}}}}}, NS)
    assert created["metadata"]["creationTimestamp"]
    due = (int(time.time()) // 60 + 1) * 60 + 1.0  # just after the next minute: one run is due
    controller = CronJobController(cluster.client, clock=lambda: due)
    ctx = await _started(cluster, controller)
    try:
        await controller.reconcile(f"{NS}/held-cron")  # creates the Job and writes status.active
        assert await _count(cluster.client, JOBS) == 1
        await _skip_then_act(ctx, controller, f"{NS}/held-cron", CRONJOBS, "held-cron")
        assert await _count(cluster.client, JOBS) == 1
    finally:
        await ctx.stop()


# -- service network: Endpoints ------------------------------------------------------------------


async def test_endpoints_behind_their_own_write_are_requeued(cluster: Cluster) -> None:
    await cluster.client.create(SERVICES, {"metadata": {"name": "held-svc"}, "spec": {
        "selector": {"app": "held-svc"}, "ports": [{"port": 80}]}}, NS)
    controller = EndpointsController(cluster.client)
    ctx = await _started(cluster, controller)
    try:
        await controller.reconcile(f"{NS}/held-svc")  # creates the Endpoints
        created = await _rv(cluster.client, ENDPOINTS, "held-svc")
        # Held, the cache has no Endpoints: acting on it would try to create them a second time.
        await _skip_then_act(ctx, controller, f"{NS}/held-svc", ENDPOINTS, "held-svc")
        assert await _rv(cluster.client, ENDPOINTS, "held-svc") == created
    finally:
        await ctx.stop()


# -- policy and autoscaling: Disruption, HPA -----------------------------------------------------


async def test_a_disruption_budget_behind_its_own_write_is_requeued(cluster: Cluster) -> None:
    await cluster.client.create(PODDISRUPTIONBUDGETS, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                                       "metadata": {"name": "held-pdb"}, "spec": {
                                                           "minAvailable": 1,
                                                           "selector": {"matchLabels": {"app": "held-none"}}}}, NS)
    controller = DisruptionController(cluster.client)
    ctx = await _started(cluster, controller)
    try:
        before = await _rv(cluster.client, PODDISRUPTIONBUDGETS, "held-pdb")
        await controller.reconcile(f"{NS}/held-pdb")  # writes the status (no pods, none allowed)
        assert await _rv(cluster.client, PODDISRUPTIONBUDGETS, "held-pdb") != before
        await _skip_then_act(ctx, controller, f"{NS}/held-pdb", PODDISRUPTIONBUDGETS, "held-pdb")
    finally:
        await ctx.stop()


async def test_an_hpa_behind_its_own_write_is_requeued(cluster: Cluster) -> None:
    await cluster.client.create(HPAS, {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                                       "metadata": {"name": "held-hpa"}, "spec": {
                                           "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                              "name": "held-missing"},
                                           "minReplicas": 1, "maxReplicas": 3}}, NS)
    controller = HorizontalPodAutoscalerController(cluster.client)
    ctx = await _started(cluster, controller)
    try:
        before = await _rv(cluster.client, HPAS, "held-hpa")
        await controller.reconcile(f"{NS}/held-hpa")  # no target: AbleToScale False written
        assert await _rv(cluster.client, HPAS, "held-hpa") != before
        await _skip_then_act(ctx, controller, f"{NS}/held-hpa", HPAS, "held-hpa")
    finally:
        await ctx.stop()


# -- node lifecycle ------------------------------------------------------------------------------


async def test_node_lifecycle_behind_its_own_write_is_requeued(cluster: Cluster) -> None:
    await cluster.client.create(NODES, {"metadata": {"name": "held-silent"}})  # never posted status, no lease
    controller = NodeLifecycleController(cluster.client, grace=0.0, startup_grace=0.0)
    ctx = await _started(cluster, controller)
    try:
        await controller.reconcile("held-silent")  # conditions Unknown, then the unreachable taints
        node = await cluster.client.get(NODES, "held-silent")
        assert {t["key"] for t in node["spec"].get("taints") or []} >= {"node.kubernetes.io/unreachable"}
        await _skip_then_act(ctx, controller, "held-silent", NODES, "held-silent", None)
        after = await cluster.client.get(NODES, "held-silent")
        assert after["status"]["conditions"] == node["status"]["conditions"]  # not written a second time
    finally:
        await ctx.stop()
        await cluster.client.delete(NODES, "held-silent")
