"""The API server's side of the admission chain: the cluster view, request attributes, the follower.

`install(server, manifests_dir)` builds the chain (`admission.assembly`) over a `StoreView` — the
store, the registry and the patch functions behind admission's `ClusterView` — loads manifest
policies (KEP-5793) before the server answers, and stores it on `Server.admission`.
`attributes()` describes one write; `admit()` / `validate()` run the two halves and turn a
`Rejection` into the `APIError` handlers answer with (`writing.py` calls them). `Follower`
watches the store and writes what admission owns into status: VAP `status.typeChecking` and
ResourceQuota `status.used`. `seed()` creates the two system PriorityClasses.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any, Mapping

import msgspec

from admission import assembly, attributes as attributes_module, errors as admission_errors
from admission.attributes import Attributes, UserInfo
from admission.plugins import priority
from admission.policy import manifests, source as policy_source, type_checking
from admission.view import ResourceRef, StoredObject
from apiserver import errors
from apiserver.kinds import admission_policies
from apiserver.patching import PatchError, apply_merge, json_patch
from apiserver.ssa import shapes
from storage import errors as storage_errors

if TYPE_CHECKING:
    from apiserver.context import Endpoint, Server

log = logging.getLogger("haru.apiserver.admission")
_POLICY_PREFIX = f"/registry/{policy_source.GROUP}/"
# Status follows changes after this many seconds, coalescing bursts (as a controller's queue does).
STATUS_DELAY = 0.3

class Patching:
    """The ClusterView methods admission uses to mutate objects: schema lookups and the patch
    algorithms of `apiserver/patching`, with their errors as admission's PatchFailed."""

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        return shapes.resolve(node) or node  # shapes keeps each `$ref` it has followed

    def apply(self, live: dict[str, Any], config: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
        try:
            return apply_merge.merged(live, config, schema)
        except PatchError as err:
            raise admission_errors.PatchFailed(err.message) from None

    def json_patch(self, doc: dict[str, Any], operations: list[dict[str, Any]]) -> Any:
        try:
            return json_patch.apply(doc, operations)
        except PatchError as err:
            raise admission_errors.PatchFailed(err.message) from None


class StoreView(Patching):
    """admission.view.ClusterView over one API server's store and registry."""

    def __init__(self, server: "Server"):
        self.server = server
        self._by_resource: dict[tuple[str, str], list[Any]] = {}
        self._generation = -1
        # (group, resource, namespace) → (the resource's last change when read, its objects). Every
        # pod create asks for its namespace's quotas and limit ranges; they rarely change.
        self._listed: dict[tuple[str, str, str | None], tuple[int, list[StoredObject]]] = {}

    def _rows(self, group: str, resource: str) -> list[Any]:
        registry = self.server.registry
        if registry.generation != self._generation:
            self._by_resource = {}
            for info in registry.all():
                self._by_resource.setdefault((info.group, info.resource), []).append(info)
            self._generation = registry.generation
        return self._by_resource.get((group, resource), [])

    @staticmethod
    def _ref(info: Any) -> ResourceRef:
        return ResourceRef(info.group, info.version, info.resource, info.kind, info.namespaced)

    def revision(self) -> int:
        return self.server.store.revision

    def get(self, group: str, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        if group == "" and resource == "namespaces":
            return self.server.namespaces.get(name)
        rows = self._rows(group, resource)
        if not rows:
            return None
        record = self.server.store.get(rows[0].key(namespace or None, name))
        return None if record is None else msgspec.json.decode(record.value)

    def objects(self, group: str, resource: str, namespace: str | None = None) -> list[StoredObject]:
        rows = self._rows(group, resource)
        if not rows:
            return []
        changed = self.server.store.last_change(rows[0].list_prefix(None))
        cached = self._listed.get((group, resource, namespace))
        if cached is not None and cached[0] == changed:
            return list(cached[1])
        prefix = rows[0].list_prefix(namespace or None)
        found = []
        for record in self.server.store.list(prefix).records:
            rest = record.key[len(prefix):]
            ns, _, name = rest.rpartition("/")
            found.append(StoredObject(ns or (namespace or ""), name, record.revision, record.value))
        if len(self._listed) >= 10_000:  # namespaces come and go: start afresh now and then
            self._listed.clear()
        self._listed[(group, resource, namespace)] = (changed, found)
        return list(found)

    def group_revision(self, group: str) -> int:
        return self.server.store.last_change(f"/registry/{group or 'core'}/")

    def list_group(self, group: str) -> dict[str, list[StoredObject]]:
        prefix = f"/registry/{group or 'core'}/"
        found: dict[str, list[StoredObject]] = {}
        for record in self.server.store.list(prefix).records:
            resource, _, name = record.key[len(prefix):].partition("/")
            if "/" not in name:
                found.setdefault(resource, []).append(StoredObject("", name, record.revision, record.value))
        return found

    def resource_for_kind(self, api_version: str, kind: str) -> ResourceRef | None:
        group, _, version = api_version.rpartition("/")
        info = self.server.registry.by_kind(group, version, kind)
        return None if info is None else self._ref(info)

    def resource(self, group: str, version: str, resource: str) -> ResourceRef | None:
        info = self.server.registry.get(group, version, resource)
        return None if info is None else self._ref(info)

    def versions(self, group: str, resource: str) -> list[str]:
        return [info.version for info in self._rows(group, resource)]

    def schema(self, group: str, version: str, kind: str) -> dict[str, Any] | None:
        info = self.server.registry.by_kind(group, version, kind)
        return None if info is None or info.schema is None else dict(info.schema)



def install(server: "Server", manifests_dir: str | None = None, *,
            enable_plugins: frozenset[str] = frozenset()) -> assembly.Assembly:
    """Build the chain for `server` (manifest policies first); ManifestError stops the start.
    `enable_plugins` names the optional plugins to run (`assembly.OPTIONAL`)."""
    static = manifests.load(manifests_dir, admission_policies.prepare_manifest) if manifests_dir else None
    built = assembly.assemble(StoreView(server), static,
                              mutating_policies=server.gates.enabled("MutatingAdmissionPolicy"),
                              enable=enable_plugins,
                              pod_group_priority=server.gates.enabled("WorkloadAwarePreemption"),
                              job_validation=server.gates.enabled("GenericWorkload")
                              or server.gates.enabled("WorkloadWithJob"))
    server.admission = built
    return built


# -- one request -----------------------------------------------------------------------------------

def user_info(user: Any) -> UserInfo:
    """An authenticated `auth.User` as admission sees it; None is haru's admin."""
    if user is None:
        return attributes_module.ADMIN
    return UserInfo(user.name, tuple(user.groups), user.uid, dict(user.extra))


def _options(kind: str, query: Mapping[str, str]) -> dict[str, Any]:
    options: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if query.get("fieldManager"):
        options["fieldManager"] = query["fieldManager"]
    if query.get("dryRun"):
        options["dryRun"] = [query["dryRun"]]
    return options


def attributes(ep: "Endpoint", operation: str, obj: dict[str, Any] | None, old: dict[str, Any] | None,
               query: Mapping[str, str], *, subresource: str = "", user: Any = None, name: str | None = None,
               dry_run: bool = False) -> Attributes:
    resource = ep.resource
    if name is None:
        name = ep.request_info.name or ((obj or {}).get("metadata") or {}).get("name") or ""
    option_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}.get(operation)
    return Attributes(
        operation=operation, group=resource.group, version=resource.version, resource=resource.resource,
        kind=resource.kind, namespace=ep.namespace, name=name, object=obj, old_object=old, subresource=subresource,
        namespaced=resource.namespaced, user=user_info(user), dry_run=dry_run,
        options=_options(option_kind, query) if option_kind else None,
    )


class RetryableRejection(errors.APIError):
    """A refusal a plugin marked `retry`: `handlers/create.py` runs the create again shortly."""


def _api_error(rejection: admission_errors.Rejection) -> errors.APIError:
    kind = RetryableRejection if rejection.retry else errors.APIError
    return kind(rejection.code, rejection.reason, rejection.message, rejection.details)


def admit(ep: "Endpoint", attrs: Attributes) -> None:
    """The mutating half; `attrs.object` may be replaced by a new dict."""
    _run(ep, attrs, mutating=True)


def validate(ep: "Endpoint", attrs: Attributes) -> None:
    _run(ep, attrs, mutating=False)


def _run(ep: "Endpoint", attrs: Attributes, *, mutating: bool) -> None:
    """One half of the chain, its refusal turned into the Status the client gets."""
    built = ep.server.admission
    if built is None:
        return
    try:
        (built.chain.admit if mutating else built.chain.validate)(attrs)
    except admission_errors.Rejection as rejection:
        raise _api_error(rejection) from None


# -- what the server keeps in status, and the seeded classes ----------------------------------------

def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


async def seed(server: "Server") -> None:
    """The two system PriorityClasses, created once (the Priority plugin's bootstrap upstream)."""
    info = server.registry.get("scheduling.k8s.io", "v1", "priorityclasses")
    if info is None:
        return
    for name in priority.SYSTEM_CLASSES:
        key = info.key(None, name)
        if server.store.get(key) is not None:
            continue
        obj = priority.system_class(name)
        obj["metadata"].update({"uid": str(uuid.uuid4()), "creationTimestamp": _now(), "generation": 1})
        try:
            await server.store.create(key, obj)
        except storage_errors.KeyExists:
            pass


class Follower:
    """Keeps admission-owned status current: VAP type checking, ResourceQuota usage."""

    def __init__(self, server: "Server", built: assembly.Assembly):
        self.server = server
        self.built = built
        self.view = built.policies.view
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """Whether it is still following the store (`/readyz`'s checks ask)."""
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        revision = self.server.store.revision
        await self._policy_statuses()
        for namespace in {s.namespace for s in self.view.objects("", "resourcequotas")}:
            await self._quota_statuses(namespace)
        self._task = asyncio.create_task(self._follow(revision), name="haru-admission-follower")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _follow(self, revision: int) -> None:
        loop = asyncio.get_running_loop()
        watcher = self.server.store.watch("/registry/", revision)
        policies = False
        namespaces: set[str] = set()
        due: float | None = None
        try:
            while True:
                timeout = None if due is None else max(0.0, due - loop.time())
                try:
                    batch = await watcher.next_batch(timeout=timeout)
                except storage_errors.WatchClosed:
                    return
                for event in batch:
                    parts = event.key.split("/")
                    policies |= event.key.startswith(_POLICY_PREFIX)
                    if len(parts) == 6:
                        namespaces.add(parts[4])
                    if due is None:
                        due = loop.time() + STATUS_DELAY
                if due is None or loop.time() < due:
                    continue
                try:
                    if policies:
                        await self._policy_statuses()
                    for namespace in sorted(namespaces):
                        await self._quota_statuses(namespace)
                except asyncio.CancelledError:
                    raise
                except Exception:  # status upkeep must never stop; the next change retries
                    log.exception("updating admission status")
                policies, namespaces, due = False, set(), None
        finally:
            watcher.close()

    async def _write_status(self, group: str, resource: str, namespace: str, name: str,
                            status: dict[str, Any], unless: Any = None) -> None:
        info = self.server.registry.get(group, "v1", resource)
        if info is None:
            return

        def put(current: dict[str, Any] | None) -> dict[str, Any]:
            if current is None:
                raise storage_errors.KeyNotFound(info.key(namespace or None, name))
            if unless is not None and unless(current):
                return current
            current["status"] = status
            return current

        try:
            await self.server.store.guaranteed_update(info.key(namespace or None, name), put)
        except storage_errors.KeyNotFound:
            pass  # deleted meanwhile

    async def _policy_statuses(self) -> None:
        for policy in self.built.policies.validating_policies():
            status = policy.obj.get("status") or {}
            if policy.static or status.get("observedGeneration") == policy.generation and "typeChecking" in status:
                continue
            warnings = type_checking.check(policy, self.view)
            wanted = {"observedGeneration": policy.generation,
                      "typeChecking": {"expressionWarnings": warnings} if warnings else {}}
            generation = policy.generation
            await self._write_status(
                policy_source.GROUP, policy_source.VALIDATING_POLICIES, "", policy.name, wanted,
                unless=lambda current: int((current.get("metadata") or {}).get("generation") or 0) != generation)

    async def _quota_statuses(self, namespace: str) -> None:
        quotas = self.built.quota.quotas(namespace)
        if not quotas:
            return
        resources = sorted({(info.group, info.resource) for info in self.server.registry.all()
                            if info.namespaced and info.stored})
        for quota in quotas:
            status = self.built.quota.status_for(quota, resources)
            if quota.get("status") != status:
                await self._write_status("", "resourcequotas", namespace, quota["metadata"]["name"], status)
