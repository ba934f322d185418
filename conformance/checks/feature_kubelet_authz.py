"""Fine-grained kubelet authorization (KEP-2862, gate KubeletFineGrainedAuthz, GA in 1.36): the
kubelet asks for `nodes/pods`, `nodes/healthz` and `nodes/configz` before falling back to
`nodes/proxy`. Checked on the kubelet's own endpoint (the node's address and kubeletEndpoint port)
with service-account tokens whose RBAC grants one subresource each; a cluster whose kubelets the
suite cannot reach skips."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from conformance.checks import _conffeatures_support as s
from conformance.context import Context
from conformance.registry import feature

AREA = "auth"
KEP = "KEP-2862"
GATES = ("KubeletFineGrainedAuthz",)


async def kubelet_url(ctx: Context) -> str:
    nodes = await s.schedulable_nodes(ctx)
    if not nodes:
        ctx.skip("no schedulable node")
    status = nodes[0].get("status") or {}
    address = next((a["address"] for a in status.get("addresses") or [] if a.get("type") == "InternalIP"), "")
    port = (((status.get("daemonEndpoints") or {}).get("kubeletEndpoint")) or {}).get("Port")
    if not address or not port:
        ctx.skip("the node reports no InternalIP or kubelet port")
    return f"https://{address}:{port}"


async def kubelet_get(ctx: Context, base: str, token: str, path: str) -> int:
    try:
        status, _ = await asyncio.wait_for(s.as_token(ctx, token, "GET", base + path, ssl=False), 10)
    except (aiohttp.ClientConnectionError, asyncio.TimeoutError) as err:
        ctx.skip(f"the kubelet endpoint {base} is not reachable from the suite: {err}")
    return status


async def subresource_user(ctx: Context, *subresources: str) -> str:
    _, token = await s.service_account(ctx, [s.rule(["get", "list"], [""], [f"nodes/{r}" for r in subresources])]
                                       if subresources else [])
    return token


async def expect(ctx: Context, base: str, token: str, wanted: dict[str, int]) -> None:
    """Every path answers its wanted status (RBAC may take a moment to reach the authorizer)."""
    async def probe() -> bool:
        got = {path: await kubelet_get(ctx, base, token, path) for path in wanted}
        assert got == wanted, f"the kubelet answered {got}, expected {wanted}"
        return True
    await ctx.eventually(probe, timeout=40, interval=0.5, what="the kubelet's authorization answers")


@feature("[Feature:KubeletFineGrainedAuthz] nodes/pods alone lets a caller read the kubelet's /pods, not "
         "/configz", area=AREA, kep=KEP, gates=GATES)
async def nodes_pods_only(ctx: Context) -> None:
    base = await kubelet_url(ctx)
    token = await subresource_user(ctx, "pods")
    await expect(ctx, base, token, {"/pods": 200, "/configz": 403})


@feature("[Feature:KubeletFineGrainedAuthz] nodes/healthz alone lets a caller read /healthz, not /pods",
         area=AREA, kep=KEP, gates=GATES)
async def nodes_healthz_only(ctx: Context) -> None:
    base = await kubelet_url(ctx)
    token = await subresource_user(ctx, "healthz")
    await expect(ctx, base, token, {"/healthz": 200, "/pods": 403})


@feature("[Feature:KubeletFineGrainedAuthz] nodes/proxy still covers /pods, /healthz and /configz",
         area=AREA, kep=KEP, gates=GATES)
async def nodes_proxy_fallback(ctx: Context) -> None:
    base = await kubelet_url(ctx)
    token = await subresource_user(ctx, "proxy")
    await expect(ctx, base, token, {"/pods": 200, "/healthz": 200, "/configz": 200})


@feature("[Feature:KubeletFineGrainedAuthz] a caller without node permissions is refused by the kubelet",
         area=AREA, kep=KEP, gates=GATES)
async def no_node_permissions(ctx: Context) -> None:
    base = await kubelet_url(ctx)
    token = await subresource_user(ctx)
    await expect(ctx, base, token, {"/pods": 403, "/healthz": 403})


@feature("[Feature:KubeletFineGrainedAuthz] system:kubelet-api-admin grants the fine-grained node subresources",
         area=AREA, kep=KEP, gates=GATES)
async def kubelet_api_admin_role(ctx: Context) -> None:
    role = await ctx.get("rbac.authorization.k8s.io/v1", "ClusterRole", "system:kubelet-api-admin")
    granted: set[str] = set()
    for item in role.get("rules") or []:
        if "" in (item.get("apiGroups") or []):
            granted |= set(item.get("resources") or [])
    missing = {"nodes/pods", "nodes/healthz", "nodes/configz", "nodes/proxy"} - granted
    assert not missing, f"system:kubelet-api-admin lacks {sorted(missing)}"
    user = f"{ctx.namespace}-kubelet-client"
    await ctx.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                      "metadata": {"name": user},
                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "system:kubelet-api-admin"},
                      "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": user}]})

    async def decided() -> bool:
        for subresource in ("pods", "healthz", "configz"):
            review = await ctx.create(sar("nodes", subresource, user=user))
            assert review["status"].get("allowed") is True, f"nodes/{subresource}: {review['status']}"
        other = await ctx.create(sar("nodes", "pods", user=f"{user}-not"))
        assert other["status"].get("allowed") is not True, "a user without the binding was allowed"
        return True
    await ctx.eventually(decided, what="SubjectAccessReviews for the bound user")


def sar(resource: str, subresource: str, *, user: str) -> dict[str, Any]:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": ["system:authenticated"], "resourceAttributes": {
                "verb": "get", "resource": resource, "subresource": subresource, "name": "some-node"}}}
