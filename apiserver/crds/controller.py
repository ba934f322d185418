"""The task that makes CRDs live: names, conditions, registry rows, and cleanup on delete.

Runs inside the API server process (`runner.start` calls `start`, `Running.stop` calls `stop`).
It lists the CRD prefix of the store, then watches it; for each CRD it reconciles the stored state:
  * names checked against the other CRDs of the group (`naming.py`) → `NamesAccepted`, then
    `Established`, `acceptedNames`, all written through `store.guaranteed_update` like any status
    write; accepted CRDs get their registry rows (discovery, OpenAPI, routes) and are published in
    `served.py` (strategy, tables);
  * a CRD marked for deletion gets `Terminating`, its custom resources are deleted (those with
    finalizers are marked and waited for), then the cleanup finalizer is dropped and the CRD goes;
  * a CRD that is gone loses its rows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import msgspec

from apiserver.crds import definition as definition_module
from apiserver.crds import naming, served
from apiserver.crds.crd_strategy import CLEANUP_FINALIZER
from storage import errors as storage_errors

if TYPE_CHECKING:
    from apiserver.context import Server

log = logging.getLogger("haru.apiserver.crds")
CRD_PREFIX = "/registry/apiextensions.k8s.io/customresourcedefinitions/"
_RECHECK = 0.2  # seconds between looks at custom resources that still have finalizers


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Controller:
    def __init__(self, server: "Server") -> None:
        self.server = server
        self.store = server.store
        self.registry = server.registry
        self._rows: dict[str, list[tuple[str, str, str]]] = {}  # CRD name → rows it added
        self._published: dict[str, definition_module.Definition] = {}
        self._cleanups: dict[str, asyncio.Task[None]] = {}
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle --------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """Whether it is still following the store (`/readyz`'s checks ask)."""
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Serve every stored CRD now (before the server answers), then follow changes."""
        listed = self.store.list(CRD_PREFIX)
        for record in sorted(listed.records, key=lambda r: r.create_revision):
            await self.reconcile(record.key)
        self._task = asyncio.create_task(self._follow(listed.revision), name="haru-crd-controller")

    async def stop(self) -> None:
        tasks = [t for t in [self._task, *self._cleanups.values()] if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for name in list(self._published):
            self._unserve(name)

    async def _follow(self, revision: int) -> None:
        watcher = self.store.watch(CRD_PREFIX, revision)
        try:
            while True:
                try:
                    batch = await watcher.next_batch()
                except storage_errors.WatchClosed:
                    return
                for key in dict.fromkeys(event.key for event in batch):
                    try:
                        await self.reconcile(key)
                    except asyncio.CancelledError:
                        raise
                    except Exception:  # one bad CRD must not stop the others from being served
                        log.exception("reconciling %s", key)
        finally:
            watcher.close()

    # -- reconcile --------------------------------------------------------------------------
    async def reconcile(self, key: str) -> None:
        name = key[len(CRD_PREFIX):]
        record = self.store.get(key)
        if record is None:
            self._unserve(name)
            return
        crd = msgspec.json.decode(record.value)
        if (crd.get("metadata") or {}).get("deletionTimestamp"):
            self._serve(crd, terminating=True)
            if name not in self._cleanups or self._cleanups[name].done():
                self._cleanups[name] = asyncio.create_task(self._clean_up(key, crd), name=f"haru-crd-cleanup-{name}")
            return
        others = [o for o in self._all_crds() if (o.get("metadata") or {}).get("name") != name]
        verdict = naming.check(crd, others, self.registry)
        # Serve first, then say so: a client that sees `Established` must find the routes there.
        if verdict.accepted:
            self._serve(crd, terminating=False)
        else:
            self._unserve(name)
        await self._write_status(key, crd, lambda status: naming.apply(status, crd, verdict, _now()))

    def _all_crds(self) -> list[dict[str, Any]]:
        return [msgspec.json.decode(r.value) for r in self.store.list(CRD_PREFIX).records]

    async def _write_status(self, key: str, crd: dict[str, Any], change: Any) -> None:
        uid = crd["metadata"].get("uid")

        def try_update(current: dict[str, Any] | None) -> dict[str, Any]:
            if current is None or current["metadata"].get("uid") != uid:
                raise _Gone()
            status = current.setdefault("status", {})
            change(status)
            return current

        try:
            await self.store.guaranteed_update(key, try_update)
        except (_Gone, storage_errors.KeyNotFound):
            pass

    # -- serving ----------------------------------------------------------------------------
    def _serve(self, crd: dict[str, Any], *, terminating: bool) -> None:
        name = crd["metadata"]["name"]
        definition = definition_module.from_crd(crd)
        if terminating and name not in self._published:
            return  # never served (names refused): nothing to keep serving while it goes
        rows = definition.rows()
        wanted = {(r.group, r.version, r.resource) for r in rows}
        for row_key in self._rows.get(name, []):
            if row_key not in wanted:
                self.registry.remove(*row_key)
        for row in rows:
            current = self.registry.get(row.group, row.version, row.resource)
            if current is None or not _same_row(current, row):
                self.registry.add(row)
        self._rows[name] = sorted(wanted)
        previous = self._published.get(name)
        if previous is not None and (previous.group, previous.plural) != (definition.group, definition.plural):
            served.withdraw(previous.group, previous.plural, previous.uid)
        served.publish(definition)
        self._published[name] = definition

    def _unserve(self, name: str) -> None:
        for row_key in self._rows.pop(name, []):
            self.registry.remove(*row_key)
        definition = self._published.pop(name, None)
        if definition is not None:
            served.withdraw(definition.group, definition.plural, definition.uid)

    # -- deletion ---------------------------------------------------------------------------
    async def _clean_up(self, key: str, crd: dict[str, Any]) -> None:
        try:
            await self._write_status(key, crd, lambda s: naming.set_condition(
                s, "Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress",
                _now()))
            spec = crd.get("spec") or {}
            prefix = f"/registry/{spec.get('group')}/{(spec.get('names') or {}).get('plural')}/"
            while not await self._delete_instances(prefix):
                await asyncio.sleep(_RECHECK)
                if self.store.get(key) is None:
                    return
            await self._write_status(key, crd, lambda s: naming.set_condition(
                s, "Terminating", "True", "InstanceDeletionCompleted", "removed all instances", _now()))
            await self._drop_finalizer(key, crd["metadata"].get("uid"))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("cleaning up %s", key)

    async def _delete_instances(self, prefix: str) -> bool:
        """Delete what can go now, mark what has finalizers; True when nothing is left."""
        remaining = False
        for record in self.store.list(prefix).records:
            obj = msgspec.json.decode(record.value)
            meta = obj.get("metadata") or {}
            if meta.get("finalizers"):
                remaining = True
                if not meta.get("deletionTimestamp"):
                    await self._mark(record.key)
                continue
            try:
                await self.store.delete(record.key, expected_revision=record.revision)
            except (storage_errors.Conflict, storage_errors.KeyNotFound):
                remaining = True  # changed meanwhile: look again on the next pass
        return not remaining

    async def _mark(self, key: str) -> None:
        def try_update(current: dict[str, Any] | None) -> dict[str, Any]:
            if current is None:
                raise _Gone()
            meta = current["metadata"]
            meta.setdefault("deletionTimestamp", _now())
            meta.setdefault("deletionGracePeriodSeconds", 0)
            return current

        try:
            await self.store.guaranteed_update(key, try_update)
        except (_Gone, storage_errors.KeyNotFound):
            pass

    async def _drop_finalizer(self, key: str, uid: str | None) -> None:
        def try_update(current: dict[str, Any] | None) -> dict[str, Any]:
            if current is None or current["metadata"].get("uid") != uid:
                raise _Gone()
            meta = current["metadata"]
            meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != CLEANUP_FINALIZER]
            if not meta["finalizers"]:
                del meta["finalizers"]
            return current

        try:
            record = await self.store.guaranteed_update(key, try_update)
        except (_Gone, storage_errors.KeyNotFound):
            return
        meta = msgspec.json.decode(record.value)["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            try:
                await self.store.delete(key, expected_revision=record.revision)
            except (storage_errors.Conflict, storage_errors.KeyNotFound):
                pass  # someone else wrote meanwhile; their write decides (the next event reconciles)


class _Gone(Exception):
    """The CRD (or custom resource) went away, or was replaced, while we were writing."""


def _same_row(a: Any, b: Any) -> bool:
    fields = ("kind", "namespaced", "short_names", "categories", "field_selectors", "deprecation_warning", "singular")
    return (all(getattr(a, f) == getattr(b, f) for f in fields) and dict(a.subresources) == dict(b.subresources)
            and a.schema == b.schema and a.printer_columns == b.printer_columns)


async def start(server: "Server") -> Controller:
    controller = Controller(server)
    await controller.start()
    return controller
