"""Validating/MutatingAdmissionPolicy and their bindings (admissionregistration.k8s.io/v1): defaults, validation;
and the webhook configurations' matchConditions.

Defaults are v1's: failurePolicy Fail, and in every MatchResources matchPolicy Equivalent, empty
namespace and object selectors, rule scope "*". Validation is upstream's
(pkg/apis/admissionregistration/validation): rules, selectors, match conditions, variables,
validations, audit annotations, mutations, binding actions, and every CEL expression compiled
in the environment admission will use, so a malformed expression is a 422 with cel-go's text
("compilation failed: ERROR: <input>:1:…"). Names ending ".static.k8s.io" are reserved for
manifest policies (KEP-5793). `apiserver/admitting.py` registers these strategies and reuses
`prepare_manifest` for policies loaded from files.
"""

from __future__ import annotations

import re
from typing import Any

from admission.policy import expressions, manifests
from apiserver import validation as v
from apiserver.errors import field_error
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj, Strategy

_FAILURE_POLICIES = ["Fail", "Ignore"]
_MATCH_POLICIES = ["Equivalent", "Exact"]
_OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
_MUTATING_OPERATIONS = ["*", "CONNECT", "CREATE", "UPDATE"]
_SCOPES = ["*", "Cluster", "Namespaced"]
_REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]
_ACTIONS = ["Audit", "Deny", "Warn"]
_PATCH_TYPES = ["ApplyConfiguration", "JSONPatch"]
_REINVOCATION = ["IfNeeded", "Never"]
_CEL_IDENT = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
_CEL_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                           "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                           "void", "while"})
_MAX_AUDIT_ANNOTATIONS = 20
_MAX_AUDIT_EXPRESSION = 5 * 1024


# -- defaults --------------------------------------------------------------------------------------

def default_match_resources(match: dict[str, Any] | None) -> None:
    if not isinstance(match, dict):
        return
    match.setdefault("matchPolicy", "Equivalent")
    if match.get("namespaceSelector") is None:
        match["namespaceSelector"] = {}
    if match.get("objectSelector") is None:
        match["objectSelector"] = {}
    for field in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(field) or []:
            if isinstance(rule, dict) and rule.get("scope") is None:
                rule["scope"] = "*"


