"""Defaults and create-time validation of the four policy kinds (the strategy in
apiserver/kinds/admission_policies.py): malformed CEL is refused with cel-go's text, and so are
wrong result types, bad rules, bindings and mutations; `.static.k8s.io` names are reserved."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.kinds import admission_policies as ap

RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}


def vap(**spec: Any) -> dict[str, Any]:
    obj = {"metadata": {"name": "p"}, "spec": {"matchConstraints": {"resourceRules": [dict(RULE)]},
                                               "validations": [{"expression": "true"}], **spec}}
    ap.default_policy(obj)
    return obj


def errors_of(causes: list[dict[str, str]]) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_defaults_fill_failure_policy_and_match_resources():
    obj = vap()
    assert obj["spec"]["failurePolicy"] == "Fail"
    assert obj["spec"]["matchConstraints"] == {"resourceRules": [{**RULE, "scope": "*"}], "matchPolicy": "Equivalent",
                                               "namespaceSelector": {}, "objectSelector": {}}
    assert ap.validate_validating_policy(obj) == []


def test_a_syntax_error_is_refused_with_cel_gos_text():
    obj = vap(validations=[{"expression": "object.spec.replicas >"}])
    assert errors_of(ap.validate_validating_policy(obj)) == [
        'spec.validations[0].expression: Invalid value: "object.spec.replicas >": compilation failed: '
        "ERROR: <input>:1:23: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', "
        "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
        " | object.spec.replicas >\n | ......................^"]


@pytest.mark.parametrize("spec, expected", [
    ({"validations": [{"expression": "object.spec.paused"}]},
     'spec.validations[0].expression: Invalid value: "object.spec.paused": must evaluate to bool but got dyn'),
    ({"validations": [{"expression": "true", "messageExpression": "1"}]},
     'spec.validations[0].messageExpression: Invalid value: "1": must evaluate to string but got int'),
    ({"validations": [{"expression": "params.x == 1"}]},
     "spec.validations[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: "
     "undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"),
    ({"validations": [{"expression": "true", "reason": "Conflict"}]},
     'spec.validations[0].reason: Unsupported value: "Conflict": supported values: "Forbidden", "Invalid", '
     '"RequestEntityTooLarge"'),
    ({"validations": [{"expression": "true", "message": "two lines", "messageExpression": " "}]},
     'spec.validations[0].messageExpression: Invalid value: " ": must be non-empty if specified'),
    ({"validations": [], "auditAnnotations": []},
     "spec.validations: Required value: validations or auditAnnotations must contain at least one item"),
    ({"failurePolicy": "Sometimes"},
     'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"'),
    ({"matchConditions": [{"name": "a", "expression": "true"}, {"name": "a", "expression": "true"}]},
     'spec.matchConditions[1].name: Duplicate value: "a"'),
    ({"variables": [{"name": "not valid", "expression": "1"}]},
     'spec.variables[0].name: Invalid value: "not valid": name is not a valid CEL identifier'),
    ({"matchConstraints": {"resourceRules": [{**RULE, "resources": ["*", "pods"]}], "matchPolicy": "Equivalent",
                           "namespaceSelector": {}, "objectSelector": {}}},
     "spec.matchConstraints.resourceRules[0].resources: Invalid value: [\"*\",\"pods\"]: if '*' is present, must not "
     "specify other resources without subresources"),
    ({"paramKind": {"apiVersion": "v1"}}, "spec.paramKind.kind: Required value"),
])
def test_invalid_validating_policies(spec, expected):
    assert expected in errors_of(ap.validate_validating_policy(vap(**spec)))


def test_static_names_are_reserved_for_manifests():
    obj = vap()
    obj["metadata"]["name"] = "deny-all.static.k8s.io"
    assert errors_of(ap.validate_validating_policy(obj)) == [
        'metadata.name: Invalid value: "deny-all.static.k8s.io": names ending with ".static.k8s.io" are reserved '
        "for static manifest-based configurations and cannot be managed via the API"]
    assert ap.validate_validating_policy(obj, static=True) == []


@pytest.mark.parametrize("spec, expected", [
    ({"policyName": "p", "validationActions": ["Deny", "Warn"]},
     'spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same '
     "validation failure information in the API response and headers serves no purpose)"),
    ({"policyName": "p", "validationActions": []},
     "spec.validationActions: Required value: at least one validation action is required"),
    ({"validationActions": ["Deny"]}, "spec.policyName: Required value"),
    ({"policyName": "p", "validationActions": ["Deny"], "paramRef": {"name": "x"}},
     "spec.paramRef.parameterNotFoundAction: Required value"),
    ({"policyName": "p", "validationActions": ["Deny"],
      "paramRef": {"name": "x", "selector": {}, "parameterNotFoundAction": "Deny"}},
     "spec.paramRef.name: Forbidden: name and selector are mutually exclusive"),
])
def test_invalid_validating_bindings(spec, expected):
    obj = {"metadata": {"name": "b"}, "spec": spec}
    ap.default_binding(obj)
    assert expected in errors_of(ap.validate_validating_binding(obj))


def map_(**spec: Any) -> dict[str, Any]:
    obj = {"metadata": {"name": "m"}, "spec": {
        "matchConstraints": {"resourceRules": [dict(RULE)]}, "reinvocationPolicy": "Never",
        "mutations": [{"patchType": "ApplyConfiguration",
                       "applyConfiguration": {"expression": "Object{spec: Object.spec{hostUsers: false}}"}}],
        **spec}}
    ap.default_policy(obj)
    return obj


def test_a_valid_mutating_policy():
    assert ap.validate_mutating_policy(map_()) == []


@pytest.mark.parametrize("spec, expected", [
    ({"reinvocationPolicy": None}, "spec.reinvocationPolicy: Required value"),
    ({"mutations": []}, "spec.mutations: Required value: mutations must contain at least one item"),
    ({"mutations": [{"patchType": "JSONPatch"}]},
     "spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch"),
    ({"mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{spec:"}}]},
     "spec.mutations[0].applyConfiguration.expression: Invalid value: \"Object{spec:\": compilation failed: "),
    ({"mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": "true"}}]},
     'spec.mutations[0].jsonPatch.expression: Invalid value: "true": must evaluate to list(JSONPatch) but got bool'),
    ({"matchConstraints": {"resourceRules": [{**RULE, "operations": ["DELETE"]}]}},
     'spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "DELETE": supported values: "*", '
     '"CONNECT", "CREATE", "UPDATE"'),
])
def test_invalid_mutating_policies(spec, expected):
    obj = map_(**spec)
    if spec.get("reinvocationPolicy", "x") is None:
        obj["spec"].pop("reinvocationPolicy")
    assert any(e.startswith(expected) for e in errors_of(ap.validate_mutating_policy(obj))), \
        errors_of(ap.validate_mutating_policy(obj))


def test_manifest_objects_are_defaulted_and_checked_with_the_same_rules():
    obj = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
           "metadata": {"name": "x.static.k8s.io"},
           "spec": {"matchConstraints": {"resourceRules": [dict(RULE)]}, "validations": [{"expression": "1"}]}}
    assert ap.prepare_manifest(obj) == [
        'spec.validations[0].expression: Invalid value: "1": must evaluate to bool but got int']
    assert obj["spec"]["failurePolicy"] == "Fail"
