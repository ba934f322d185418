"""MutatingAdmissionPolicy dispatch: ApplyConfiguration and JSONPatch mutations, their errors
under failurePolicy, atomic fields, match rules, params, and reinvocation."""

from __future__ import annotations

from typing import Any

import pytest

from admission import errors
from admission.chain import Chain
from admission.policy.mutating import MutatingPolicyPlugin
from admission.policy.source import PolicySource
from apiserver.kinds import admission_policies
from tests.admission.fakes import FakeView, attrs, pod

GROUP = "admissionregistration.k8s.io"
POD_CREATE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
HOST_USERS_APPLY = {"patchType": "ApplyConfiguration",
                    "applyConfiguration": {"expression": "Object{spec: Object.spec{hostUsers: false}}"}}
HOST_USERS_PATCH = {"patchType": "JSONPatch", "jsonPatch": {
    "expression": "[JSONPatch{op: 'add', path: '/spec/hostUsers', value: false}]"}}


def policy(name: str, mutations: list[dict[str, Any]], *, reinvocation: str = "Never", **spec: Any) -> dict[str, Any]:
    obj = {"apiVersion": f"{GROUP}/v1", "kind": "MutatingAdmissionPolicy", "metadata": {"name": name},
           "spec": {"matchConstraints": {"resourceRules": [POD_CREATE]}, "mutations": mutations,
                    "reinvocationPolicy": reinvocation, **spec}}
    admission_policies.default_policy(obj)
    assert admission_policies.validate_mutating_policy(obj) == []
    return obj


def binding(name: str, policy_name: str, **spec: Any) -> dict[str, Any]:
    obj = {"apiVersion": f"{GROUP}/v1", "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": name},
           "spec": {"policyName": policy_name, **spec}}
    admission_policies.default_binding(obj)
    assert admission_policies.validate_mutating_binding(obj) == []
    return obj


def plugin_with(view: FakeView, *objects: dict[str, Any]) -> MutatingPolicyPlugin:
    for obj in objects:
        resource = "mutatingadmissionpolicies" if obj["kind"].endswith("Policy") else "mutatingadmissionpolicybindings"
        view.put(GROUP, resource, obj)
    return MutatingPolicyPlugin(PolicySource(view), view)


@pytest.mark.parametrize("mutation", [HOST_USERS_APPLY, HOST_USERS_PATCH], ids=["ApplyConfiguration", "JSONPatch"])
def test_host_users_is_injected_only_in_multi_tenant_namespaces(mutation):
    view = FakeView()
    view.namespace("tenant", {"multi-tenant": "true"})
    view.namespace("plain")
    plugin = plugin_with(view, policy("userns", [mutation], matchConstraints={
        "resourceRules": [POD_CREATE], "namespaceSelector": {"matchLabels": {"multi-tenant": "true"}}}),
        binding("userns-b", "userns"))
    tenant, plain = attrs(pod(namespace="tenant")), attrs(pod(namespace="plain"))
    plugin.admit(tenant)
    plugin.admit(plain)
    assert tenant.object["spec"]["hostUsers"] is False
    assert "hostUsers" not in plain.object["spec"]
    assert tenant.object["spec"]["containers"] == [{"name": "c", "image": "nginx"}]


