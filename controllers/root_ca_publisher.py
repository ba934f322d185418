"""The root CA publisher: every active namespace has the ConfigMap `kube-root-ca.crt`.

Upstream's pkg/controller/certificates/rootcacertpublisher, keyed by namespace. The ConfigMap
holds `ca.crt`, the CA the controllers' kubeconfig trusts (kube-controller-manager's default when
no --root-ca-file is given), and the `kubernetes.io/description` annotation. Missing → created;
different data or no annotation → updated (other keys and labels a user added are replaced or kept
as upstream does: data replaced, annotations merged). A plain-HTTP server has no CA: the map then
carries an empty `ca.crt`, as upstream publishes whatever CA data its client has. The projected
`kube-api-access-*` volume the ServiceAccount admission adds reads it.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from client import errors
from client.informer import Event
from client.resources import CONFIGMAPS, NAMESPACES
from client.rest import RestClient
from controllers.reconciling import Result, Watch

NAME = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")


def _namespace_keys(event: Event) -> list[Hashable]:
    if event.type == "DELETED":
        return []
    if event.type == "MODIFIED" and (event.obj.get("status") or {}).get("phase") != "Active":
        return []
    return [event.key]


def _configmap_keys(event: Event) -> list[Hashable]:
    meta = event.obj.get("metadata") or {}
    if meta.get("name") != NAME or event.type == "ADDED":
        return []
    return [meta.get("namespace")]


def _active(ns: dict[str, Any] | None) -> bool:
    if ns is None or (ns.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return (ns.get("status") or {}).get("phase") == "Active"


class RootCAPublisher:
    name = "root-ca-certificate-publisher"

    def __init__(self, client: RestClient, *, ca_pem: bytes | None = None) -> None:
        self.client = client
        ca = ca_pem if ca_pem is not None else client.config.ca_pem
        self.data = {"ca.crt": (ca or b"").decode()}
        self.namespaces = Watch(NAMESPACES, _namespace_keys)
        self.configmaps = Watch(CONFIGMAPS, _configmap_keys, field_selector=f"metadata.name={NAME}")
        self.watches = [self.namespaces, self.configmaps]
        self._ctx: Any = None

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _cached(self, watch: Watch, key: str) -> dict[str, Any] | None:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store.get(key) if informer is not None else None

    async def reconcile(self, key: Hashable) -> Result | None:
        namespace = str(key)
        if not _active(self._cached(self.namespaces, namespace)):
            return None
        current = self._cached(self.configmaps, f"{namespace}/{NAME}")
        if current is None:
            body = {"metadata": {"name": NAME, "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}}, "data": self.data}
            try:
                await self.client.create(CONFIGMAPS, body, namespace)
            except errors.APIError as exc:
                # Not retried: a namespace gone or terminating, or the cache was behind (its event follows).
                if errors.is_not_found(exc) or errors.is_already_exists(exc) or _namespace_terminating(exc):
                    return None
                raise
            return None
        annotations = (current.get("metadata") or {}).get("annotations") or {}
        if current.get("data") == self.data and annotations.get(DESCRIPTION_ANNOTATION):
            return None
        updated = {**current, "data": self.data,
                   "metadata": {**current["metadata"], "annotations": {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}}}
        updated.pop("binaryData", None)
        try:
            await self.client.update(CONFIGMAPS, updated, namespace)
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return None  # deleted meanwhile: the DELETED event brings us back
            raise
        return None


def _namespace_terminating(exc: errors.APIError) -> bool:
    return any(c.get("reason") == "NamespaceTerminating" for c in exc.details.get("causes") or [])
