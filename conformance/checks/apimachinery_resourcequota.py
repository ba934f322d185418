"""ResourceQuota behaviours of upstream's test/e2e/apimachinery/resource_quota.go: status computed
promptly, object counts captured and released for each kind, pod compute usage and admission,
scopes (BestEffort, Terminating), and the API's own update, patch, status and collection operations."""

from __future__ import annotations

import re
from decimal import Decimal

from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import PAUSE, gone, pod, refused
from conformance.context import Context, Obj
from conformance.registry import conformance

QUOTAS = ("v1", "ResourceQuota")
_SUFFIX = {"": 1, "m": Decimal("0.001"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(text: str | int) -> Decimal:
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", str(text))
    assert match and match.group(2) in _SUFFIX, f"not a quantity this check reads: {text!r}"
    return Decimal(match.group(1)) * _SUFFIX[match.group(2)]


def _quota(name: str, hard: dict[str, str], scopes: list[str] | None = None, labels: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"hard": hard}
    if scopes:
        spec["scopes"] = scopes
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec}


async def wait_used(ctx: Context, name: str, used: dict[str, str | int], what: str) -> Obj:
    """Poll until the quota's status.hard equals its spec.hard and status.used has these values."""
    async def reached() -> Obj:
        quota = await ctx.get(*QUOTAS, name)
        status = quota.get("status") or {}
        hard = {k: quantity(v) for k, v in quota["spec"]["hard"].items()}
        assert {k: quantity(v) for k, v in (status.get("hard") or {}).items()} == hard, \
            f"status.hard {status.get('hard')} differs from spec.hard {quota['spec']['hard']}"
        got = status.get("used") or {}
        wrong = {k: got.get(k) for k, v in used.items() if k not in got or quantity(got[k]) != quantity(v)}
        assert not wrong, f"status.used has {wrong}, expected {({k: used[k] for k in wrong})}"
        return quota
    return await ctx.eventually(reached, what=what)


async def _root_ca_counted(ctx: Context) -> int:
    """ConfigMaps already in a fresh namespace (kube-root-ca.crt, once its publisher wrote it), which
    the quota counts too."""
    await ctx.eventually(lambda: ctx.get("v1", "ConfigMap", "kube-root-ca.crt"), what="kube-root-ca.crt")
    return len((await ctx.list("v1", "ConfigMap"))["items"])


@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and ensure its status is promptly "
             "calculated. [Conformance]", area="api-machinery")
async def quota_promptly(ctx: Context) -> None:
    await ctx.create(_quota("test-quota", {"pods": "5", "services": "10", "resourcequotas": "1",
                                           "cpu": "1", "memory": "500Mi"}))
    await wait_used(ctx, "test-quota", {"pods": 0, "services": 0, "resourcequotas": 1, "cpu": 0, "memory": 0},
                    "the quota's status to be calculated")


async def _capture_object(ctx: Context, resource_name: str, make: Obj, *, kind: str) -> None:
    """Create a quota counting `resource_name`, create `make`, see it counted, delete it, see it released."""
    base = await _root_ca_counted(ctx) if resource_name == "configmaps" else 0
    await ctx.create(_quota("test-quota", {resource_name: "10", "resourcequotas": "1"}))
    await wait_used(ctx, "test-quota", {resource_name: base}, "the quota's status to be calculated")
    created = await ctx.create(make)
    await wait_used(ctx, "test-quota", {resource_name: base + 1}, f"the {kind} to be counted")
    await ctx.delete(make["apiVersion"], kind, created["metadata"]["name"])
    await wait_used(ctx, "test-quota", {resource_name: base}, f"the deleted {kind} to be released")


@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a configMap. "
             "[Conformance]", area="api-machinery")
async def quota_configmap(ctx: Context) -> None:
    await _capture_object(ctx, "configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "test-cm"},
                                              "data": {"a": "b"}}, kind="ConfigMap")


@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a secret. "
             "[Conformance]", area="api-machinery")
