"""ValidatingAdmissionPolicy dispatch: denials and their Status, actions, failurePolicy, params,
match conditions, variables, audit annotations — on a fake cluster view, with upstream's texts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from admission import errors
from admission.policy.source import PolicySource
from admission.policy.validating import VALIDATION_FAILURE_ANNOTATION, ValidatingPolicyPlugin
from apiserver.kinds import admission_policies
from tests.admission.fakes import FakeView, attrs, pod

GROUP = "admissionregistration.k8s.io"
POD_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE", "DELETE"],
            "resources": ["pods"]}


def policy(name: str, validations: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    obj = {"apiVersion": f"{GROUP}/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
           "spec": {"matchConstraints": {"resourceRules": [POD_RULE]}, "validations": validations, **spec}}
    admission_policies.default_policy(obj)
    assert admission_policies.validate_validating_policy(obj) == []
    return obj


def binding(name: str, policy_name: str, actions: list[str] | None = None, **spec: Any) -> dict[str, Any]:
    obj = {"apiVersion": f"{GROUP}/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
           "spec": {"policyName": policy_name, "validationActions": actions or ["Deny"], **spec}}
    admission_policies.default_binding(obj)
    assert admission_policies.validate_validating_binding(obj) == []
    return obj


def plugin_with(view: FakeView, *objects: dict[str, Any]) -> ValidatingPolicyPlugin:
    for obj in objects:
        resource = "validatingadmissionpolicies" if obj["kind"].endswith("Policy") else "validatingadmissionpolicybindings"
        view.put(GROUP, resource, obj)
    return ValidatingPolicyPlugin(PolicySource(view), view)


LIMITS = "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits))"


def test_a_denied_pod_gets_upstreams_422_with_the_policy_and_binding_named():
    view = FakeView()
    plugin = plugin_with(view, policy("limits", [{"expression": LIMITS, "message": "containers need limits"}]),
                         binding("limits-b", "limits"))
    with pytest.raises(errors.Rejection) as denied:
        plugin.validate(attrs(pod("web")))
    text = "ValidatingAdmissionPolicy 'limits' with binding 'limits-b' denied request: containers need limits"
    assert denied.value.code == 422 and denied.value.reason == "Invalid"
    assert denied.value.message == f'pods "web" is forbidden: {text}'
    assert denied.value.details == {"name": "web", "kind": "pods", "causes": [{"message": text}]}


def test_a_pod_that_passes_is_admitted_without_warnings():
    view = FakeView()
    plugin = plugin_with(view, policy("limits", [{"expression": LIMITS}]), binding("b", "limits"))
    request = attrs(pod(containers=[{"name": "c", "image": "x", "resources": {"limits": {"cpu": "1"}}}]))
    plugin.validate(request)
    assert request.warnings == []


@pytest.mark.parametrize("validation, expected_message", [
    ({"expression": "false"}, "failed expression: false"),
    ({"expression": "false", "message": "  static  "}, "static"),
    ({"expression": "false", "message": "static", "messageExpression": "'name is ' + object.metadata.name"},
     "name is web"),
    ({"expression": "false", "message": "fallback", "messageExpression": "'two\\nlines'"}, "fallback"),
    ({"expression": "false", "message": "fallback", "messageExpression": "'x' + object.missing"}, "fallback"),
])
def test_the_denial_message_comes_from_messageExpression_then_message_then_the_expression(validation,
                                                                                          expected_message):
    view = FakeView()
    plugin = plugin_with(view, policy("p", [validation]), binding("b", "p"))
    with pytest.raises(errors.Rejection) as denied:
        plugin.validate(attrs(pod("web")))
    assert denied.value.message.endswith(f"denied request: {expected_message}")


@pytest.mark.parametrize("reason, code", [("Forbidden", 403), ("Invalid", 422), ("RequestEntityTooLarge", 413)])
def test_a_validation_reason_sets_the_status_reason_and_code(reason, code):
    view = FakeView()
    plugin = plugin_with(view, policy("p", [{"expression": "false", "reason": reason}]), binding("b", "p"))
    with pytest.raises(errors.Rejection) as denied:
        plugin.validate(attrs(pod()))
    assert (denied.value.code, denied.value.reason) == (code, reason)


def test_warn_adds_a_warning_and_admits():
    view = FakeView()
    plugin = plugin_with(view, policy("limits", [{"expression": LIMITS, "message": "set limits"}]),
                         binding("warn-b", "limits", ["Warn"]))
    request = attrs(pod())
    plugin.validate(request)
    assert request.warnings == ["Validation failed for ValidatingAdmissionPolicy 'limits' with binding 'warn-b': "
                                "set limits"]


def test_audit_records_the_failure_annotation_and_admits():
    view = FakeView()
    plugin = plugin_with(view, policy("limits", [{"expression": "true"}, {"expression": LIMITS, "message": "m"}]),
                         binding("audit-b", "limits", ["Audit", "Warn"]))
    request = attrs(pod())
    plugin.validate(request)
    assert json.loads(request.audit_annotations[VALIDATION_FAILURE_ANNOTATION]) == [{
        "message": "m", "policy": "limits", "binding": "audit-b", "expressionIndex": 1,
        "validationActions": ["Audit", "Warn"]}]
    assert len(request.warnings) == 1


def test_a_runtime_error_denies_under_fail_with_the_cel_error_text():
    view = FakeView()
    plugin = plugin_with(view, policy("p", [{"expression": "object.spec.nodeSelector.disk == 'ssd'"}]),
                         binding("b", "p"))
    with pytest.raises(errors.Rejection) as denied:
        plugin.validate(attrs(pod("web")))
    assert denied.value.code == 422
    assert denied.value.message == ("pods \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' "
                                    "denied request: expression 'object.spec.nodeSelector.disk == 'ssd'' resulted "
                                    "in error: no such key: nodeSelector")


def test_a_runtime_error_is_admitted_under_ignore():
    view = FakeView()
    plugin = plugin_with(view, policy("p", [{"expression": "object.spec.nodeSelector.disk == 'ssd'"}],
                                      failurePolicy="Ignore"), binding("b", "p"))
    plugin.validate(attrs(pod()))


def test_match_conditions_skip_the_policy_when_one_is_false():
    view = FakeView()
    plugin = plugin_with(view, policy("p", [{"expression": "false"}], matchConditions=[
        {"name": "only-labelled", "expression": "'audit' in object.metadata.labels"}]), binding("b", "p"))
    plugin.validate(attrs(pod()))
    with pytest.raises(errors.Rejection):
        plugin.validate(attrs(pod(labels={"audit": "yes"})))


def test_a_match_condition_error_follows_failure_policy():
    view = FakeView()
    failing = plugin_with(view, policy("p", [{"expression": "true"}], matchConditions=[
        {"name": "broken", "expression": "object.spec.missing == 1"}]), binding("b", "p"))
    with pytest.raises(errors.Rejection) as denied:
        failing.validate(attrs(pod()))
    assert "expression 'object.spec.missing == 1' resulted in error: no such key: missing" in denied.value.message


def test_namespace_and_object_selectors_choose_the_requests():
    view = FakeView()
    view.namespace("tenant", {"multi-tenant": "true"})
    view.namespace("other")
    plugin = plugin_with(view, policy("p", [{"expression": "false"}], matchConstraints={
        "resourceRules": [POD_RULE], "namespaceSelector": {"matchLabels": {"multi-tenant": "true"}},
        "objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}}), binding("b", "p"))
    plugin.validate(attrs(pod(namespace="other")))
    plugin.validate(attrs(pod(namespace="tenant", labels={"skip": "1"})))
    with pytest.raises(errors.Rejection):
        plugin.validate(attrs(pod(namespace="tenant")))


def test_a_binding_with_match_resources_narrows_its_policy():
    view = FakeView()
    view.namespace("a", {"team": "a"})
    view.namespace("b", {"team": "b"})
    plugin = plugin_with(view, policy("p", [{"expression": "false"}]),
                         binding("only-a", "p", matchResources={"namespaceSelector": {"matchLabels": {"team": "a"}}}))
    plugin.validate(attrs(pod(namespace="b")))
    with pytest.raises(errors.Rejection):
        plugin.validate(attrs(pod(namespace="a")))


def test_delete_is_validated_with_the_old_object():
    view = FakeView()
    plugin = plugin_with(view, policy("keep", [{"expression": "request.operation != 'DELETE' || "
                                                               "!('protected' in oldObject.metadata.labels)"}]),
                         binding("b", "keep"))
    plugin.validate(attrs(None, operation="DELETE", old=pod("free")))
    with pytest.raises(errors.Rejection):
        plugin.validate(attrs(None, operation="DELETE", old=pod("kept", labels={"protected": "1"})))


def _params_policy() -> dict[str, Any]:
    return policy("max-containers", [{"expression": "size(object.spec.containers) <= int(params.data.max)",
                                      "messageExpression": "'at most ' + params.data.max + ' containers'"}],
                  paramKind={"apiVersion": "v1", "kind": "ConfigMap"})


def test_params_by_name_come_from_the_request_namespace_by_default():
    view = FakeView()
    view.put("", "configmaps", {"metadata": {"name": "limits", "namespace": "default"}, "data": {"max": "1"}})
    plugin = plugin_with(view, _params_policy(), binding("b", "max-containers", paramRef={
        "name": "limits", "parameterNotFoundAction": "Deny"}))
    plugin.validate(attrs(pod()))
    two = pod(containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "y"}])
    with pytest.raises(errors.Rejection) as denied:
        plugin.validate(attrs(two))
    assert denied.value.message.endswith("denied request: at most 1 containers")


def test_a_missing_param_denies_with_deny_and_admits_with_allow():
    view = FakeView()
    denying = plugin_with(view, _params_policy(), binding("b", "max-containers", paramRef={
        "name": "absent", "parameterNotFoundAction": "Deny"}))
    with pytest.raises(errors.Rejection) as denied:
        denying.validate(attrs(pod()))
    assert denied.value.message.endswith(
        "denied request: failed to configure binding: no params found for policy binding with `Deny` "
        "parameterNotFoundAction")
    allowing = plugin_with(FakeView(), _params_policy(), binding("b", "max-containers", paramRef={
        "name": "absent", "parameterNotFoundAction": "Allow"}))
    allowing.validate(attrs(pod()))


def test_a_param_selector_evaluates_once_per_selected_object():
    view = FakeView()
    for name, limit in (("loose", "5"), ("strict", "0")):
        view.put("", "configmaps", {"metadata": {"name": name, "namespace": "default", "labels": {"limits": "yes"}},
                                    "data": {"max": limit}})
    plugin = plugin_with(view, _params_policy(), binding("b", "max-containers", paramRef={
        "selector": {"matchLabels": {"limits": "yes"}}, "parameterNotFoundAction": "Deny"}))
    with pytest.raises(errors.Rejection) as denied:
        plugin.validate(attrs(pod()))
    assert denied.value.message.endswith("at most 0 containers")


def test_variables_are_computed_only_when_an_expression_reads_them():
    view = FakeView()
    plugin = plugin_with(view, policy("p", [{"expression": "variables.count <= 1"}], variables=[
        {"name": "broken", "expression": "object.spec.missing"},
        {"name": "names", "expression": "object.spec.containers.map(c, c.name)"},
        {"name": "count", "expression": "size(variables.names)"}]), binding("b", "p"))
    plugin.validate(attrs(pod()))  # `broken` is never read, so its error never shows


def test_a_failing_variable_fails_the_expression_that_reads_it():
    view = FakeView()
    plugin = plugin_with(view, policy("p", [{"expression": "variables.broken == 1"}], variables=[
        {"name": "broken", "expression": "object.spec.missing"}]), binding("b", "p"))
    with pytest.raises(errors.Rejection) as denied:
        plugin.validate(attrs(pod()))
    assert denied.value.message.endswith("expression 'object.spec.missing' resulted in error: no such key: missing")


def test_audit_annotations_are_published_under_the_policy_name():
    view = FakeView()
    plugin = plugin_with(view, policy("p", [{"expression": "true"}], auditAnnotations=[
        {"key": "containers", "valueExpression": "string(size(object.spec.containers))"},
        {"key": "nothing", "valueExpression": "null"}]), binding("b", "p"))
    request = attrs(pod())
    plugin.validate(request)
    assert request.audit_annotations == {"p/containers": "1"}


def test_policies_from_the_api_never_see_admission_configuration_objects():
    view = FakeView()
    everything = {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
    plugin = plugin_with(view, policy("p", [{"expression": "false"}], matchConstraints={"resourceRules": [everything]}),
                         binding("b", "p"))
    request = attrs({"metadata": {"name": "x"}}, group=GROUP, resource="validatingadmissionpolicies",
                    kind="ValidatingAdmissionPolicy", namespace="")
    plugin.validate(request)
    with pytest.raises(errors.Rejection):
        plugin.validate(attrs(pod()))


def test_a_binding_without_its_policy_does_nothing():
    view = FakeView()
    plugin = plugin_with(view, binding("orphan", "absent"))
    plugin.validate(attrs(pod()))


def test_policies_follow_the_store_without_recompiling_unchanged_ones():
    view = FakeView()
    plugin = plugin_with(view, policy("p", [{"expression": "true"}]), binding("b", "p"))
    plugin.validate(attrs(pod()))
    first = plugin.source.validating_hooks()[0].policy
    view.namespace("unrelated")  # a write elsewhere: same compiled policy
    assert plugin.source.validating_hooks()[0].policy is first
    view.put(GROUP, "validatingadmissionpolicies", policy("p", [{"expression": "false"}]))
    with pytest.raises(errors.Rejection):
        plugin.validate(attrs(pod()))
    view.delete(GROUP, "validatingadmissionpolicybindings", "", "b")
    plugin.validate(attrs(pod()))


def test_request_namespace_object_and_authorizer_reach_the_policies_that_read_them():
    # An invocation builds only the variables its policy reads: each policy here reads others.
    view = FakeView()
    view.namespace("team", {"tier": "gold"})
    plugin = plugin_with(
        view,
        policy("ns", [{"expression": "namespaceObject.metadata.labels.tier == 'silver'",
                       "messageExpression": "'tier of ' + namespaceObject.metadata.name"}]),
        binding("ns-b", "ns", ["Warn"]),
        policy("who", [{"expression": "request.userInfo.username == 'nobody'",
                        "messageExpression": "'user ' + request.userInfo.username + ' ' + request.operation"}]),
        binding("who-b", "who", ["Warn"]),
        policy("authz", [{"expression": "!authorizer.requestResource.check('create').allowed()",
                          "message": "allowed to create"}]),
        binding("authz-b", "authz", ["Warn"]),
        policy("plain", [{"expression": "object.metadata.name == 'other'", "message": "name"}]),
        binding("plain-b", "plain", ["Warn"]),
    )
    request = attrs(pod("web", namespace="team"))
    plugin.validate(request)
    messages = sorted(w.split(": ", 1)[1] for w in request.warnings)
    assert messages == ["allowed to create", "name", "tier of team", "user kubernetes-admin CREATE"]
