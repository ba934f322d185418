"""The namespace controller: a namespace being deleted loses all its content, then its
`kubernetes` finalizer, so the API server can finish deleting it.

For a namespace with a deletionTimestamp that still holds `kubernetes` in spec.finalizers, one
reconcile: discover the namespaced resources that support `delete`; delete pods first and wait
for them (OrderedNamespaceDeletion, GA in 1.34); then every other resource (DeleteCollection where
served, else one by one, propagationPolicy Background); list what is left; write the upstream
conditions (`namespace_conditions.py`) with PUT .../status; when nothing is left, remove
`kubernetes` with PUT /api/v1/namespaces/<ns>/finalize. Content that remains (finalizers, graceful
pods) makes it look again after `Result.requeue_after`, sooner while the deletion is young.
"""

from __future__ import annotations

import asyncio
import calendar
import logging
import time
from collections.abc import Hashable
from typing import Any

from client import errors
from client.discovery import Discovery
from client.informer import Event
from client.resources import NAMESPACES, Resource
from client.rest import RestClient
from controllers import namespace_conditions as cond
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.namespace")
FINALIZER = "kubernetes"
_PARALLEL = 8  # resource types worked on at once


def terminating(event: Event) -> list[Hashable]:
    if event.type != "DELETED" and (event.obj.get("metadata") or {}).get("deletionTimestamp"):
        return [event.key]
    return []


def _age_seconds(timestamp: str) -> float:
    try:
        return max(0.0, time.time() - calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ")))
    except (TypeError, ValueError):
        return 0.0


class NamespaceController:
    name = "namespace"

    def __init__(self, client: RestClient, *, min_recheck: float = 0.25, max_recheck: float = 10.0) -> None:
        self.client = client
        self.discovery = Discovery(client)
        self.min_recheck = min_recheck
        self.max_recheck = max_recheck
        self.watches = [Watch(NAMESPACES, terminating)]

    async def reconcile(self, key: Hashable) -> Result | None:
        name = str(key)
        try:
            ns = await self.client.get(NAMESPACES, name)
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return None
            raise
        deleted_at = ns["metadata"].get("deletionTimestamp")
        if not deleted_at or FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or []):
            return None
        ns = await self._ensure_terminating(ns)
        content = await self.delete_content(name)
        ns = await self._write_conditions(ns, content)
        if not content.done:
            # Young deletions are checked often (most content goes at once); stuck ones rarely.
            delay = min(self.max_recheck, max(self.min_recheck, _age_seconds(deleted_at) / 4))
            return Result(requeue_after=delay)
        await self._finalize(ns)
        return None

    async def _ensure_terminating(self, ns: dict[str, Any]) -> dict[str, Any]:
        if (ns.get("status") or {}).get("phase") == "Terminating":
            return ns
        ns = {**ns, "status": {**(ns.get("status") or {}), "phase": "Terminating"}}
        return await self.client.update(NAMESPACES, ns, subresource="status")

    async def delete_content(self, namespace: str) -> cond.Content:
        content = cond.Content()
        try:
            discovered = await self.discovery.preferred()
        except (errors.APIError, OSError, asyncio.TimeoutError) as exc:
            content.discovery_failures["discovery"] = str(exc)
            return content
        content.discovery_failures.update(discovered.failed)
        deletable = discovered.namespaced("delete")
        pods = [r for r in deletable if (r.group, r.resource) == ("", "pods")]
        others = [r for r in deletable if r not in pods]
        for batch in (pods, others):
            limit = asyncio.Semaphore(_PARALLEL)

            async def one(resource: Resource) -> None:
                async with limit:
                    await self._delete_resource(resource, namespace, content)

            await asyncio.gather(*(one(r) for r in batch))
            if content.remaining:
                break  # pods go first: other content waits until they are gone
        return content

    async def _list(self, resource: Resource, namespace: str) -> list[dict[str, Any]] | None:
        if not resource.supports("list"):
            return None
        try:
            return (await self.client.list(resource, namespace, metadata_only=True)).get("items") or []
        except errors.APIError as exc:
            if exc.code in (404, 405):
                return None
            raise

    async def _delete_resource(self, resource: Resource, namespace: str, content: cond.Content) -> None:
        try:
            items = await self._list(resource, namespace)
            if items == []:
                return  # nothing here: no delete call needed
            await self._delete_all(resource, namespace, items)
            left = await self._list(resource, namespace)
        except (errors.APIError, OSError, asyncio.TimeoutError) as exc:
            content.delete_errors.append(f"{resource.group_resource}: {exc}")
            return
        if not left:
            return
        content.remaining[f"{resource.resource}.{resource.group}"] += len(left)
        unexplained = 0
        for item in left:
            meta = item.get("metadata") or {}
            for finalizer in meta.get("finalizers") or []:
                content.finalizers[finalizer] += 1
            if not meta.get("finalizers") and not meta.get("deletionTimestamp"):
                unexplained += 1  # neither held by a finalizer nor terminating gracefully
        if unexplained:
            content.delete_errors.append(
                f"unexpected items still remain in namespace: {namespace} for gvr: {resource}")

    async def _delete_all(self, resource: Resource, namespace: str, items: list[dict[str, Any]] | None) -> None:
        if resource.supports("deletecollection"):
            try:
                await self.client.delete_collection(resource, namespace, propagation_policy="Background")
                return
            except errors.APIError as exc:
                if exc.code not in (404, 405):
                    raise
        for item in items or []:
            try:
                await self.client.delete(resource, item["metadata"]["name"], namespace,
                                         propagation_policy="Background")
            except errors.APIError as exc:
                if exc.code not in (404, 405):
                    raise

    async def _write_conditions(self, ns: dict[str, Any], content: cond.Content) -> dict[str, Any]:
        wanted = cond.conditions(content)
        for _ in range(5):
            status = ns.get("status") or {}
            merged, changed = cond.merge(status.get("conditions") or [], wanted)
            if not changed:
                return ns
            try:
                return await self.client.update(NAMESPACES, {**ns, "status": {**status, "conditions": merged}},
                                                subresource="status")
            except errors.APIError as exc:
                if not errors.is_conflict(exc):
                    raise
                ns = await self.client.get(NAMESPACES, ns["metadata"]["name"])
        raise RuntimeError(f"namespace {ns['metadata']['name']}: status kept changing under us")

    async def _finalize(self, ns: dict[str, Any]) -> None:
        name = ns["metadata"]["name"]
        for _ in range(5):
            spec = ns.get("spec") or {}
            finalizers = [f for f in spec.get("finalizers") or [] if f != FINALIZER]
            try:
                await self.client.update(NAMESPACES, {**ns, "spec": {**spec, "finalizers": finalizers}},
                                         subresource="finalize")
                log.info("namespace %s: content gone, finalized", name)
                return
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return
                if not errors.is_conflict(exc):
                    raise
            try:
                ns = await self.client.get(NAMESPACES, name)
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return
                raise
        raise RuntimeError(f"namespace {name}: finalize kept conflicting")
