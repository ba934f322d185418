"""Shared steps of the upstream-behaviour checks in `apimachinery_*`, `network_*`, `auth_*`,
`storage_*`, `scheduling_*`, `instrumentation_*` and `node_*` modules.

- `refused`: the call must fail with this HTTP code (and Status reason), as the Go tests' `ExpectError`;
- `gone`: poll until a GET answers 404;
- `watch_events`: open a watch at a resourceVersion and collect events until a predicate holds —
  checks take the list's resourceVersion first, act, then watch from it, so the stream replays
  exactly what happened after the list;
- `in_discovery`: the /apis → /apis/<group> → /apis/<group>/<version> walk the "API operations"
  tests start with;
- `api_operations`: upstream's many "should support <Kind> API operations" tests as one routine:
  discovery, create, get, list (namespace and all), watch, patch, update, status, delete and
  deletecollection, each verified by a later read;
- `pod`, `run_pod`: a minimal pod manifest, and one created and polled until it runs;
- `make_crd`: a CRD of the check's own, Established and served; `pod_log`: a pod's log text.

Read-modify-write retries after a 409 (`retry_on_conflict`) live in `_confcore_support.py`, with
the apps and batch checks' `update_retrying` built on them. Only the check modules import this;
like them it reaches the cluster only through `client/`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Awaitable, Callable

from client import errors
from client.resources import Resource
from conformance.checks._confcore_support import retry_on_conflict
from conformance.context import Context, Obj

PAUSE = "registry.k8s.io/pause:3.10"


async def refused(call: Awaitable[Any], code: int, reason: str | None = None, what: str = "the request") -> errors.APIError:
    """Await `call`; it must raise an APIError with `code` (and `reason`, when given). Returns the error."""
    try:
        answer = await call
    except errors.APIError as err:
        assert err.code == code and (reason is None or err.reason == reason), \
            f"{what}: expected {code} {reason or ''}, got {err}"
        return err
    raise AssertionError(f"{what} succeeded, expected {code} {reason or ''}: {str(answer)[:300]}")


async def gone(ctx: Context, api_version: str, kind: str, name: str, namespace: str | None = None,
               timeout: float = 30.0) -> None:
    """Poll until a GET of the object answers 404."""
    async def absent() -> bool:
        try:
            await ctx.get(api_version, kind, name, namespace)
        except errors.APIError as err:
            if errors.is_not_found(err):
                return True
            raise
        return False
    await ctx.eventually(absent, timeout=timeout, what=f"{kind} {name} to be gone")


async def watch_events(ctx: Context, resource: Resource, namespace: str | None, resource_version: str,
                       until: Callable[[list[Obj]], bool], *, label_selector: str = "",
                       field_selector: str = "", timeout: float = 30.0) -> list[Obj]:
    """Events (bookmarks left out) of a watch from `resource_version`, once `until(events)` holds."""
    events: list[Obj] = []

    async def consume() -> None:
        stream = ctx.api.watch(resource, namespace, resource_version=resource_version, label_selector=label_selector,
                               field_selector=field_selector, allow_bookmarks=False,
                               timeout_seconds=int(timeout) + 5)
        async with contextlib.aclosing(stream):
            async for event in stream:
                if event.get("type") == "BOOKMARK":
                    continue
                events.append(event)
                if until(events):
                    return
        raise AssertionError("the server ended the watch early")

    try:
        await asyncio.wait_for(consume(), timeout)
    except asyncio.TimeoutError:
        seen = [(e["type"], e["object"]["metadata"].get("name")) for e in events]
        raise AssertionError(f"the watch from resourceVersion {resource_version} did not deliver the expected "
                             f"events within {timeout:g}s; it saw {seen}") from None
    return events


def saw(events: list[Obj], event_type: str, name: str, test: Callable[[Obj], bool] = lambda obj: True) -> bool:
    return any(e["type"] == event_type and e["object"]["metadata"]["name"] == name and test(e["object"])
               for e in events)


async def in_discovery(ctx: Context, group: str, version: str, *resources: str) -> None:
    """`group` is in /apis, `version` in /apis/<group>, and each of `resources` (plurals, or
    `plural/subresource`) in /apis/<group>/<version> — or the /api walk for the core group."""
    if group:
        groups = await ctx.api.get_path("/apis")
        entry = next((g for g in groups.get("groups") or [] if g.get("name") == group), None)
        assert entry is not None, f"the {group} API group is not in /apis"
        assert any(v.get("version") == version for v in entry.get("versions") or []), \
            f"{group}/{version} is not listed in /apis"
        detail = await ctx.api.get_path(f"/apis/{group}")
        assert any(v.get("groupVersion") == f"{group}/{version}" for v in detail.get("versions") or []), \
            f"{group}/{version} is not in /apis/{group}"
        path = f"/apis/{group}/{version}"
    else:
        core = await ctx.api.get_path("/api")
        assert version in (core.get("versions") or []), f"{version} is not in /api"
        path = f"/api/{version}"
    listing = await ctx.api.get_path(path)
    assert listing.get("groupVersion") == (f"{group}/{version}" if group else version), \
        f"{path} names groupVersion {listing.get('groupVersion')!r}"
    names = {r.get("name") for r in listing.get("resources") or []}
    missing = [r for r in resources if r not in names]
    assert not missing, f"{path} does not list {missing}"


def labelled(obj: Obj, labels: dict[str, str]) -> Obj:
    meta = obj.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **labels}
    return obj


async def api_operations(ctx: Context, make: Callable[[str], Obj], *, status: Callable[[Obj], Obj] | None = None,
                         status_test: Callable[[Obj], bool] | None = None,
                         extra_subresources: tuple[str, ...] = ()) -> None:
    """Upstream's "<Kind> API operations" test. `make(name)` returns a new object to create; `status`
    maps an object to a merge patch of its status (and `status_test` says the patch shows)."""
    sample = make("sample")
    api_version, kind = sample["apiVersion"], sample["kind"]
    resource = ctx.api.resource(api_version, kind)
    group, _, version = api_version.rpartition("/")
    subresources = tuple(f"{resource.resource}/{s}" for s in ((("status",) if status else ()) + extra_subresources))
    await in_discovery(ctx, group, version, resource.resource, *subresources)
    assert resource.supports("create", "get", "list", "watch", "update", "patch", "delete", "deletecollection"), \
        f"{resource} does not advertise all eight verbs: {sorted(resource.verbs)}"

    selector_value = ctx.namespace  # unique to this check, also for cluster-scoped objects
    label = {"conformance.haru.dev/api-operations": selector_value}
    selector = f"conformance.haru.dev/api-operations={selector_value}"
    # Cluster-scoped names carry the namespace too, so two runs against one cluster never collide.
    names = [ctx.name(kind.lower() if resource.namespaced else f"{ctx.namespace}-{kind.lower()}") for _ in range(3)]
    for name in names:
        created = await ctx.create(labelled(make(name), label))
        assert created["metadata"]["name"] == name and created["kind"] == kind, f"create returned {created}"
    ns = ctx.namespace if resource.namespaced else None
    fetched = await ctx.api.get(resource, names[0], ns)
    assert fetched["metadata"]["name"] == names[0], f"get returned {fetched['metadata']}"

    listed = await ctx.api.list(resource, ns, label_selector=selector)
    assert sorted(o["metadata"]["name"] for o in listed["items"]) == sorted(names), \
        f"a labelled list found {[o['metadata']['name'] for o in listed['items']]}, expected {names}"
    if resource.namespaced:
        everywhere = await ctx.api.list(resource, None, label_selector=selector)
        assert len(everywhere["items"]) == 3, f"a list across all namespaces found {len(everywhere['items'])} objects"

    since = listed["metadata"]["resourceVersion"]
    patched = await ctx.api.patch(resource, names[0], {"metadata": {"annotations": {"patched": "true"}}}, ns)
    assert (patched["metadata"].get("annotations") or {}).get("patched") == "true", "the patch did not show"
    await watch_events(ctx, resource, ns, since, lambda evs: saw(
        evs, "MODIFIED", names[0], lambda o: (o["metadata"].get("annotations") or {}).get("patched") == "true"),
        label_selector=selector)

    # Read-modify-writes retry on a conflict: a controller (APF's for FlowSchemas) may write between.
    async def update() -> Obj:
        current = await ctx.api.get(resource, names[0], ns)
        current["metadata"].setdefault("annotations", {})["updated"] = "true"
        return await ctx.api.update(resource, current, ns)
    updated = await retry_on_conflict(update)
    assert updated["metadata"]["annotations"].get("updated") == "true", "the update did not show"

    if status is not None:
        got = await ctx.api.get(resource, names[0], ns, "status")
        assert got["metadata"]["name"] == names[0], "GET /status returned another object"
        await ctx.api.patch(resource, names[0], status(got), ns, subresource="status")
        after = await ctx.api.get(resource, names[0], ns, "status")
        assert status_test is None or status_test(after), f"the status patch did not show: {after.get('status')}"

        async def update_status() -> Obj:
            latest = await ctx.api.get(resource, names[0], ns, "status")
            latest["metadata"].setdefault("annotations", {})["status-updated"] = "true"
            return await ctx.api.update(resource, latest, ns, "status")
        await retry_on_conflict(update_status)

    await ctx.api.delete(resource, names[0], ns)
    await gone(ctx, api_version, kind, names[0], ns)
    await ctx.api.delete_collection(resource, ns, label_selector=selector)

    async def emptied() -> bool:
        left = await ctx.api.list(resource, ns, label_selector=selector)
        return not left["items"]
    await ctx.eventually(emptied, what=f"deletecollection to remove every labelled {kind}")


def pod(name: str, *, command: list[str] | None = None, image: str = PAUSE, labels: dict[str, str] | None = None,
        restart_policy: str = "Always", **spec: Any) -> Obj:
    container: Obj = {"name": "main", "image": image}
    if command:
        container["command"] = command
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [container], "restartPolicy": restart_policy,
                     "terminationGracePeriodSeconds": 1, **spec}}


async def wait_phase(ctx: Context, name: str, *phases: str, timeout: float = 60.0) -> Obj:
    async def reached() -> Obj | None:
        got = await ctx.get("v1", "Pod", name)
        return got if got.get("status", {}).get("phase") in phases else None
    return await ctx.eventually(reached, timeout=timeout, what=f"pod {name} to reach {'/'.join(phases)}")


async def run_pod(ctx: Context, manifest: Obj, timeout: float = 60.0) -> Obj:
    """Create `manifest` and return it once it is Running."""
    await ctx.create(manifest)
    return await wait_phase(ctx, manifest["metadata"]["name"], "Running", timeout=timeout)


CRDS = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
OPEN_SCHEMA: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def crd_manifest(ctx: Context, kind: str, *, group: str = "", scope: str = "Namespaced",
                 schema: Obj | None = None, versions: tuple[str, ...] = ("v1",), status: bool = False,
                 labels: dict[str, str] | None = None) -> Obj:
    """A CustomResourceDefinition of a kind unique to this check (its group carries the namespace)."""
    group = group or f"{ctx.namespace}.example.com"
    plural = f"{kind.lower()}s"
    version_list = []
    for i, version in enumerate(versions):
        entry: Obj = {"name": version, "served": True, "storage": i == 0,
                      "schema": {"openAPIV3Schema": schema or OPEN_SCHEMA}}
        if status:
            entry["subresources"] = {"status": {}}
        version_list.append(entry)
    return {"apiVersion": CRDS[0], "kind": CRDS[1],
            "metadata": {"name": f"{plural}.{group}", "labels": labels or {}},
            "spec": {"group": group, "scope": scope, "versions": version_list,
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"}}}


async def established(ctx: Context, name: str) -> Obj:
    async def ready() -> Obj | None:
        got = await ctx.get(*CRDS, name)
        conditions = {c["type"]: c["status"] for c in (got.get("status") or {}).get("conditions") or []}
        return got if conditions.get("Established") == "True" else None
    return await ctx.eventually(ready, what=f"CRD {name} to be Established")


async def make_crd(ctx: Context, kind: str, **options: Any) -> tuple[Obj, Resource]:
    """Create a CRD, wait until it is Established and served, and return it with its resource."""
    created = await ctx.create(crd_manifest(ctx, kind, **options))
    crd = await established(ctx, created["metadata"]["name"])
    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("storage"))
    resource = Resource(spec["group"], version, spec["names"]["plural"], spec["names"]["kind"],
                        spec["scope"] == "Namespaced", frozenset({"create", "get", "list", "watch", "update",
                                                                 "patch", "delete", "deletecollection"}))

    async def served() -> bool:
        await ctx.api.list(resource, ctx.namespace if resource.namespaced else None)
        return True
    await ctx.eventually(served, what=f"{resource} to be served")
    return crd, resource


async def pod_log(ctx: Context, name: str, container: str = "") -> str:
    """The text of GET pods/<name>/log (plain text, which RestClient's JSON decoding does not read)."""
    path = f"/api/v1/namespaces/{ctx.namespace}/pods/{name}/log"
    params = [("container", container)] if container else []
    async with ctx.api.session.get(ctx.api.config.server + path, params=params) as resp:
        text = await resp.text()
        if resp.status >= 300:
            raise errors.APIError(resp.status, "", text[:300])
        return text
