"""The webhook-configuration behaviours of upstream's test/e2e/apimachinery/webhook.go that need no
webhook server: discovery of the two configuration kinds, matchConditions stored and updated, and
an invalid matchConditions CEL expression refused at create with "compilation failed". (The tests
that call a webhook need an agnhost webhook pod serving TLS, which a hollow node cannot run.)"""

from __future__ import annotations

from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import in_discovery, refused
from conformance.context import Context, Obj
from conformance.registry import conformance

GROUP = "admissionregistration.k8s.io"
MUTATING = (f"{GROUP}/v1", "MutatingWebhookConfiguration")
VALIDATING = (f"{GROUP}/v1", "ValidatingWebhookConfiguration")


def _configuration(kind: tuple[str, str], name: str, conditions: list[Obj]) -> Obj:
    webhook: Obj = {"name": "e2e.webhook.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                    "failurePolicy": "Ignore", "timeoutSeconds": 1, "matchConditions": conditions,
                    "clientConfig": {"url": "https://127.0.0.1:1/never-called"},
                    # Matches nothing anyone creates: the configuration is never called.
                    "rules": [{"operations": ["CREATE"], "apiGroups": ["e2e.example.com"], "apiVersions": ["v1"],
                               "resources": ["nothings"]}]}
    if kind == MUTATING:
        webhook["reinvocationPolicy"] = "Never"
    return {"apiVersion": kind[0], "kind": kind[1], "metadata": {"name": name}, "webhooks": [webhook]}


@conformance("[sig-api-machinery] AdmissionWebhook [Privileged:ClusterAdmin] should include webhook resources in "
             "discovery documents [Conformance]", area="api-machinery")
async def webhook_discovery(ctx: Context) -> None:
    await in_discovery(ctx, GROUP, "v1", "mutatingwebhookconfigurations", "validatingwebhookconfigurations")


async def _match_conditions_round_trip(ctx: Context, kind: tuple[str, str]) -> None:
    name = f"e2e-match-conditions-{ctx.namespace}"
    first = [{"name": "exclude-leases", "expression": "!(request.resource.group == 'coordination.k8s.io')"}]
    created = await ctx.create(_configuration(kind, name, first))
    assert created["webhooks"][0]["matchConditions"] == first, f"matchConditions were not stored: {created['webhooks']}"
    second = [*first, {"name": "exclude-kubelet", "expression": "!('system:nodes' in request.userInfo.groups)"}]

    async def update() -> Obj:
        current = await ctx.get(*kind, name)
        current["webhooks"][0]["matchConditions"] = second
        return await ctx.update(current)
    await retry_on_conflict(update)
    read = await ctx.get(*kind, name)
    assert read["webhooks"][0]["matchConditions"] == second, f"the updated matchConditions read {read['webhooks']}"


@conformance("[sig-api-machinery] AdmissionWebhook [Privileged:ClusterAdmin] should be able to create and update "
             "mutating webhook configurations with match conditions [Conformance]", area="api-machinery")
async def mutating_match_conditions(ctx: Context) -> None:
    await _match_conditions_round_trip(ctx, MUTATING)


@conformance("[sig-api-machinery] AdmissionWebhook [Privileged:ClusterAdmin] should be able to create and update "
             "validating webhook configurations with match conditions [Conformance]", area="api-machinery")
async def validating_match_conditions(ctx: Context) -> None:
    await _match_conditions_round_trip(ctx, VALIDATING)


async def _invalid_match_condition(ctx: Context, kind: tuple[str, str]) -> None:
    bad = [{"name": "invalid-expression-1", "expression": "... [] bad expression"}]
    err = await refused(ctx.create(_configuration(kind, f"e2e-invalid-{ctx.namespace}", bad)), 422, "Invalid",
                        f"a {kind[1]} with an invalid matchConditions expression")
    assert "compilation failed" in err.message, f"the refusal does not say compilation failed: {err.message}"


@conformance("[sig-api-machinery] AdmissionWebhook [Privileged:ClusterAdmin] should reject mutating webhook "
             "configurations with invalid match conditions [Conformance]", area="api-machinery")
async def mutating_invalid_match_conditions(ctx: Context) -> None:
    await _invalid_match_condition(ctx, MUTATING)


@conformance("[sig-api-machinery] AdmissionWebhook [Privileged:ClusterAdmin] should reject validating webhook "
             "configurations with invalid match conditions [Conformance]", area="api-machinery")
async def validating_invalid_match_conditions(ctx: Context) -> None:
    await _invalid_match_condition(ctx, VALIDATING)
