"""The garbage collector against a real API server: background, foreground and orphan deletion
with ReplicaSet → Pod ownerReferences, owners that never existed, and mixed owners.

kubectl's `--cascade=background|foreground|orphan` sets the propagationPolicy; the API server adds
the `foregroundDeletion` / `orphan` finalizer and the collector does the rest.
"""

from __future__ import annotations

from typing import Any

import pytest

from client import errors
from client.resources import CONFIGMAPS, DEPLOYMENTS, PODS, REPLICASETS, Resource
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

# The collector alone: these ReplicaSets share a selector and own hand-made pods, which the
# ReplicaSet controller would resize.
CONTROLLERS = ("garbage-collector",)
NS = "default"
LABELS = {"app": "web"}

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _replicaset(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": LABELS}, "spec": {
        "replicas": 2, "selector": {"matchLabels": LABELS},
        "template": {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def _owned_by(owner: dict[str, Any], *, block: bool = True, controller: bool = True) -> dict[str, Any]:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": controller, "blockOwnerDeletion": block}


def _pod(name: str, *owners: dict[str, Any], finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": LABELS, "ownerReferences": list(owners)}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


async def _get(cluster: Cluster, resource: Resource, name: str) -> dict[str, Any] | None:
    try:
        return await cluster.client.get(resource, name, NS)
    except errors.APIError as exc:
        if errors.is_not_found(exc):
            return None
        raise


async def _gone(cluster: Cluster, resource: Resource, *names: str) -> None:
    async def check() -> bool:
        return all([await _get(cluster, resource, n) is None for n in names])
    await eventually(check)


async def _replicaset_with_pods(cluster: Cluster, name: str, *, pod_finalizer: str | None = None) -> dict[str, Any]:
    rs = await cluster.client.create(REPLICASETS, _replicaset(name), NS)
    for i in range(2):
        finalizers = [pod_finalizer] if pod_finalizer and i == 0 else None
        await cluster.client.create(PODS, _pod(f"{name}-{i}", _owned_by(rs), finalizers=finalizers), NS)
    return rs


async def test_background_deletion_removes_the_dependents_after_the_owner(cluster: Cluster) -> None:
    await _replicaset_with_pods(cluster, "bg")

    code, _, err = await cluster.kubectl("-n", NS, "delete", "replicaset", "bg", "--cascade=background")

    assert code == 0, err
    assert await _get(cluster, REPLICASETS, "bg") is None
    await _gone(cluster, PODS, "bg-0", "bg-1")


async def test_foreground_deletion_keeps_the_owner_until_blocking_dependents_are_gone(cluster: Cluster) -> None:
    await _replicaset_with_pods(cluster, "fg", pod_finalizer="example.com/slow")
    code, _, err = await cluster.kubectl("-n", NS, "delete", "replicaset", "fg", "--cascade=foreground", "--wait=false")
    assert code == 0, err

    async def lingering_pod_left() -> bool:
        return await _get(cluster, PODS, "fg-1") is None and bool(await _get(cluster, PODS, "fg-0"))

    await eventually(lingering_pod_left)
    owner = await _get(cluster, REPLICASETS, "fg")
    assert owner is not None, "the owner must wait for its blocking dependent"
    assert owner["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert owner["metadata"]["deletionTimestamp"]
    pod = await _get(cluster, PODS, "fg-0")
    assert pod is not None and pod["metadata"]["deletionTimestamp"]

    await cluster.client.patch(PODS, "fg-0", {"metadata": {"finalizers": None}}, NS)

    await _gone(cluster, PODS, "fg-0")
    await _gone(cluster, REPLICASETS, "fg")


async def test_kubectl_foreground_delete_returns_once_the_owner_is_gone(cluster: Cluster) -> None:
    await _replicaset_with_pods(cluster, "fgw")

    code, _, err = await cluster.kubectl("-n", NS, "delete", "replicaset", "fgw", "--cascade=foreground", "--timeout=15s")

    assert code == 0, err
    assert await _get(cluster, REPLICASETS, "fgw") is None
    assert await _get(cluster, PODS, "fgw-0") is None and await _get(cluster, PODS, "fgw-1") is None


async def test_dependents_without_block_owner_deletion_do_not_hold_a_foreground_owner(cluster: Cluster) -> None:
    rs = await cluster.client.create(REPLICASETS, _replicaset("loose"), NS)
    await cluster.client.create(PODS, _pod("loose-0", _owned_by(rs, block=False), finalizers=["example.com/slow"]), NS)

    await cluster.client.delete(REPLICASETS, "loose", NS, propagation_policy="Foreground")

    await _gone(cluster, REPLICASETS, "loose")
    pod = await _get(cluster, PODS, "loose-0")
    assert pod is not None and pod["metadata"]["deletionTimestamp"], "the dependent is deleted all the same"
    await cluster.client.patch(PODS, "loose-0", {"metadata": {"finalizers": None}}, NS)
    await _gone(cluster, PODS, "loose-0")


async def test_orphan_deletion_keeps_the_dependents_and_drops_their_owner_reference(cluster: Cluster) -> None:
    await _replicaset_with_pods(cluster, "orph")

    code, _, err = await cluster.kubectl("-n", NS, "delete", "replicaset", "orph", "--cascade=orphan", "--timeout=15s")

    assert code == 0, err
    assert await _get(cluster, REPLICASETS, "orph") is None
    for name in ("orph-0", "orph-1"):
        pod = await _get(cluster, PODS, name)
        assert pod is not None and not pod["metadata"].get("deletionTimestamp")
        assert "ownerReferences" not in pod["metadata"]


async def test_an_object_whose_owner_never_existed_is_collected(cluster: Cluster) -> None:
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ghost", "uid": "0000-never"}}
    await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "haunted", "ownerReferences": [
        _owned_by(ghost, controller=False)]}}, NS)

    await _gone(cluster, CONFIGMAPS, "haunted")


async def test_a_dependent_with_a_living_owner_only_loses_the_reference_to_the_dead_one(cluster: Cluster) -> None:
    alive = await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "alive"}}, NS)
    doomed = await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "doomed"}}, NS)
    await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "shared", "ownerReferences": [
        _owned_by(alive, controller=False), _owned_by(doomed, controller=False)]}}, NS)

    await cluster.client.delete(CONFIGMAPS, "doomed", NS)

    async def reference_dropped() -> bool:
        shared = await _get(cluster, CONFIGMAPS, "shared")
        assert shared is not None, "a dependent with a living owner must stay"
        return [r["name"] for r in shared["metadata"].get("ownerReferences") or []] == ["alive"]

    await eventually(reference_dropped)


