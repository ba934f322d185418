"""CEL admission policies: MutatingAdmissionPolicy (KEP-3962, GA in 1.36) and
ValidatingAdmissionPolicy (KEP-3488, GA since 1.30). Every policy is bound to the check's own
namespace only, so policies of parallel checks never meet. Policies take effect when the API
server's policy cache has them, so each check probes with fresh objects until the policy acts."""

from __future__ import annotations

from typing import Any

from client import errors
from conformance.checks import _conffeatures_support as s
from conformance.context import Context
from conformance.registry import feature

AREA = "api-machinery"
ADMISSION_V1 = "admissionregistration.k8s.io/v1"
MAP = ("MutatingAdmissionPolicy",)
CONFIGMAP_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                  "resources": ["configmaps"]}


def only_here(ctx: Context) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ctx.namespace}}}


async def mutating(ctx: Context, mutations: list[dict[str, Any]], *, param_kind: dict[str, str] | None = None,
                   param_ref: dict[str, Any] | None = None, **spec: Any) -> str:
    name = f"{ctx.namespace}-{ctx.name('map')}"
    body: dict[str, Any] = {"matchConstraints": {"resourceRules": [CONFIGMAP_RULE]}, "mutations": mutations,
                            "reinvocationPolicy": "Never", **spec}
    if param_kind:
        body["paramKind"] = param_kind
    await ctx.create({"apiVersion": ADMISSION_V1, "kind": "MutatingAdmissionPolicy", "metadata": {"name": name},
                      "spec": body})
    binding: dict[str, Any] = {"policyName": name, "matchResources": only_here(ctx)}
    if param_ref:
        binding["paramRef"] = param_ref
    await ctx.create({"apiVersion": ADMISSION_V1, "kind": "MutatingAdmissionPolicyBinding",
                      "metadata": {"name": name}, "spec": binding})
    return name


async def validating(ctx: Context, validations: list[dict[str, Any]], *, actions: tuple[str, ...] = ("Deny",),
                     param_kind: dict[str, str] | None = None, param_ref: dict[str, Any] | None = None,
                     **spec: Any) -> str:
    name = f"{ctx.namespace}-{ctx.name('vap')}"
    body: dict[str, Any] = {"matchConstraints": {"resourceRules": [CONFIGMAP_RULE]}, "validations": validations,
                            **spec}
    if param_kind:
        body["paramKind"] = param_kind
    await ctx.create({"apiVersion": ADMISSION_V1, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
                      "spec": body})
    binding: dict[str, Any] = {"policyName": name, "validationActions": list(actions),
                               "matchResources": only_here(ctx)}
    if param_ref:
        binding["paramRef"] = param_ref
    await ctx.create({"apiVersion": ADMISSION_V1, "kind": "ValidatingAdmissionPolicyBinding",
                      "metadata": {"name": name}, "spec": binding})
    return name


def configmap(name: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {"k": "v"}}


async def first_mutated(ctx: Context, test: Any, **options: Any) -> dict[str, Any]:
    """Create fresh ConfigMaps until `test(created)` holds (the policy is in force); the one that passed."""
    async def probe() -> dict[str, Any] | None:
        created = await ctx.create(configmap(ctx.name("cm"), **options))
        return created if test(created) else None
    return await ctx.eventually(probe, what="the policy to act on a new ConfigMap")


async def first_refused(ctx: Context, **options: Any) -> errors.APIError:
    """Create fresh ConfigMaps until one is refused; that refusal."""
    async def probe() -> errors.APIError | None:
        try:
            await ctx.create(configmap(ctx.name("cm"), **options))
        except errors.APIError as err:
            if err.code in (400, 401, 403, 413, 422):
                return err
            raise
        return None
    return await ctx.eventually(probe, what="the policy to refuse a ConfigMap")


def labels_of(obj: dict[str, Any]) -> dict[str, str]:
    return obj["metadata"].get("labels") or {}


# MutatingAdmissionPolicy --------------------------------------------------------------------------

@feature("[Feature:MutatingAdmissionPolicy] an ApplyConfiguration mutation sets a label on create",
         area=AREA, kep="KEP-3962", gates=MAP)
