"""Helpers the apps and batch checks share (`apps_*.py`, `batch_*.py`): pod templates, the
workload objects upstream's e2e tests build, and waits on what the controllers report. Also the
one read-modify-write retry on 409 Conflict every check uses (`retry_on_conflict`, client-go's
RetryOnConflict, and `update_retrying` on top of it).

Images are upstream's e2e images: on a real cluster they run, on haru a long-running image
keeps running and `sh -c "exit N"` exits N (nodes/runtime/behaviours.yaml).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, TypeVar

from client import errors

from conformance.context import Context, Obj

T = TypeVar("T")

HTTPD = "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"
HTTPD_NEW = "registry.k8s.io/e2e-test-images/httpd:2.4.39-4"
AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.53"
BUSYBOX = "registry.k8s.io/e2e-test-images/busybox:1.37.0-1"
APPS = "apps/v1"


def template(labels: dict[str, str], image: str = HTTPD, *, command: list[str] | None = None,
             restart: str = "Always", name: str = "httpd", grace: int = 0) -> Obj:
    container: dict[str, Any] = {"name": name, "image": image}
    if command:
        container["command"] = command
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [container], "restartPolicy": restart, "terminationGracePeriodSeconds": grace}}


def workload(kind: str, name: str, labels: dict[str, str], replicas: int | None = 1, image: str = HTTPD,
             **spec: Any) -> Obj:
    """A Deployment, ReplicaSet, StatefulSet or DaemonSet selecting `labels`, with `spec` merged in."""
    body: dict[str, Any] = {"selector": {"matchLabels": dict(labels)}, "template": template(labels, image)}
    if replicas is not None:
        body["replicas"] = replicas
    body.update(spec)
    return {"apiVersion": APPS, "kind": kind, "metadata": {"name": name, "labels": dict(labels)}, "spec": body}


def selector(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


async def pods(ctx: Context, labels: dict[str, str]) -> list[Obj]:
    """The namespace's pods that match `labels` and are not being deleted."""
    found = await ctx.list("v1", "Pod", label_selector=selector(labels))
    return [p for p in found["items"] if not p["metadata"].get("deletionTimestamp")]


def running(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running"


async def running_pods(ctx: Context, labels: dict[str, str], count: int, *, timeout: float = 30) -> list[Obj]:
    """Wait until exactly `count` matching pods exist and all run; return them."""
    async def probe() -> list[Obj] | None:
        found = await pods(ctx, labels)
        assert len(found) == count and all(running(p) for p in found), \
            f"{len(found)} pods, phases {[p.get('status', {}).get('phase') for p in found]}; want {count} Running"
        return found
    return await ctx.eventually(probe, timeout=timeout, what=f"{count} running pods with {selector(labels)}")


async def status_reaches(ctx: Context, kind: str, name: str, want: dict[str, Any], *, api_version: str = APPS,
                         timeout: float = 30) -> Obj:
    """Wait until the object's status has every field of `want`; return the object."""
    async def probe() -> Obj:
        obj = await ctx.get(api_version, kind, name)
        status = obj.get("status") or {}
        wrong = {k: status.get(k) for k, v in want.items() if status.get(k) != v}
        assert not wrong, f"{kind} {name} status has {wrong}, want {want}"
        return obj
    return await ctx.eventually(probe, timeout=timeout, what=f"{kind} {name} status {want}")


async def rollout_complete(ctx: Context, name: str, replicas: int, *, timeout: float = 30) -> Obj:
    """Wait for a Deployment whose controller saw its generation and has `replicas` updated and available."""
    async def probe() -> Obj:
        obj = await ctx.get(APPS, "Deployment", name)
        status = obj.get("status") or {}
        assert status.get("observedGeneration", 0) >= obj["metadata"]["generation"], "generation not observed yet"
        counts = {k: status.get(k, 0) for k in ("replicas", "updatedReplicas", "availableReplicas")}
        assert counts == {"replicas": replicas, "updatedReplicas": replicas, "availableReplicas": replicas}, \
            f"status counts {counts}, want {replicas} each"
        return obj
    return await ctx.eventually(probe, timeout=timeout, what=f"Deployment {name} rolled out with {replicas}")


def owner_uids(obj: Obj) -> list[str]:
    return [ref["uid"] for ref in obj["metadata"].get("ownerReferences") or [] if ref.get("controller")]


async def check_status_subresource(ctx: Context, kind: str, name: str, *, api_version: str = APPS) -> None:
    """Upstream's "validate <kind> Status endpoints": read, update and patch /status; reads see the writes."""
    current = await ctx.get(api_version, kind, name, subresource="status")
    assert current["metadata"]["name"] == name and current["kind"] == kind, f"GET status returned {current.get('kind')}"
    condition = {"type": "StatusUpdate", "status": "True", "reason": "E2E", "message": "Set from e2e test",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}

    def add_condition(obj: Obj) -> None:
        status = obj.setdefault("status", {})
        status["conditions"] = [*(status.get("conditions") or []), condition]
    updated = await update_retrying(ctx, api_version, kind, name, add_condition, subresource="status")
    assert any(c["type"] == "StatusUpdate" for c in updated["status"].get("conditions") or []), \
        "the condition written with PUT /status is missing from the answer"
    patched = await ctx.patch(api_version, kind, name, {"metadata": {"annotations": {"patchedstatus": "true"}},
                                                        "status": {"conditions": [
                                                            {**condition, "type": "StatusPatched"}]}},
                              subresource="status")
    assert any(c["type"] == "StatusPatched" for c in patched["status"].get("conditions") or []), \
        "the condition written with PATCH /status is missing from the answer"
    read = await ctx.get(api_version, kind, name, subresource="status")
    assert any(c["type"] == "StatusPatched" for c in read["status"].get("conditions") or []), \
        "a later read of /status does not show the patched condition"


async def retry_on_conflict(attempt: Callable[[], Awaitable[T]], tries: int = 10) -> T:
    """client-go's retry.RetryOnConflict: a read-modify-write that lost a race with a controller
    (409 Conflict) reads again and retries; the Go tests wrap their updates the same way."""
    for _ in range(tries - 1):
        try:
            return await attempt()
        except errors.APIError as err:
            if not errors.is_conflict(err):
                raise
    return await attempt()


async def update_retrying(ctx: Context, api_version: str, kind: str, name: str, mutate: Callable[[Obj], None], *,
                          subresource: str | None = None, attempts: int = 5) -> Obj:
    """GET, `mutate`, PUT; again on 409 Conflict, as upstream's e2e `Update…WithRetries` helpers do
    (a controller's status write between our read and write is normal)."""
    resource = ctx.api.resource(api_version, kind)
    namespace = ctx.namespace if resource.namespaced else None

    async def attempt() -> Obj:
        current = await ctx.api.get(resource, name, namespace, subresource)
        mutate(current)
        return await ctx.api.update(resource, current, namespace, subresource)

    return await retry_on_conflict(attempt, attempts)
