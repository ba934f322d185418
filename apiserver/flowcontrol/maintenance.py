"""The APF configuration controller: keeps the default objects, feeds the filter, writes Dangling.

Upstream's kube-apiserver does three things here, and so does this:
  - **maintains the mandatory and suggested objects** (`defaults.py`). A missing one is created
    (deleting a suggested object is not respected either: it comes back), with
    `apf.kubernetes.io/autoupdate-spec: "true"`. A mandatory object always gets upstream's spec
    back, except the exempt level's `exempt` section (its shares and lendable percent are the
    admin's). A suggested object's spec is put back while its annotation is "true"; one with no
    annotation gets "true" if it was never changed (`generation` 1) and "false" otherwise, and one
    marked "false" is left as the admin made it;
  - **digests** every FlowSchema and PriorityLevelConfiguration into the filter's `Config` each time
    one changes (one watch on the group's storage prefix);
  - **writes each FlowSchema's `Dangling` condition**: True (reason NotFound) while its priority
    level does not exist, False (reason Found) otherwise, with upstream's messages.
`runner.start` starts it before the server listens (the first request is already classified);
`Running.stop` ends it.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import uuid
from typing import Any

import msgspec

from apiserver import go_shape, writing
from apiserver.flowcontrol import defaults, filter as filter_module
from storage import Store, errors as storage_errors

log = logging.getLogger("haru.apiserver.flowcontrol")
PREFIX = f"/registry/{defaults.GROUP}/"
SCHEMAS = f"{PREFIX}flowschemas/"
LEVELS = f"{PREFIX}prioritylevelconfigurations/"
RECHECK_SECONDS = 60.0


def _wanted() -> list[tuple[str, str, dict[str, Any], bool]]:
    """(storage key, kind, spec, mandatory) for every default object; levels first."""
    out = [(LEVELS + name, "PriorityLevelConfiguration", spec, True) for name, spec in defaults.MANDATORY_LEVELS.items()]
    out += [(LEVELS + name, "PriorityLevelConfiguration", spec, False) for name, spec in defaults.SUGGESTED_LEVELS.items()]
    out += [(SCHEMAS + name, "FlowSchema", spec, True) for name, spec in defaults.MANDATORY_SCHEMAS.items()]
    out += [(SCHEMAS + name, "FlowSchema", spec, False) for name, spec in defaults.SUGGESTED_SCHEMAS.items()]
    return out


def _new_object(key: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    obj = {"apiVersion": defaults.API_VERSION, "kind": kind, "metadata": {
        "name": key.rsplit("/", 1)[1], "uid": str(uuid.uuid4()), "generation": 1,
        "creationTimestamp": writing.now(), "annotations": {defaults.AUTOUPDATE: "true"}},
        "spec": copy.deepcopy(spec), "status": {}}
    plan = go_shape.plan_for(defaults.API_VERSION, kind)
    if plan is not None:
        go_shape.shape(obj, plan, fill=True)
    return obj


def kept_spec(current: dict[str, Any], wanted: dict[str, Any], mandatory: bool) -> dict[str, Any] | None:
    """The object as maintenance wants it (a copy), or None when it is fine as it is."""
    meta = current.setdefault("metadata", {})
    annotations = meta.get("annotations") or {}
    flag = annotations.get(defaults.AUTOUPDATE)
    if mandatory:
        auto = True
    elif flag in ("true", "false"):
        auto = flag == "true"
    else:
        auto = int(meta.get("generation") or 1) == 1
    spec = copy.deepcopy(wanted)
    if mandatory and "exempt" in spec and isinstance((current.get("spec") or {}).get("exempt"), dict):
        spec["exempt"] = current["spec"]["exempt"]  # the admin's to tune, as upstream allows
    changed = False
    if flag != ("true" if auto else "false"):
        meta["annotations"] = {**annotations, defaults.AUTOUPDATE: "true" if auto else "false"}
        changed = True
    if auto and current.get("spec") != spec:
        current["spec"] = spec
        meta["generation"] = int(meta.get("generation") or 1) + 1
        changed = True
    return current if changed else None


def dangling_condition(schema: dict[str, Any], level_names: set[str], now: str) -> dict[str, Any] | None:
    """The FlowSchema's status with its Dangling condition brought up to date; None: already right."""
    level = ((schema.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name", "")
    if level in level_names:
        status, reason = "False", "Found"
        message = "This FlowSchema references an existing PriorityLevelConfiguration object"
    else:
        status, reason = "True", "NotFound"
        message = f'This FlowSchema references the PriorityLevelConfiguration object named "{level}" but there is no such object'
    conditions = list((schema.get("status") or {}).get("conditions") or [])
    old = next((c for c in conditions if c.get("type") == "Dangling"), None)
    if old is not None and (old.get("status"), old.get("reason"), old.get("message")) == (status, reason, message):
        return None
    condition = {"type": "Dangling", "status": status,
                 "lastTransitionTime": now if old is None or old.get("status") != status else old.get("lastTransitionTime", now),
                 "reason": reason, "message": message}
    conditions = [c for c in conditions if c.get("type") != "Dangling"] + [condition]
    return {**(schema.get("status") or {}), "conditions": conditions}


def _with_mandatory(objects: list[dict[str, Any]], mandatory: dict[str, dict[str, Any]],
                    kind: str) -> list[dict[str, Any]]:
    """The stored objects plus upstream's copy of any mandatory one missing right now (deleted, not
    yet put back), so a request is never left without the catch-all or the exempt level."""
    present = {obj["metadata"]["name"] for obj in objects}
    missing = [{"kind": kind, "metadata": {"name": name, "uid": ""}, "spec": spec}
               for name, spec in mandatory.items() if name not in present]
    return objects + missing


class Maintenance:
    def __init__(self, store: Store, flow_control: filter_module.FlowControl) -> None:
        self.store = store
        self.flow_control = flow_control
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.ensure()
        await self.digest()
        self._task = asyncio.create_task(self._follow(self.store.revision), name="haru-apf-config")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def ensure(self) -> int:
        """Create or put back the default objects; returns how many were written."""
        written = await asyncio.gather(*(self._ensure_one(*item) for item in _wanted()))
        return sum(written)

    async def _ensure_one(self, key: str, kind: str, spec: dict[str, Any], mandatory: bool) -> int:
        record = self.store.get(key)
        if record is None:
            try:
                await self.store.create(key, _new_object(key, kind, spec))
            except storage_errors.KeyExists:
                return 0
            return 1
        if kept_spec(msgspec.json.decode(record.value), spec, mandatory) is None:
            return 0
        try:
            await self.store.guaranteed_update(key, lambda current: kept_spec(current, spec, mandatory) or current)
        except storage_errors.KeyNotFound:
            return 0  # deleted meanwhile: the next pass creates it
        return 1

    def _objects(self, prefix: str) -> list[dict[str, Any]]:
        return [msgspec.json.decode(r.value) for r in self.store.list(prefix).records]

    async def digest(self) -> None:
        """Hand the stored configuration to the filter, then bring Dangling conditions up to date."""
        schemas, levels = self._objects(SCHEMAS), self._objects(LEVELS)
        self.flow_control.config.apply(_with_mandatory(schemas, defaults.MANDATORY_SCHEMAS, "FlowSchema"),
                                       _with_mandatory(levels, defaults.MANDATORY_LEVELS, "PriorityLevelConfiguration"))
        names = {obj["metadata"]["name"] for obj in levels}
        now = writing.now()
        stale = [SCHEMAS + schema["metadata"]["name"] for schema in schemas
                 if dangling_condition(schema, names, now) is not None]
        # Side by side: concurrent writes share one durable commit (a first start writes all 13).
        await asyncio.gather(*(self._write_condition(key, names, now) for key in stale))

    async def _write_condition(self, key: str, names: set[str], now: str) -> None:
        def with_condition(current: dict[str, Any]) -> dict[str, Any]:
            status = dangling_condition(current, names, now)
            if status is not None:
                current["status"] = status
            return current
        try:
            await self.store.guaranteed_update(key, with_condition)
        except storage_errors.KeyNotFound:
            pass

    async def _follow(self, revision: int | None) -> None:
        while True:
            try:
                watcher = self.store.watch(PREFIX, revision)
            except storage_errors.TooOldResourceVersion:
                revision = None
                continue
            except storage_errors.StorageUnavailable:
                return
            try:
                while True:
                    batch = await watcher.next_batch(timeout=RECHECK_SECONDS)
                    if batch:
                        revision = batch[-1].revision
                    await self._pass()
            except storage_errors.WatchClosed:
                revision = None
                await self._pass()
            finally:
                watcher.close()

    async def _pass(self) -> None:
        try:
            await self.ensure()
            await self.digest()
        except storage_errors.StorageUnavailable:
            raise
        except storage_errors.StorageError:
            log.exception("APF configuration maintenance failed; retrying on the next change")