async def quota_secret(ctx: Context) -> None:
    await _capture_object(ctx, "secrets", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "test-secret"},
                                           "data": {"a": "Yg=="}}, kind="Secret")


@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a service. "
             "[Conformance]", area="api-machinery")
async def quota_service(ctx: Context) -> None:
    await ctx.create(_quota("test-quota", {"services": "10", "services.nodeports": "1",
                                           "services.loadbalancers": "1", "resourcequotas": "1"}))
    await wait_used(ctx, "test-quota", {"services": 0, "services.nodeports": 0}, "the quota's status")
    await ctx.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "test-service"},
                      "spec": {"ports": [{"port": 80}]}})
    await ctx.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "test-service-np"},
                      "spec": {"type": "NodePort", "ports": [{"port": 80}]}})
    await wait_used(ctx, "test-quota", {"services": 2, "services.nodeports": 1}, "both services to be counted")
    # A second NodePort service would exceed services.nodeports.
    await refused(ctx.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "test-service-np2"},
                              "spec": {"type": "NodePort", "ports": [{"port": 80}]}}), 403, "Forbidden",
                  "a NodePort service over the quota")
    await ctx.delete("v1", "Service", "test-service")
    await ctx.delete("v1", "Service", "test-service-np")
    await wait_used(ctx, "test-quota", {"services": 0, "services.nodeports": 0}, "the services to be released")


def _rs(name: str, replicas: int = 0) -> Obj:
    template = {"metadata": {"labels": {"name": name}}, "spec": {"containers": [{"name": "c", "image": PAUSE}]}}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"name": name}}, "template": template}}


@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a replica set. "
             "[Conformance]", area="api-machinery")
async def quota_replicaset(ctx: Context) -> None:
    await _capture_object(ctx, "count/replicasets.apps", _rs("test-rs"), kind="ReplicaSet")


@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a replication "
             "controller. [Conformance]", area="api-machinery")
async def quota_replicationcontroller(ctx: Context) -> None:
    template = {"metadata": {"labels": {"name": "test-rc"}}, "spec": {"containers": [{"name": "c", "image": PAUSE}]}}
    await _capture_object(ctx, "replicationcontrollers", {
        "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "test-rc"},
        "spec": {"replicas": 0, "selector": {"name": "test-rc"}, "template": template}}, kind="ReplicationController")


def _pod_with(name: str, requests: dict[str, str], limits: dict[str, str] | None = None, **spec: object) -> Obj:
    manifest = pod(name, **spec)  # type: ignore[arg-type]
    manifest["spec"]["containers"][0]["resources"] = {"requests": requests, "limits": limits or requests}
    return manifest


@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a pod. "
             "[Conformance]", area="api-machinery")