async def test_deletion_cascades_through_a_chain_of_owners(cluster: Cluster) -> None:
    deploy = await cluster.client.create(DEPLOYMENTS, {"metadata": {"name": "chain"}, "spec": _replicaset("x")["spec"]}, NS)
    rs = _replicaset("chain-rs")
    rs["metadata"]["ownerReferences"] = [_owned_by(deploy)]
    rs = await cluster.client.create(REPLICASETS, rs, NS)
    await cluster.client.create(PODS, _pod("chain-pod", _owned_by(rs)), NS)

    code, _, err = await cluster.kubectl("-n", NS, "delete", "deployment", "chain", "--cascade=foreground", "--timeout=15s")

    assert code == 0, err
    assert await _get(cluster, REPLICASETS, "chain-rs") is None
    assert await _get(cluster, PODS, "chain-pod") is None


CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False)
WIDGETS = Resource("example.com", "v1", "widgets", "Widget")


async def test_custom_resources_defined_after_start_are_collected_too(cluster: Cluster) -> None:
    await cluster.client.create(CRDS, {"metadata": {"name": "widgets.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
            "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}})
    owner = await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "widget-owner"}}, NS)
    widget = await cluster.client.create(WIDGETS, {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {
        "name": "w", "ownerReferences": [_owned_by(owner)]}}, NS)
    child = await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "widget-child", "ownerReferences": [
        _owned_by(widget)]}}, NS)
    assert child["metadata"]["ownerReferences"][0]["kind"] == "Widget"

    await cluster.client.delete(CONFIGMAPS, "widget-owner", NS)

    await _gone(cluster, WIDGETS, "w")
    await _gone(cluster, CONFIGMAPS, "widget-child")