def default_policy(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("failurePolicy") is None:
        spec["failurePolicy"] = "Fail"
    default_match_resources(spec.get("matchConstraints"))


def default_binding(obj: Obj) -> None:
    default_match_resources(obj.setdefault("spec", {}).get("matchResources"))


# -- shared checks ---------------------------------------------------------------------------------

def _too_many(field: str, count: int, limit: int) -> dict[str, str]:
    return field_error("FieldValueTooMany", field, f"Too many: {count}: must have at most {limit} items")


def _compile_cause(field: str, text: str, compiled: expressions.CompiledExpression) -> Causes:
    return [v.invalid(field, text, compiled.error)] if compiled.error else []


def _wildcard_alone(values: list[Any], field: str, what: str) -> Causes:
    if len(values) > 1 and "*" in values:
        return [v.invalid(field, values, f"if '*' is present, must not specify other {what}")]
    return []


def _resources(resources: list[str], field: str) -> Causes:
    causes: Causes = []
    if not resources:
        return [v.required(field)]
    with_wild_sub: set[str] = set()
    wild_res_subs: set[str] = set()
    double = single = plain = False
    for i, entry in enumerate(resources):
        if entry == "":
            causes.append(v.required(f"{field}[{i}]"))
            continue
        double |= entry == "*/*"
        single |= entry == "*"
        res, slash, sub = entry.partition("/")
        if not slash:
            plain = entry != "*"
            continue
        if res in with_wild_sub:
            causes.append(v.invalid(f"{field}[{i}]", entry, f"if '{res}/*' is present, must not specify {entry}"))
        if sub in wild_res_subs:
            causes.append(v.invalid(f"{field}[{i}]", entry, f"if '*/{sub}' is present, must not specify {entry}"))
        if sub == "*":
            with_wild_sub.add(res)
        if res == "*":
            wild_res_subs.add(sub)
    if len(resources) > 1 and double:
        causes.append(v.invalid(field, resources, "if '*/*' is present, must not specify other resources"))
    if single and plain:
        causes.append(v.invalid(field, resources, "if '*' is present, must not specify other resources without "
                                                  "subresources"))
    return causes


def _rule(rule: dict[str, Any], field: str, operations: list[str]) -> Causes:
    causes: Causes = []
    for i, name in enumerate(rule.get("resourceNames") or []):
        causes += [v.invalid(f"{field}.resourceNames[{i}]", name, p) for p in v.path_segment_name(name)]
        if name in (rule.get("resourceNames") or [])[:i]:
            causes.append(v.duplicate(f"{field}.resourceNames[{i}]", name))
    ops = rule.get("operations") or []
    if not ops:
        causes.append(v.required(f"{field}.operations"))
    causes += _wildcard_alone(ops, f"{field}.operations", "operations")
    for i, op in enumerate(ops):
        if op not in operations:
            causes.append(v.not_supported(f"{field}.operations[{i}]", op, operations))
    groups = rule.get("apiGroups") or []
    if not groups:
        causes.append(v.required(f"{field}.apiGroups"))
    causes += _wildcard_alone(groups, f"{field}.apiGroups", "API groups")
    versions = rule.get("apiVersions") or []
    if not versions:
        causes.append(v.required(f"{field}.apiVersions"))
    causes += _wildcard_alone(versions, f"{field}.apiVersions", "API versions")
    for i, version in enumerate(versions):
        if version == "":
            causes.append(v.required(f"{field}.apiVersions[{i}]"))
    causes += _resources(rule.get("resources") or [], f"{field}.resources")
    scope = rule.get("scope")
    if scope is not None and scope not in _SCOPES:
        causes.append(v.not_supported(f"{field}.scope", scope, _SCOPES))
    return causes


def _match_resources(match: dict[str, Any] | None, field: str, operations: list[str]) -> Causes:
    if match is None:
        return []
    causes: Causes = []
    policy = match.get("matchPolicy")
    if policy is None:
        causes.append(v.required(f"{field}.matchPolicy"))
    elif policy not in _MATCH_POLICIES:
        causes.append(v.not_supported(f"{field}.matchPolicy", policy, _MATCH_POLICIES))
    for selector in ("namespaceSelector", "objectSelector"):
        if match.get(selector) is None:
            causes.append(v.required(f"{field}.{selector}"))
        else:
            causes += v.label_selector(match[selector], f"{field}.{selector}")
    for kind in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(match.get(kind) or []):
            causes += _rule(rule or {}, f"{field}.{kind}[{i}]", operations)
    return causes


def _param_kind(param_kind: dict[str, Any], field: str) -> Causes:
    causes: Causes = []
    api_version = param_kind.get("apiVersion") or ""
    if not api_version:
        causes.append(v.required(f"{field}.apiVersion"))
    elif api_version.count("/") > 1:
        causes.append(v.invalid(f"{field}.apiVersion", api_version, f"unexpected GroupVersion string: {api_version}"))
    else:
        group, _, version = api_version.rpartition("/")
        if group:
            problems = v.dns1123_subdomain(group)
            if problems:
                causes.append(v.invalid(f"{field}.apiVersion", group, ",".join(problems)))
        if not version:
            causes.append(v.invalid(f"{field}.apiVersion", api_version, "version must be specified"))
        elif v.dns1035_label(version):
            causes.append(v.invalid(f"{field}.apiVersion", version, ",".join(v.dns1035_label(version))))
    kind = param_kind.get("kind") or ""
    if not kind:
        causes.append(v.required(f"{field}.kind"))
    elif v.dns1035_label(kind.lower()):
        causes.append(v.invalid(f"{field}.kind", kind, "may have mixed case, but should otherwise match: "
                                + ",".join(v.dns1035_label(kind.lower()))))
    return causes


def _match_conditions(conditions: list[dict[str, Any]], field: str, has_params: bool) -> Causes:
    causes: Causes = []
    if len(conditions) > 64:
        causes.append(_too_many(field, len(conditions), 64))
    names: set[str] = set()
    for i, condition in enumerate(conditions):
        expression = (condition.get("expression") or "").strip()
        if not expression:
            causes.append(v.required(f"{field}[{i}].expression"))
        else:
            compiled = expressions.compile_expression(expression, expected=expressions.BOOL, params=has_params)
            causes += _compile_cause(f"{field}[{i}].expression", expression, compiled)
        name = condition.get("name") or ""
        if not name:
            causes.append(v.required(f"{field}[{i}].name"))
        else:
            causes += [v.invalid(f"{field}[{i}].name", name, p) for p in v.qualified_name(name)]
            if name in names:
                causes.append(v.duplicate(f"{field}[{i}].name", name))
            names.add(name)
    return causes


def _variables(variables: list[dict[str, Any]], field: str, has_params: bool, construction: bool) -> Causes:
    causes: Causes = []
    for i, variable in enumerate(variables):
        name = variable.get("name") or ""
        if not name.strip():
            causes.append(v.required(f"{field}[{i}].name", "name is not specified"))
        elif not _CEL_IDENT.match(name) or name in _CEL_RESERVED:
            causes.append(v.invalid(f"{field}[{i}].name", name, "name is not a valid CEL identifier"))
        text = variable.get("expression") or ""
        if not text.strip():
            causes.append(v.required(f"{field}[{i}].expression", "expression is not specified"))
        else:
            compiled = expressions.compile_expression(text, expected=expressions.ANY, params=has_params,
                                                      construction=construction)
            causes += _compile_cause(f"{field}[{i}].expression", text, compiled)
    return causes


def _common_spec(spec: dict[str, Any], operations: list[str]) -> tuple[Causes, bool]:
    causes: Causes = []
    policy = spec.get("failurePolicy")
    if policy is None:
        causes.append(v.required("spec.failurePolicy"))
    elif policy not in _FAILURE_POLICIES:
        causes.append(v.not_supported("spec.failurePolicy", policy, _FAILURE_POLICIES))
    has_params = spec.get("paramKind") is not None
    if has_params:
        causes += _param_kind(spec["paramKind"] or {}, "spec.paramKind")
    constraints = spec.get("matchConstraints")
    if constraints is None:
        causes.append(v.required("spec.matchConstraints"))
    else:
        causes += _match_resources(constraints, "spec.matchConstraints", operations)
        if not constraints.get("resourceRules"):
            causes.append(v.required("spec.matchConstraints.resourceRules"))
    causes += _match_conditions(spec.get("matchConditions") or [], "spec.matchConditions", has_params)
    return causes, has_params


def _name_checks(obj: Obj, *, static: bool) -> Causes:
    causes = v.object_meta(obj.get("metadata") or {}, namespaced=False)
    name = (obj.get("metadata") or {}).get("name") or ""
    if not static and manifests.is_static_name(name):
        causes.append(v.invalid("metadata.name", name, f'names ending with "{manifests.SUFFIX}" are reserved for '
                                                       "static manifest-based configurations and cannot be managed "
                                                       "via the API"))
    return causes


# -- the four kinds --------------------------------------------------------------------------------

def validate_validating_policy(obj: Obj, *, static: bool = False) -> Causes:
    causes = _name_checks(obj, static=static)
    spec = obj.get("spec") or {}
    spec_causes, has_params = _common_spec(spec, _OPERATIONS)
    causes += spec_causes
    causes += _variables(spec.get("variables") or [], "spec.variables", has_params, False)
    validations, annotations = spec.get("validations") or [], spec.get("auditAnnotations") or []
    if not validations and not annotations:
        message = "validations or auditAnnotations must contain at least one item"
        return causes + [v.required("spec.validations", message), v.required("spec.auditAnnotations", message)]
    for i, validation in enumerate(validations):
        field = f"spec.validations[{i}]"
        text = validation.get("expression") or ""
        if not text.strip():
            causes.append(v.required(f"{field}.expression", "expression is not specified"))
        else:
            compiled = expressions.compile_expression(text, expected=expressions.BOOL, params=has_params)
            causes += _compile_cause(f"{field}.expression", text, compiled)
        message_expression = validation.get("messageExpression") or ""
        if message_expression and not message_expression.strip():
            causes.append(v.invalid(f"{field}.messageExpression", message_expression, "must be non-empty if specified"))
        elif message_expression:
            compiled = expressions.compile_expression(message_expression, expected=expressions.STRING,
                                                      params=has_params, authorizer=False)
            causes += _compile_cause(f"{field}.messageExpression", message_expression, compiled)
        message = validation.get("message") or ""
        if message and not message.strip():
            causes.append(v.invalid(f"{field}.message", message, "message must be non-empty if specified"))
        elif re.search(r"[\n\r]", message.strip()):
            causes.append(v.invalid(f"{field}.message", message, "message must not contain line breaks"))
        reason = validation.get("reason")
        if reason is not None and reason not in _REASONS:
            causes.append(v.not_supported(f"{field}.reason", reason, _REASONS))
    if len(annotations) > _MAX_AUDIT_ANNOTATIONS:
        causes.append(v.invalid("spec.auditAnnotations", annotations,
                                f"must not have more than {_MAX_AUDIT_ANNOTATIONS} auditAnnotations"))
    name = (obj.get("metadata") or {}).get("name") or ""
    keys: set[str] = set()
    for i, annotation in enumerate(annotations):
        field = f"spec.auditAnnotations[{i}]"
        key = annotation.get("key") or ""
        if name:
            causes += [v.invalid(f"{field}.key", f"{name}/{key}", p) for p in v.qualified_name(f"{name}/{key}")]
        else:
            causes.append(v.invalid(f"{field}.key", key, "requires metadata.name be non-empty"))
        text = (annotation.get("valueExpression") or "").strip()
        if not text:
            causes.append(v.required(f"{field}.valueExpression", "valueExpression is not specified"))
        elif len(text) > _MAX_AUDIT_EXPRESSION:
            causes.append(v.required(f"{field}.valueExpression", f"must not exceed {_MAX_AUDIT_EXPRESSION} bytes in length"))
        else:
            compiled = expressions.compile_expression(text, expected=expressions.STRING_OR_NULL, params=has_params)
            causes += _compile_cause(f"{field}.valueExpression", annotation.get("valueExpression", ""), compiled)
        if key in keys:
            causes.append(v.duplicate(f"{field}.key", key))
        keys.add(key)
    return causes


def validate_mutating_policy(obj: Obj, *, static: bool = False) -> Causes:
    causes = _name_checks(obj, static=static)
    spec = obj.get("spec") or {}
    spec_causes, has_params = _common_spec(spec, _MUTATING_OPERATIONS)
    causes += spec_causes
    causes += _variables(spec.get("variables") or [], "spec.variables", has_params, True)
    mutations = spec.get("mutations") or []
    if not mutations:
        causes.append(v.required("spec.mutations", "mutations must contain at least one item"))
    for i, mutation in enumerate(mutations):
        field = f"spec.mutations[{i}]"
        patch_type = mutation.get("patchType")
        if not patch_type:
            causes.append(v.required(f"{field}.patchType"))
            continue
        if patch_type not in _PATCH_TYPES:
            causes.append(v.not_supported(f"{field}.patchType", patch_type, _PATCH_TYPES))
            continue
        member = "applyConfiguration" if patch_type == "ApplyConfiguration" else "jsonPatch"
        other = "jsonPatch" if member == "applyConfiguration" else "applyConfiguration"
        if mutation.get(other) is not None:
            causes.append(v.forbidden(f"{field}.{other}", f"must not be specified when patchType is {patch_type}"))
        body = mutation.get(member)
        text = (body or {}).get("expression") or ""
        if body is None:
            causes.append(v.required(f"{field}.{member}", f"must be specified when patchType is {patch_type}"))
        elif not text.strip():
            causes.append(v.required(f"{field}.{member}.expression", "expression is not specified"))
        else:
            expected = expressions.OBJECT if member == "applyConfiguration" else expressions.JSON_PATCHES
            compiled = expressions.compile_expression(text, expected=expected, params=has_params, construction=True)
            causes += _compile_cause(f"{field}.{member}.expression", text, compiled)
    reinvocation = spec.get("reinvocationPolicy")
    if not reinvocation:
        causes.append(v.required("spec.reinvocationPolicy"))
    elif reinvocation not in _REINVOCATION:
        causes.append(v.not_supported("spec.reinvocationPolicy", reinvocation, _REINVOCATION))
    return causes


def _param_ref(ref: dict[str, Any] | None, field: str) -> Causes:
    if ref is None:
        return []
    causes: Causes = []
    name, selector = ref.get("name") or "", ref.get("selector")
    if name:
        causes += [v.invalid(f"{field}.name", name, p) for p in v.path_segment_name(name)]
        if selector is not None:
            causes.append(v.forbidden(f"{field}.name", "name and selector are mutually exclusive"))
    if selector is not None:
        causes += v.label_selector(selector, f"{field}.selector")
        if name:
            causes.append(v.forbidden(f"{field}.selector", "name and selector are mutually exclusive"))
    if not name and selector is None:
        causes.append(v.required(field, "one of name or selector must be specified"))
    action = ref.get("parameterNotFoundAction")
    if not action:
        causes.append(v.required(f"{field}.parameterNotFoundAction"))
    elif action not in ("Deny", "Allow"):
        causes.append(v.not_supported(f"{field}.parameterNotFoundAction", action, ["Deny", "Allow"]))
    return causes


def _binding_common(obj: Obj, operations: list[str], static: bool) -> Causes:
    causes = _name_checks(obj, static=static)
    spec = obj.get("spec") or {}
    policy = spec.get("policyName") or ""
    if not policy:
        causes.append(v.required("spec.policyName"))
    else:
        causes += [v.invalid("spec.policyName", policy, p) for p in v.dns1123_subdomain(policy)]
    causes += _param_ref(spec.get("paramRef"), "spec.paramRef")
    # "matchResouces": upstream's field path has this spelling.
    causes += _match_resources(spec.get("matchResources"), "spec.matchResouces", operations)
    return causes


def validate_validating_binding(obj: Obj, *, static: bool = False) -> Causes:
    causes = _binding_common(obj, _OPERATIONS, static)
    actions = (obj.get("spec") or {}).get("validationActions") or []
    seen: list[str] = []
    for i, action in enumerate(actions):
        if action not in _ACTIONS:
            causes.append(v.not_supported(f"spec.validationActions[{i}]", action, _ACTIONS))
        if action in seen:
            causes.append(v.duplicate(f"spec.validationActions[{i}]", action))
        seen.append(action)
    if "Deny" in seen and "Warn" in seen:
        causes.append(v.invalid("spec.validationActions", actions, "must not contain both Deny and Warn (repeating "
                                "the same validation failure information in the API response and headers serves "
                                "no purpose)"))
    if not seen:
        causes.append(v.required("spec.validationActions", "at least one validation action is required"))
    return causes


def validate_mutating_binding(obj: Obj, *, static: bool = False) -> Causes:
    return _binding_common(obj, _MUTATING_OPERATIONS, static)


_KINDS = {
    "ValidatingAdmissionPolicy": (default_policy, validate_validating_policy),
    "ValidatingAdmissionPolicyBinding": (default_binding, validate_validating_binding),
    "MutatingAdmissionPolicy": (default_policy, validate_mutating_policy),
    "MutatingAdmissionPolicyBinding": (default_binding, validate_mutating_binding),
}


def prepare_manifest(obj: Obj) -> list[str]:
    """Default a policy object loaded from a file and return its validation errors as text."""
    defaults, validate = _KINDS[obj.get("kind", "")]
    defaults(obj)
    return [f"{c['field']}: {c['message']}" for c in validate(obj, static=True)]


class _PolicyStrategy(DefaultingStrategy):
    kind = ""
    counts_generation = True  # upstream sets generation 1 and bumps it on spec changes, for all four kinds

    def default(self, obj: Obj) -> None:
        _KINDS[self.kind][0](obj)

    def validate(self, obj: Obj) -> Causes:
        return _KINDS[self.kind][1](obj)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return self.validate(new) + v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})


