"""The namespace controller against a real API server, driven by the real kubectl.

A deleted namespace loses its content and then disappears (`kubectl delete namespace` returns);
content held by a finalizer keeps it Terminating with upstream's conditions until the finalizer
goes; pods are deleted, and waited for, before anything else (OrderedNamespaceDeletion).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from client import errors
from client.resources import CONFIGMAPS, DEPLOYMENTS, NAMESPACES, PODS, SECRETS, Resource
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

POD = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
DEPLOYMENT = {"metadata": {"name": "web"}, "spec": {
    "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _exists(cluster: Cluster, resource: Resource, name: str, namespace: str | None = None) -> bool:
    try:
        await cluster.client.get(resource, name, namespace)
        return True
    except errors.APIError as exc:
        if errors.is_not_found(exc):
            return False
        raise


def _conditions(ns: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in (ns.get("status") or {}).get("conditions") or []}


async def test_kubectl_delete_namespace_returns_and_everything_in_it_is_gone(cluster: Cluster) -> None:
    code, _, err = await cluster.kubectl("create", "namespace", "doomed")
    assert code == 0, err
    await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "cm"}, "data": {"a": "1"}}, "doomed")
    await cluster.client.create(SECRETS, {"metadata": {"name": "s"}, "stringData": {"k": "v"}}, "doomed")
    await cluster.client.create(PODS, POD, "doomed")
    await cluster.client.create(DEPLOYMENTS, DEPLOYMENT, "doomed")

    code, out, err = await cluster.kubectl("delete", "namespace", "doomed", "--timeout=15s")

    assert code == 0, err
    assert 'namespace "doomed" deleted' in out
    assert not await _exists(cluster, NAMESPACES, "doomed")
    for resource, name in ((CONFIGMAPS, "cm"), (SECRETS, "s"), (PODS, "p"), (DEPLOYMENTS, "web")):
        assert (await cluster.client.list(resource, "doomed"))["items"] == [], resource
    code, _, err = await cluster.kubectl("get", "namespace", "doomed")
    assert code == 1 and "NotFound" in err


async def test_content_with_a_finalizer_keeps_the_namespace_terminating_until_the_finalizer_goes(cluster: Cluster) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "held"}})
    await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "keep", "finalizers": ["example.com/hold"]}}, "held")
    await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "plain"}}, "held")
    code, _, err = await cluster.kubectl("delete", "namespace", "held", "--wait=false")
    assert code == 0, err

    async def reported() -> dict[str, Any] | None:
        ns = await cluster.client.get(NAMESPACES, "held")
        remaining = _conditions(ns).get("NamespaceFinalizersRemaining", {})
        return ns if remaining.get("status") == "True" else None

    ns = await eventually(reported)
    conditions = _conditions(ns)
    assert ns["status"]["phase"] == "Terminating"
    assert ns["spec"]["finalizers"] == ["kubernetes"]
    assert conditions["NamespaceContentRemaining"] == {**conditions["NamespaceContentRemaining"], **{
        "status": "True", "reason": "SomeResourcesRemain",
        "message": "Some resources are remaining: configmaps. has 1 resource instances"}}
    assert conditions["NamespaceFinalizersRemaining"]["reason"] == "SomeFinalizersRemain"
    assert conditions["NamespaceFinalizersRemaining"]["message"] == \
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    assert conditions["NamespaceDeletionDiscoveryFailure"]["status"] == "False"
    assert conditions["NamespaceDeletionDiscoveryFailure"]["reason"] == "ResourcesDiscovered"
    assert conditions["NamespaceDeletionContentFailure"]["status"] == "False"
    assert not await _exists(cluster, CONFIGMAPS, "plain", "held")
    kept = await cluster.client.get(CONFIGMAPS, "keep", "held")
    assert kept["metadata"]["deletionTimestamp"]

    code, out, err = await cluster.kubectl("get", "namespace", "held", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["status"]["phase"] == "Terminating"

    code, _, err = await cluster.kubectl("-n", "held", "patch", "configmap", "keep", "--type=merge",
                                         "-p", '{"metadata":{"finalizers":null}}')
    assert code == 0, err

    async def gone() -> bool:
        return not await _exists(cluster, NAMESPACES, "held")

    await eventually(gone)


async def test_pods_go_first_and_other_content_waits_for_them(cluster: Cluster) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "ordered"}})
    # Bound to a node, so its deletion is graceful: it stays until its kubelet (here: we) finishes it.
    bound: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}], "nodeName": "node-1"}}
    await cluster.client.create(PODS, bound, "ordered")
    await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "cm"}}, "ordered")
    await cluster.client.delete(NAMESPACES, "ordered")

    async def pods_reported() -> dict[str, Any] | None:
        ns = await cluster.client.get(NAMESPACES, "ordered")
        remaining = _conditions(ns).get("NamespaceContentRemaining", {})
        return ns if remaining.get("status") == "True" else None

    ns = await eventually(pods_reported)
    assert _conditions(ns)["NamespaceContentRemaining"]["message"] == \
        "Some resources are remaining: pods. has 1 resource instances"
    assert (await cluster.client.get(PODS, "p", "ordered"))["metadata"]["deletionTimestamp"]
    assert await _exists(cluster, CONFIGMAPS, "cm", "ordered"), "other content must wait for the pods"

    await cluster.client.delete(PODS, "p", "ordered", grace_period_seconds=0)

    async def gone() -> bool:
        return not await _exists(cluster, NAMESPACES, "ordered")

    await eventually(gone)
    assert (await cluster.client.list(CONFIGMAPS, "ordered"))["items"] == []