def _count_owner_gets(collector: Any, owner_name: str) -> list[int]:
    """Counts the collector's GETs of `owner_name` (in a one-item list) until `del collector.client.get`."""
    lookups = [0]
    real_get = collector.client.get

    async def counting_get(resource: Resource, name: str, *args: Any, **kwargs: Any) -> Any:
        if resource == CONFIGMAPS and name == owner_name:
            lookups[0] += 1
        return await real_get(resource, name, *args, **kwargs)

    collector.client.get = counting_get
    return lookups


async def test_the_dependents_of_a_deleted_owner_are_collected_without_looking_it_up(cluster: Cluster) -> None:
    """The owner's DELETED event says its uid is gone for good (upstream's graph builder fills
    absentOwnerCache from it): none of its dependents asks the server about it again. The
    dependents' own ADDED reconciles found the owner in the cache, created before them."""
    assert cluster.manager is not None
    collector = cluster.manager.contexts["garbage-collector"].controller
    owner = await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "shared-owner"}}, NS)
    names = [f"shared-dep-{i}" for i in range(30)]
    for name in names:
        await cluster.client.create(CONFIGMAPS, {"metadata": {"name": name, "ownerReferences": [
            _owned_by(owner, block=False, controller=False)]}}, NS)
    lookups = _count_owner_gets(collector, "shared-owner")
    try:
        await cluster.client.delete(CONFIGMAPS, "shared-owner", NS)
        await _gone(cluster, CONFIGMAPS, *names)
    finally:
        del collector.client.get  # the bound method again
    assert lookups == [0]


async def test_the_dependents_of_an_owner_that_never_existed_share_one_lookup_of_it(cluster: Cluster) -> None:
    """Once the server said an owner is gone, its other dependents are collected without asking
    again (upstream's absentOwnerCache): at most one lookup per worker that raced to ask first."""
    assert cluster.manager is not None
    collector = cluster.manager.contexts["garbage-collector"].controller
    workers = cluster.manager.workers_for.get("garbage-collector", cluster.manager.workers)
    dependents = 2 * workers + 10
    phantom = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "phantom-owner",
                                                                     "uid": "2f0b7a52-0000-4000-8000-000000000001"}}
    names = [f"phantom-dep-{i}" for i in range(dependents)]
    lookups = _count_owner_gets(collector, "phantom-owner")
    try:
        for name in names:
            await cluster.client.create(CONFIGMAPS, {"metadata": {"name": name, "ownerReferences": [
                _owned_by(phantom, block=False, controller=False)]}}, NS)
        await _gone(cluster, CONFIGMAPS, *names)
    finally:
        del collector.client.get  # the bound method again
    assert 1 <= lookups[0] <= workers < dependents


async def test_a_delete_decided_on_a_stale_cache_does_not_happen(cluster: Cluster) -> None:
    """The collector deletes with the cached uid and resourceVersion as preconditions: an object
    that changed since (it may have gained an owner) is left for a decision on a live read."""
    assert cluster.manager is not None
    from controllers.garbage_collector import ObjectKey

    collector = cluster.manager.contexts["garbage-collector"].controller
    seen = await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "changed-since"}, "data": {"v": "1"}}, NS)
    await cluster.client.update(CONFIGMAPS, {**seen, "data": {"v": "2"}}, NS)
    key = ObjectKey(CONFIGMAPS, NS, "changed-since")

    assert await collector._delete_as_cached(key, seen, {"gone-owner": "dangling"}) is False
    assert await _get(cluster, CONFIGMAPS, "changed-since") is not None
    current = await cluster.client.get(CONFIGMAPS, "changed-since", NS)
    assert await collector._delete_as_cached(key, current, {"gone-owner": "dangling"}) is True
    await _gone(cluster, CONFIGMAPS, "changed-since")
