"""Constrained impersonation (KEP-5284, gate ConstrainedImpersonation, alpha in 1.36): a requester
granted `impersonate:<mode>` on an identity and `impersonate-on:<mode>:<verb>` on a resource may
impersonate that identity for that verb only; plain `impersonate` keeps working everywhere. Each
check's requester is a fresh ServiceAccount; the impersonated identities get their rights through
a Role in the check's namespace."""

from __future__ import annotations

from typing import Any, Sequence

from conformance.checks import _conffeatures_support as s
from conformance.context import Context
from conformance.registry import feature

AREA = "auth"
KEP = "KEP-5284"
GATES = ("ConstrainedImpersonation",)
AUTHN = "authentication.k8s.io"


def user_info(names: list[str], verbs: list[str], resources: Sequence[str] = ("configmaps",)) -> list[dict[str, Any]]:
    return [s.rule(["impersonate:user-info"], [AUTHN], ["users"], names),
            s.rule([f"impersonate-on:user-info:{verb}" for verb in verbs], [""], list(resources))]


async def alice_reads_configmaps(ctx: Context, name: str) -> None:
    await s.grant_in_namespace(ctx, [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": name}],
                               [s.rule(["get", "list", "create"], [""], ["configmaps"])])


async def as_user(ctx: Context, token: str, user: str, method: str = "GET", body: Any = None,
                  path: str = "") -> tuple[int, Any]:
    path = path or f"/api/v1/namespaces/{ctx.namespace}/configmaps"
    return await s.as_token(ctx, token, method, ctx.api.config.server + path, headers={"Impersonate-User": user},
                            body=body)


async def settles(ctx: Context, probe: Any, what: str) -> None:
    """RBAC may take a moment to reach the authorizer: retry until the answers are the wanted ones."""
    async def ok() -> bool:
        await probe()
        return True
    await ctx.eventually(ok, timeout=20, interval=0.2, what=what)


@feature("[Feature:ConstrainedImpersonation] impersonate:user-info plus impersonate-on for list lets a caller "
         "list as the user, and nothing else", area=AREA, kep=KEP, gates=GATES)
async def constrained_user_info(ctx: Context) -> None:
    alice = f"{ctx.namespace}-alice"
    await alice_reads_configmaps(ctx, alice)
    _, token = await s.service_account(ctx, user_info([alice], ["list"]))
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "as-alice"}}

    async def probe() -> None:
        listed, _ = await as_user(ctx, token, alice)
        created, body = await as_user(ctx, token, alice, "POST", cm)
        assert (listed, created) == (200, 403), f"list as alice {listed}, create as alice {created}: {body}"
    await settles(ctx, probe, "list allowed and create refused when impersonating")


@feature("[Feature:ConstrainedImpersonation] impersonate:user-info is bounded by resourceNames",
         area=AREA, kep=KEP, gates=GATES)
async def constrained_names(ctx: Context) -> None:
    alice, bob = f"{ctx.namespace}-alice", f"{ctx.namespace}-bob"
    await alice_reads_configmaps(ctx, alice)
    await alice_reads_configmaps(ctx, bob)
    _, token = await s.service_account(ctx, user_info([alice], ["list"]))

    async def probe() -> None:
        as_alice, _ = await as_user(ctx, token, alice)
        as_bob, body = await as_user(ctx, token, bob)
        assert (as_alice, as_bob) == (200, 403), f"as alice {as_alice}, as bob {as_bob}: {body}"
        assert "impersonate" in str(body), f"the refusal should be about impersonation: {body}"
    await settles(ctx, probe, "only the named user to be impersonable")


@feature("[Feature:ConstrainedImpersonation] without impersonate-on for the request, impersonate:user-info "
         "alone does not let the caller act", area=AREA, kep=KEP, gates=GATES)
async def constrained_needs_impersonate_on(ctx: Context) -> None:
    alice = f"{ctx.namespace}-alice"
    await alice_reads_configmaps(ctx, alice)
    _, token = await s.service_account(ctx, [s.rule(["impersonate:user-info"], [AUTHN], ["users"], [alice])],
                                       namespaced_rules=[s.rule(["list"], [""], ["configmaps"])])

    async def probe() -> None:
        mine, _ = await s.as_token(ctx, token, "GET",
                                   ctx.api.config.server + f"/api/v1/namespaces/{ctx.namespace}/configmaps")
        impersonated, body = await as_user(ctx, token, alice)
        assert (mine, impersonated) == (200, 403), f"own list {mine}, impersonated list {impersonated}: {body}"
    await settles(ctx, probe, "impersonation to be refused without impersonate-on")


@feature("[Feature:ConstrainedImpersonation] the legacy impersonate verb still allows any request as the user",
         area=AREA, kep=KEP, gates=GATES)
async def legacy_impersonate(ctx: Context) -> None:
    alice = f"{ctx.namespace}-alice"
    await alice_reads_configmaps(ctx, alice)
    _, token = await s.service_account(ctx, [s.rule(["impersonate"], [""], ["users"], [alice])])
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "by-legacy"}}

    async def probe() -> None:
        created, body = await as_user(ctx, token, alice, "POST", cm)
        assert created in (201, 409), f"create as alice through legacy impersonation: {created} {body}"
    await settles(ctx, probe, "legacy impersonation to allow a create")


@feature("[Feature:ConstrainedImpersonation] a SelfSubjectReview made while impersonating reports the "
         "impersonated user", area=AREA, kep=KEP, gates=GATES)
async def impersonated_identity(ctx: Context) -> None:
    alice = f"{ctx.namespace}-alice"
    _, token = await s.service_account(ctx, [
        s.rule(["impersonate:user-info"], [AUTHN], ["users"], [alice]),
        s.rule(["impersonate-on:user-info:create"], [AUTHN], ["selfsubjectreviews"])])
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}

    async def probe() -> None:
        status, body = await as_user(ctx, token, alice, "POST", review,
                                     path="/apis/authentication.k8s.io/v1/selfsubjectreviews")
        assert status == 201, f"SelfSubjectReview as alice: {status} {body}"
        info = body["status"]["userInfo"]
        assert info.get("username") == alice and "system:authenticated" in info.get("groups", []), info
    await settles(ctx, probe, "a SelfSubjectReview as the impersonated user")


@feature("[Feature:ConstrainedImpersonation] impersonate:serviceaccount lets a caller act as that service "
         "account for the granted verb", area=AREA, kep=KEP, gates=GATES)
async def constrained_service_account(ctx: Context) -> None:
    target, _ = await s.service_account(ctx, [], namespaced_rules=[s.rule(["list"], [""], ["configmaps"])])
    target_name = target.rsplit(":", 1)[1]
    _, token = await s.service_account(ctx, [
        s.rule(["impersonate:serviceaccount"], [AUTHN], ["serviceaccounts"], [target_name]),
        s.rule(["impersonate-on:serviceaccount:list"], [""], ["configmaps"])])

    async def probe() -> None:
        listed, body = await as_user(ctx, token, target)
        assert listed == 200, f"list as {target}: {listed} {body}"
        created, body = await as_user(ctx, token, target, "POST",
                                      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
        assert created == 403, f"create as {target} was not granted: {created} {body}"
    await settles(ctx, probe, "service-account impersonation for list only")