async def quota_pod(ctx: Context) -> None:
    await ctx.create(_quota("test-quota", {"pods": "2", "requests.cpu": "1", "requests.memory": "500Mi",
                                           "requests.ephemeral-storage": "50Gi", "resourcequotas": "1"}))
    await wait_used(ctx, "test-quota", {"pods": 0, "requests.cpu": 0, "requests.memory": 0}, "the quota's status")
    requests = {"cpu": "500m", "memory": "252Mi", "ephemeral-storage": "30Gi"}
    await ctx.create(_pod_with("test-pod", requests))
    await wait_used(ctx, "test-quota", {"pods": 1, "requests.cpu": "500m", "requests.memory": "252Mi",
                                        "requests.ephemeral-storage": "30Gi"}, "the pod's requests to be counted")
    await refused(ctx.create(_pod_with("fail-pod", {"cpu": "600m", "memory": "100Mi"})), 403, "Forbidden",
                  "a pod whose requests exceed what is left of the quota")

    async def resize() -> Obj:
        current = await ctx.get("v1", "Pod", "test-pod")
        current["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "100m"
        return await ctx.update(current)
    await refused(retry_on_conflict(resize), 422, "Invalid", "changing a pod's resource requests through update")
    await ctx.delete("v1", "Pod", "test-pod", grace_period_seconds=0)
    await wait_used(ctx, "test-quota", {"pods": 0, "requests.cpu": 0, "requests.memory": 0},
                    "the deleted pod's usage to be released")


@conformance("[sig-api-machinery] ResourceQuota should verify ResourceQuota with best effort scope. [Conformance]",
             area="api-machinery")
async def quota_best_effort(ctx: Context) -> None:
    await ctx.create(_quota("quota-besteffort", {"pods": "5"}, ["BestEffort"]))
    await ctx.create(_quota("quota-not-besteffort", {"pods": "5"}, ["NotBestEffort"]))
    await wait_used(ctx, "quota-besteffort", {"pods": 0}, "the BestEffort quota's status")
    await wait_used(ctx, "quota-not-besteffort", {"pods": 0}, "the NotBestEffort quota's status")
    await ctx.create(pod("best-effort"))
    await wait_used(ctx, "quota-besteffort", {"pods": 1}, "a best-effort pod in the BestEffort quota")
    await wait_used(ctx, "quota-not-besteffort", {"pods": 0}, "no best-effort pod in the NotBestEffort quota")
    await ctx.delete("v1", "Pod", "best-effort", grace_period_seconds=0)
    await wait_used(ctx, "quota-besteffort", {"pods": 0}, "the best-effort pod to be released")
    await ctx.create(_pod_with("not-best-effort", {"cpu": "500m", "memory": "200Mi"}))
    await wait_used(ctx, "quota-not-besteffort", {"pods": 1}, "a pod with resources in the NotBestEffort quota")
    await wait_used(ctx, "quota-besteffort", {"pods": 0}, "no pod with resources in the BestEffort quota")
    await ctx.delete("v1", "Pod", "not-best-effort", grace_period_seconds=0)
    await wait_used(ctx, "quota-not-besteffort", {"pods": 0}, "the pod with resources to be released")


@conformance("[sig-api-machinery] ResourceQuota should verify ResourceQuota with terminating scopes. [Conformance]",
             area="api-machinery")
async def quota_terminating(ctx: Context) -> None:
    hard = {"pods": "5", "requests.cpu": "1", "requests.memory": "500Mi", "limits.cpu": "2", "limits.memory": "1Gi"}
    await ctx.create(_quota("quota-terminating", hard, ["Terminating"]))
    await ctx.create(_quota("quota-not-terminating", hard, ["NotTerminating"]))
    zero = {"pods": 0, "requests.cpu": 0, "requests.memory": 0}
    await wait_used(ctx, "quota-terminating", zero, "the Terminating quota's status")
    await wait_used(ctx, "quota-not-terminating", zero, "the NotTerminating quota's status")
    requests, limits = {"cpu": "500m", "memory": "200Mi"}, {"cpu": "1", "memory": "400Mi"}
    await ctx.create(_pod_with("long-running", requests, limits))
    counted = {"pods": 1, "requests.cpu": "500m", "requests.memory": "200Mi"}
    await wait_used(ctx, "quota-not-terminating", counted, "a long-running pod in the NotTerminating quota")
    await wait_used(ctx, "quota-terminating", zero, "no long-running pod in the Terminating quota")
    await ctx.delete("v1", "Pod", "long-running", grace_period_seconds=0)
    await wait_used(ctx, "quota-not-terminating", zero, "the long-running pod to be released")
    await ctx.create(_pod_with("terminating", requests, limits, activeDeadlineSeconds=3600))
    await wait_used(ctx, "quota-terminating", counted, "a pod with activeDeadlineSeconds in the Terminating quota")
    await wait_used(ctx, "quota-not-terminating", zero, "no such pod in the NotTerminating quota")
    await ctx.delete("v1", "Pod", "terminating", grace_period_seconds=0)
    await wait_used(ctx, "quota-terminating", zero, "the terminating pod to be released")


@conformance("[sig-api-machinery] ResourceQuota should be able to update and delete ResourceQuota. [Conformance]",
             area="api-machinery")
async def quota_update_delete(ctx: Context) -> None:
    await ctx.create(_quota("test-quota", {"cpu": "1", "memory": "500Mi"}))

    async def update() -> Obj:
        current = await ctx.get(*QUOTAS, "test-quota")
        current["spec"]["hard"] = {"cpu": "2", "memory": "1Gi"}
        return await ctx.update(current)
    await retry_on_conflict(update)
    read = await ctx.get(*QUOTAS, "test-quota")
    assert quantity(read["spec"]["hard"]["cpu"]) == 2 and quantity(read["spec"]["hard"]["memory"]) == 2**30, \
        f"the update did not show: {read['spec']}"
    await ctx.delete(*QUOTAS, "test-quota")
    await gone(ctx, *QUOTAS, "test-quota")


@conformance("[sig-api-machinery] ResourceQuota should manage the lifecycle of a ResourceQuota [Conformance]",
             area="api-machinery")
async def quota_lifecycle(ctx: Context) -> None:
    label = {"e2e-rq-label": ctx.namespace}
    await ctx.create(_quota("e2e-rq", {"cpu": "1", "memory": "500Mi"}, labels=label))
    everywhere = await ctx.api.list(ctx.api.resource(*QUOTAS), None, label_selector=f"e2e-rq-label={ctx.namespace}")
    assert [q["metadata"]["name"] for q in everywhere["items"]] == ["e2e-rq"], f"listing found {everywhere['items']}"
    patched = await ctx.patch(*QUOTAS, "e2e-rq", {"metadata": {"labels": {"rq": "patched"}},
                                                  "spec": {"hard": {"cpu": "2", "memory": "1Gi"}}})
    assert patched["metadata"]["labels"]["rq"] == "patched" and quantity(patched["spec"]["hard"]["cpu"]) == 2
    await ctx.api.delete_collection(ctx.api.resource(*QUOTAS), ctx.namespace,
                                    label_selector=f"e2e-rq-label={ctx.namespace}")
    await gone(ctx, *QUOTAS, "e2e-rq")


@conformance("[sig-api-machinery] ResourceQuota should apply changes to a resourcequota status [Conformance]",
             area="api-machinery")
async def quota_status(ctx: Context) -> None:
    # No resource the quota names is ever used here, so its controller keeps used at zero while
    # the check writes hard through /status; a status write must never touch the spec.
    await ctx.create(_quota("e2e-rq-status", {"cpu": "500m", "memory": "500Mi"}))

    async def update_status() -> Obj:
        current = await ctx.get(*QUOTAS, "e2e-rq-status")
        current["status"] = {"hard": {"cpu": "500m", "memory": "500Mi"}, "used": {"cpu": "0", "memory": "0"}}
        return await ctx.update(current, subresource="status")
    updated = await retry_on_conflict(update_status)
    assert quantity(updated["status"]["hard"]["cpu"]) == Decimal("0.5"), f"the status update did not show: {updated}"
    patched = await ctx.patch(*QUOTAS, "e2e-rq-status", {"spec": {"hard": {"cpu": "1", "memory": "1Gi"}}})
    assert quantity(patched["spec"]["hard"]["cpu"]) == 1
    await ctx.patch(*QUOTAS, "e2e-rq-status", {"status": {"hard": {"cpu": "1", "memory": "1Gi"}}}, subresource="status")
    await wait_used(ctx, "e2e-rq-status", {"cpu": 0, "memory": 0}, "status.hard to equal the patched spec")
    status = await ctx.get(*QUOTAS, "e2e-rq-status", subresource="status")
    assert quantity(status["status"]["hard"]["memory"]) == 2**30
    repatched = await ctx.patch(*QUOTAS, "e2e-rq-status", {"spec": {"hard": {"cpu": "5"}},
                                                           "status": {"hard": {"cpu": "1", "memory": "1Gi"}}},
                                subresource="status")
    assert quantity(repatched["spec"]["hard"]["cpu"]) == 1, f"a /status patch changed the spec: {repatched['spec']}"
