"""The service-account controller: every active namespace has a `default` ServiceAccount.

What kube-controller-manager's serviceaccount-controller does: a namespace that is added or
changes is reconciled, and so is the namespace of a deleted ServiceAccount (a deleted `default`
comes back). One reconcile reads both informer caches: a namespace that is gone or not Active is
left alone; each account in `ensure` that the cache lacks is created. AlreadyExists (the cache
lagged) and a namespace that started terminating meanwhile are ends, not failures. Pod creation
and `kubectl create token` rely on the account being there. Run by `builtin.py`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from client import errors
from client.informer import Event
from client.resources import NAMESPACES, SERVICEACCOUNTS
from client.rest import RestClient
from controllers.reconciling import Result, Watch

if TYPE_CHECKING:
    from controllers.manager import ControllerContext

ENSURE = ("default",)


def namespace_changed(event: Event) -> list[Hashable]:
    return [] if event.type == "DELETED" else [event.key]


def account_deleted(event: Event) -> list[Hashable]:
    namespace = (event.obj.get("metadata") or {}).get("namespace")
    return [namespace] if event.type == "DELETED" and namespace else []


def _active(ns: dict[str, Any] | None) -> bool:
    if ns is None or (ns.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return (ns.get("status") or {}).get("phase") == "Active"


class ServiceAccountsController:
    name = "serviceaccount"

    def __init__(self, client: RestClient, *, ensure: tuple[str, ...] = ENSURE) -> None:
        self.client = client
        self.ensure = ensure
        self.namespaces = Watch(NAMESPACES, namespace_changed)
        self.accounts = Watch(SERVICEACCOUNTS, account_deleted)
        self.watches = [self.namespaces, self.accounts]
        self._ctx: ControllerContext | None = None

    async def prepare(self, ctx: "ControllerContext") -> None:
        self._ctx = ctx

    def _cached(self, watch: Watch, key: str) -> dict[str, Any] | None:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store.get(key) if informer is not None else None

    async def reconcile(self, key: Hashable) -> Result | None:
        namespace = str(key)
        if not _active(self._cached(self.namespaces, namespace)):
            return None
        for name in self.ensure:
            if self._cached(self.accounts, f"{namespace}/{name}") is not None:
                continue
            try:
                await self.client.create(SERVICEACCOUNTS, {"metadata": {"name": name}}, namespace)
            except errors.APIError as exc:
                if errors.is_already_exists(exc) or _namespace_terminating(exc):
                    continue
                raise
        return None


def _namespace_terminating(exc: errors.APIError) -> bool:
    # NamespaceLifecycle's refusal carries this cause (client-go's HasStatusCause). Any other
    # failure, a 404 for a namespace just gone included, is retried; by then the cache knows.
    return any(c.get("reason") == "NamespaceTerminating" for c in exc.details.get("causes") or [])