async def map_apply_configuration(ctx: Context) -> None:
    await mutating(ctx, [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": 'Object{metadata: Object.metadata{labels: {"mutated": "yes"}}}'}}])
    created = await first_mutated(ctx, lambda o: labels_of(o).get("mutated") == "yes")
    stored = await ctx.get("v1", "ConfigMap", created["metadata"]["name"])
    assert labels_of(stored).get("mutated") == "yes", "the mutation must be stored, not only returned"


@feature("[Feature:MutatingAdmissionPolicy] a JSONPatch mutation adds an annotation with an escaped key",
         area=AREA, kep="KEP-3962", gates=MAP)
async def map_json_patch(ctx: Context) -> None:
    await mutating(ctx, [{"patchType": "JSONPatch", "jsonPatch": {"expression": (
        '[JSONPatch{op: "add", path: "/metadata/annotations", value: {}},'
        ' JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/by"),'
        ' value: "policy"}]')}}])
    created = await first_mutated(ctx, lambda o: (o["metadata"].get("annotations") or {}).get("example.com/by"))
    assert created["metadata"]["annotations"]["example.com/by"] == "policy"


@feature("[Feature:MutatingAdmissionPolicy] a false matchCondition skips the mutation", area=AREA,
         kep="KEP-3962", gates=MAP)
async def map_match_conditions(ctx: Context) -> None:
    await mutating(ctx, [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": 'Object{metadata: Object.metadata{labels: {"mutated": "yes"}}}'}}],
        matchConditions=[{"name": "opted-in", "expression": '"opt-in" in object.data'}])
    await first_mutated(ctx, lambda o: labels_of(o).get("mutated") == "yes", data={"opt-in": "1"})
    skipped = await ctx.create(configmap(ctx.name("cm")))
    assert "mutated" not in labels_of(skipped), "a ConfigMap failing the matchCondition was mutated"


@feature("[Feature:MutatingAdmissionPolicy] a mutation reads its value from the binding's param object",
         area=AREA, kep="KEP-3962", gates=MAP)
async def map_params(ctx: Context) -> None:
    params = ctx.name("params")
    await ctx.create(configmap(params, data={"team": "blue"}))
    await mutating(ctx, [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": 'Object{metadata: Object.metadata{labels: {"team": params.data.team}}}'}}],
        param_kind={"apiVersion": "v1", "kind": "ConfigMap"},
        param_ref={"name": params, "namespace": ctx.namespace, "parameterNotFoundAction": "Deny"},
        matchConditions=[{"name": "not-params", "expression": f'object.metadata.name != "{params}"'}])
    created = await first_mutated(ctx, lambda o: labels_of(o).get("team") == "blue")
    assert labels_of(created)["team"] == "blue"


@feature("[Feature:MutatingAdmissionPolicy] mutations run in order: a later one sees an earlier one's result",
         area=AREA, kep="KEP-3962", gates=MAP)
async def map_mutations_in_order(ctx: Context) -> None:
    await mutating(ctx, [
        {"patchType": "ApplyConfiguration", "applyConfiguration": {
            "expression": 'Object{metadata: Object.metadata{labels: {"step": "one"}}}'}},
        {"patchType": "ApplyConfiguration", "applyConfiguration": {
            "expression": 'Object{data: {"seen": object.metadata.labels["step"]}}'}}])
    created = await first_mutated(ctx, lambda o: (o.get("data") or {}).get("seen"))
    assert created["data"]["seen"] == "one", f"the second mutation saw {created['data']['seen']!r}"


@feature("[Feature:MutatingAdmissionPolicy] reinvocationPolicy is required", area=AREA, kep="KEP-3962", gates=MAP)
async def map_reinvocation_required(ctx: Context) -> None:
    body = {"apiVersion": ADMISSION_V1, "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": f"{ctx.namespace}-bad"},
            "spec": {"matchConstraints": {"resourceRules": [CONFIGMAP_RULE]}, "mutations": [
                {"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}]}}
    await s.refused(ctx.create(body), 422, "Invalid", contains="reinvocationPolicy")


@feature("[Feature:MutatingAdmissionPolicy] a variable is usable in the mutation as variables.<name>",
         area=AREA, kep="KEP-3962", gates=MAP)
async def map_variables(ctx: Context) -> None:
    await mutating(ctx, [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": 'Object{metadata: Object.metadata{labels: {"size": variables.size}}}'}}],
        variables=[{"name": "size", "expression": 'string(size(object.data))'}])
    created = await first_mutated(ctx, lambda o: "size" in labels_of(o), data={"a": "1", "b": "2"})
    assert labels_of(created)["size"] == "2", labels_of(created)


# ValidatingAdmissionPolicy ------------------------------------------------------------------------

@feature("[Feature:ValidatingAdmissionPolicy] a failed validation denies the request with its message",
         area=AREA, kep="KEP-3488")
async def vap_denies(ctx: Context) -> None:
    name = await validating(ctx, [{"expression": '"owner" in object.data', "message": "owner is required"}])
    err = await first_refused(ctx)
    assert err.code == 422 and err.reason == "Invalid", f"expected 422 Invalid, got {err}"
    assert f"ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request: owner is required" \
        in err.message, err.message
    await ctx.create(configmap(ctx.name("ok"), data={"owner": "me"}))


@feature("[Feature:ValidatingAdmissionPolicy] messageExpression words the denial and reason sets the code",
         area=AREA, kep="KEP-3488")
async def vap_message_expression(ctx: Context) -> None:
    await validating(ctx, [{"expression": 'size(object.data) <= 1', "reason": "Forbidden",
                            "messageExpression": '"too many keys: " + string(size(object.data))'}])
    err = await first_refused(ctx, data={"a": "1", "b": "2", "c": "3"})
    assert err.code == 403 and err.reason == "Forbidden", f"reason Forbidden gives 403: {err}"
    assert "too many keys: 3" in err.message, err.message


@feature("[Feature:ValidatingAdmissionPolicy] a missing param object with parameterNotFoundAction Deny denies",
         area=AREA, kep="KEP-3488")
async def vap_param_not_found(ctx: Context) -> None:
    await validating(ctx, [{"expression": "true"}], param_kind={"apiVersion": "v1", "kind": "ConfigMap"},
                     param_ref={"name": "absent", "namespace": ctx.namespace, "parameterNotFoundAction": "Deny"})
    err = await first_refused(ctx)
    assert "no params found" in err.message, err.message


@feature("[Feature:ValidatingAdmissionPolicy] the validation compares the object with the binding's params",
         area=AREA, kep="KEP-3488")
async def vap_params(ctx: Context) -> None:
    limits = ctx.name("limits")
    await ctx.create(configmap(limits, data={"max": "2"}))
    await validating(ctx, [{"expression": "size(object.data) <= int(params.data.max)", "message": "over the limit"}],
                     param_kind={"apiVersion": "v1", "kind": "ConfigMap"},
                     param_ref={"name": limits, "namespace": ctx.namespace, "parameterNotFoundAction": "Deny"},
                     matchConditions=[{"name": "not-params", "expression": f'object.metadata.name != "{limits}"'}])
    err = await first_refused(ctx, data={"a": "1", "b": "2", "c": "3"})
    assert "over the limit" in err.message, err.message
    await ctx.create(configmap(ctx.name("ok"), data={"a": "1", "b": "2"}))


@feature("[Feature:ValidatingAdmissionPolicy] an Audit-only binding does not deny", area=AREA, kep="KEP-3488")
async def vap_audit_only(ctx: Context) -> None:
    # A Deny policy proves the cache has this namespace's policies; the Audit one must then let through.
    await validating(ctx, [{"expression": "false", "message": "audited"}], actions=("Audit",))
    await validating(ctx, [{"expression": '!("block" in object.data)', "message": "blocked"}])
    await first_refused(ctx, data={"block": "1"})
    await ctx.create(configmap(ctx.name("ok")))


@feature("[Feature:ValidatingAdmissionPolicy] type checking reports a reference to a field the kind does not "
         "have in the policy status", area=AREA, kep="KEP-3488")
async def vap_type_checking(ctx: Context) -> None:
    name = await validating(ctx, [{"expression": "object.spec.replicas > 1"}])

    async def warned() -> list[dict[str, Any]] | None:
        found = await ctx.get(ADMISSION_V1, "ValidatingAdmissionPolicy", name)
        return ((found.get("status") or {}).get("typeChecking") or {}).get("expressionWarnings")
    warnings = await ctx.eventually(warned, what="status.typeChecking.expressionWarnings")
    assert warnings[0].get("fieldRef") == "spec.validations[0].expression", warnings
    assert "spec" in warnings[0].get("warning", ""), warnings
