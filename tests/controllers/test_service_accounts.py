"""The service-account controller against a real API server, read with the `kubernetes` 36.0.3
Python client (whose e2e tests wait for `default/default` before creating pods).

Every active namespace gets a `default` ServiceAccount, the system ones too; a deleted `default`
comes back; a terminating namespace gets none, even when the controller's cache still calls it
Active (the create's NamespaceTerminating refusal ends the reconcile).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes import client as pyclient
from kubernetes.client.rest import ApiException

from client.resources import NAMESPACES, SERVICEACCOUNTS
from controllers.service_accounts import ServiceAccountsController
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("serviceaccount",)
pytestmark = pytest.mark.asyncio(loop_scope="module")


def _core(cluster: Cluster) -> pyclient.CoreV1Api:
    return pyclient.CoreV1Api(pyclient.ApiClient(pyclient.Configuration(host=cluster.url)))


async def _read_default(cluster: Cluster, namespace: str) -> pyclient.V1ServiceAccount | None:
    # The Python client blocks; the server runs on this loop, so it is called from a thread.
    try:
        return await asyncio.to_thread(_core(cluster).read_namespaced_service_account, "default", namespace)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _controller(cluster: Cluster) -> ServiceAccountsController:
    assert cluster.manager is not None
    found = [c for c in cluster.manager.controllers if isinstance(c, ServiceAccountsController)]
    assert found
    return found[0]


async def test_the_default_and_system_namespaces_have_a_default_service_account(cluster: Cluster) -> None:
    for namespace in ("default", "kube-system", "kube-public"):
        account = await eventually(lambda: _read_default(cluster, namespace))
        assert account.metadata.name == "default" and account.metadata.namespace == namespace


async def test_a_new_namespace_gets_one(cluster: Cluster) -> None:
    await asyncio.to_thread(_core(cluster).create_namespace, {"metadata": {"name": "fresh"}})

    account = await eventually(lambda: _read_default(cluster, "fresh"))

    assert account.metadata.uid


async def test_a_deleted_default_service_account_comes_back(cluster: Cluster) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "again"}})
    first = await eventually(lambda: _read_default(cluster, "again"))

    await asyncio.to_thread(_core(cluster).delete_namespaced_service_account, "default", "again")

    async def recreated() -> pyclient.V1ServiceAccount | None:
        account = await _read_default(cluster, "again")
        return account if account is not None and account.metadata.uid != first.metadata.uid else None

    await eventually(recreated)


async def test_a_terminating_namespace_gets_none(cluster: Cluster) -> None:
    # No namespace controller runs here, so the deleted namespace stays Terminating.
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "leaving"}})
    await eventually(lambda: _read_default(cluster, "leaving"))
    await cluster.client.delete(NAMESPACES, "leaving")
    await cluster.client.delete(SERVICEACCOUNTS, "default", "leaving")
    controller = _controller(cluster)

    async def seen_terminating() -> bool:
        ns = controller._cached(controller.namespaces, "leaving")
        return ns is not None and bool(ns["metadata"].get("deletionTimestamp"))

    await eventually(seen_terminating)
    await controller.reconcile("leaving")

    assert await _read_default(cluster, "leaving") is None


@dataclass
class _Store:
    objects: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        return self.objects.get(key)


@dataclass
class _Informer:
    store: _Store


class _StaleContext:
    """A manager context whose namespace cache has not seen the deletion yet."""

    def __init__(self, controller: ServiceAccountsController, namespaces: dict[str, Any]) -> None:
        self._by_watch = {controller.namespaces: _Informer(_Store(namespaces)), controller.accounts: _Informer(_Store())}

    def informer(self, watch: Any) -> _Informer:
        return self._by_watch[watch]


async def test_a_create_refused_for_a_terminating_namespace_ends_the_reconcile(cluster: Cluster) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "racing"}})
    await eventually(lambda: _read_default(cluster, "racing"))
    await cluster.client.delete(NAMESPACES, "racing")
    await cluster.client.delete(SERVICEACCOUNTS, "default", "racing")
    controller = ServiceAccountsController(cluster.client)
    stale = {"racing": {"metadata": {"name": "racing"}, "status": {"phase": "Active"}}}
    await controller.prepare(_StaleContext(controller, stale))  # type: ignore[arg-type]

    assert await controller.reconcile("racing") is None

    assert await _read_default(cluster, "racing") is None