class ValidatingAdmissionPolicyStrategy(_PolicyStrategy):
    kind = "ValidatingAdmissionPolicy"


class ValidatingAdmissionPolicyBindingStrategy(_PolicyStrategy):
    kind = "ValidatingAdmissionPolicyBinding"


class MutatingAdmissionPolicyStrategy(_PolicyStrategy):
    kind = "MutatingAdmissionPolicy"


class MutatingAdmissionPolicyBindingStrategy(_PolicyStrategy):
    kind = "MutatingAdmissionPolicyBinding"


class _WebhookConfigurationStrategy(Strategy):
    """Mutating/ValidatingWebhookConfiguration: for now only each webhook's matchConditions are
    validated (names, and CEL compiled without params, as upstream compiles them), so a
    malformed expression is refused with "compilation failed" instead of being stored."""

    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        for i, webhook in enumerate(obj.get("webhooks") or []):
            if isinstance(webhook, dict):
                causes += _match_conditions(webhook.get("matchConditions") or [], f"webhooks[{i}].matchConditions",
                                            False)
        return causes


STRATEGIES = {
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): _WebhookConfigurationStrategy,
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): _WebhookConfigurationStrategy,
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): ValidatingAdmissionPolicyStrategy,
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): ValidatingAdmissionPolicyBindingStrategy,
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"): MutatingAdmissionPolicyStrategy,
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"): MutatingAdmissionPolicyBindingStrategy,
}