def test_apply_configuration_merges_list_items_by_key():
    view = FakeView()
    plugin = plugin_with(view, policy("sc", [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": "Object{spec: Object.spec{containers: [Object.spec.containers{name: 'b', "
                      "securityContext: Object.spec.containers.securityContext{runAsNonRoot: true}}]}}"}}]),
        binding("b", "sc"))
    request = attrs(pod(containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]))
    plugin.admit(request)
    assert request.object["spec"]["containers"] == [
        {"name": "a", "image": "x"}, {"name": "b", "image": "y", "securityContext": {"runAsNonRoot": True}}]


def test_apply_configuration_may_not_set_an_atomic_list():
    view = FakeView()
    plugin = plugin_with(view, policy("args", [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": "Object{spec: Object.spec{containers: [Object.spec.containers{name: 'c', args: ['-v']}]}}"}}]),
        binding("b", "args"))
    with pytest.raises(errors.Rejection) as denied:
        plugin.admit(attrs(pod()))
    assert denied.value.code == 403 and denied.value.reason == "Invalid"
    assert denied.value.message == ("policy 'args' with binding 'b' denied request: error applying patch: invalid "
                                    "ApplyConfiguration: may not mutate atomic arrays, maps or structs: "
                                    ".spec.containers[0].args")


def test_a_failing_test_operation_leaves_the_object_unchanged():
    view = FakeView()
    plugin = plugin_with(view, policy("guarded", [{"patchType": "JSONPatch", "jsonPatch": {"expression": (
        "[JSONPatch{op: 'test', path: '/metadata/name', value: 'other'}, "
        "JSONPatch{op: 'add', path: '/metadata/labels/touched', value: 'yes'}]")}}]), binding("b", "guarded"))
    request = attrs(pod())
    plugin.admit(request)
    assert request.object["metadata"]["labels"] == {}


def test_json_patch_values_may_be_escaped_keys_and_object_literals():
    view = FakeView()
    plugin = plugin_with(view, policy("labels", [{"patchType": "JSONPatch", "jsonPatch": {"expression": (
        "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('example.com/env'), value: 'test'}, "
        "JSONPatch{op: 'add', path: '/spec/securityContext', "
        "value: Object.spec.securityContext{runAsNonRoot: true}}]")}}]), binding("b", "labels"))
    request = attrs(pod())
    plugin.admit(request)
    assert request.object["metadata"]["labels"] == {"example.com/env": "test"}
    assert request.object["spec"]["securityContext"] == {"runAsNonRoot": True}


def test_a_patch_that_does_not_apply_fails_the_request_under_fail():
    view = FakeView()
    plugin = plugin_with(view, policy("bad", [{"patchType": "JSONPatch", "jsonPatch": {
        "expression": "[JSONPatch{op: 'remove', path: '/spec/nodeName'}]"}}]), binding("b", "bad"))
    with pytest.raises(errors.Rejection) as denied:
        plugin.admit(attrs(pod()))
    assert denied.value.code == 403 and denied.value.reason == "Invalid"
    assert denied.value.message == ("policy 'bad' with binding 'b' denied request: JSONPath: error in remove for "
                                    "path: '/spec/nodeName': Unable to remove nonexistent key: nodeName: missing value")
    assert denied.value.details["causes"] == [{"message": denied.value.message}]


def test_an_evaluation_error_follows_failure_policy():
    failing_view, ignoring_view = FakeView(), FakeView()
    expression = {"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": "Object{metadata: Object.metadata{labels: {'zone': object.spec.nodeSelector.zone}}}"}}
    failing = plugin_with(failing_view, policy("zone", [expression]), binding("b", "zone"))
    with pytest.raises(errors.Rejection) as denied:
        failing.admit(attrs(pod()))
    assert denied.value.message == (
        "policy 'zone' with binding 'b' denied request: expression 'Object{metadata: Object.metadata{labels: "
        "{'zone': object.spec.nodeSelector.zone}}}' resulted in error: no such key: nodeSelector")
    ignoring = plugin_with(ignoring_view, policy("zone", [expression], failurePolicy="Ignore"), binding("b", "zone"))
    request = attrs(pod())
    ignoring.admit(request)
    assert request.object == pod()


def test_mutations_run_in_order_each_seeing_the_previous_result():
    view = FakeView()
    plugin = plugin_with(view, policy("two", [
        {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'add', path: '/metadata/labels/a', "
                                                               "value: '1'}]"}},
        {"patchType": "ApplyConfiguration", "applyConfiguration": {
            "expression": "Object{metadata: Object.metadata{labels: {'b': object.metadata.labels.a + '2'}}}"}},
    ]), binding("b", "two"))
    request = attrs(pod())
    plugin.admit(request)
    assert request.object["metadata"]["labels"] == {"a": "1", "b": "12"}


def test_params_reach_the_mutation():
    view = FakeView()
    view.put("", "configmaps", {"metadata": {"name": "team", "namespace": "default"}, "data": {"owner": "blue"}})
    plugin = plugin_with(view, policy("owner", [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": "Object{metadata: Object.metadata{labels: {'owner': params.data.owner}}}"}}],
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"}),
        binding("b", "owner", paramRef={"name": "team", "parameterNotFoundAction": "Deny"}))
    request = attrs(pod())
    plugin.admit(request)
    assert request.object["metadata"]["labels"] == {"owner": "blue"}


def test_mutating_policies_never_run_on_delete():
    view = FakeView()
    plugin = plugin_with(view, policy("userns", [HOST_USERS_APPLY]), binding("b", "userns"))
    request = attrs(None, operation="DELETE", old=pod())
    plugin.admit(request)
    assert request.object is None


class _Appender:
    """An in-tree-like plugin that appends a label after the policies ran (forces a reinvocation check)."""

    name = "appender"

    def admit(self, attrs: Any) -> None:
        labels = attrs.object["metadata"].setdefault("labels", {})
        labels["seen"] = str(int(labels.get("seen", "0")) + 1)


def test_if_needed_runs_again_when_a_later_policy_changed_the_object():
    view = FakeView()
    counting = {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": (
        "Object{metadata: Object.metadata{labels: {'runs': string(int(object.metadata.?labels.?runs.orValue('0')) + 1)}}}")}}
    plugin = plugin_with(view, policy("a-counter", [counting], reinvocation="IfNeeded"), binding("a", "a-counter"),
                         policy("b-userns", [HOST_USERS_APPLY]), binding("b", "b-userns"))
    request = attrs(pod())
    Chain([plugin], []).admit(request)
    # a-counter ran, b-userns changed the object afterwards, so a-counter (IfNeeded) ran once more.
    assert request.object["metadata"]["labels"]["runs"] == "2"
    assert request.object["spec"]["hostUsers"] is False


def test_never_does_not_run_again():
    view = FakeView()
    counting = {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": (
        "Object{metadata: Object.metadata{labels: {'runs': string(int(object.metadata.?labels.?runs.orValue('0')) + 1)}}}")}}
    plugin = plugin_with(view, policy("a-counter", [counting]), binding("a", "a-counter"),
                         policy("b-userns", [HOST_USERS_APPLY]), binding("b", "b-userns"))
    request = attrs(pod())
    Chain([plugin, _Appender()], []).admit(request)
    assert request.object["metadata"]["labels"]["runs"] == "1"
    assert request.object["metadata"]["labels"]["seen"] == "2"  # in-tree plugins do run twice
