"""Which requests a MatchResources selects: rules (operations, groups, versions, resources and
subresources, scope, names), Equivalent versions, and the namespace and object selectors."""

from __future__ import annotations

import pytest

from admission.policy import matching
from tests.admission.fakes import FakeView, attrs, pod

RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"], "scope": "*"}


@pytest.mark.parametrize("case, rule, request_kwargs, expected", [
    ("the exact rule matches a pod create", RULE, {}, True),
    ("another operation does not match", RULE, {"operation": "UPDATE"}, False),
    ("* matches every operation", {**RULE, "operations": ["*"]}, {"operation": "DELETE"}, True),
    ("a plain resource does not match its subresource", RULE, {"subresource": "status"}, False),
    ("resource/subresource matches that subresource", {**RULE, "resources": ["pods/status"]},
     {"subresource": "status"}, True),
    ("* matches no subresource", {**RULE, "resources": ["*"]}, {"subresource": "status"}, False),
    ("*/* matches any subresource", {**RULE, "resources": ["*/*"]}, {"subresource": "exec"}, True),
    ("*/status matches status of any resource", {**RULE, "resources": ["*/status"]}, {"subresource": "status"},
     True),
    ("another group does not match", {**RULE, "apiGroups": ["apps"]}, {}, False),
    ("Cluster scope does not match a namespaced request", {**RULE, "scope": "Cluster"}, {}, False),
    ("Namespaced scope matches a namespaced request", {**RULE, "scope": "Namespaced"}, {}, True),
])
def test_rules(case, rule, request_kwargs, expected):
    assert matching.rule_matches(rule, attrs(pod(), **request_kwargs)) is expected, case


def test_namespaces_themselves_are_cluster_scoped_for_scope_rules():
    request = attrs({"metadata": {"name": "ns1"}}, resource="namespaces", kind="Namespace", namespace="ns1")
    rule = {**RULE, "resources": ["namespaces"]}
    assert matching.rule_matches({**rule, "scope": "Cluster"}, request)
    assert not matching.rule_matches({**rule, "scope": "Namespaced"}, request)


def test_resource_names_limit_the_rule():
    criteria = {"resourceRules": [{**RULE, "resourceNames": ["only"]}]}
    assert matching.matches(criteria, attrs(pod("only")), lambda: {}, None, is_binding=False)
    assert not matching.matches(criteria, attrs(pod("other")), lambda: {}, None, is_binding=False)


def test_excluded_rules_win():
    criteria = {"resourceRules": [RULE], "excludeResourceRules": [{**RULE, "resourceNames": ["skip"]}]}
    assert not matching.matches(criteria, attrs(pod("skip")), lambda: {}, None, is_binding=False)


def test_equivalent_matches_another_served_version_and_names_it():
    view = FakeView()
    request = attrs({"apiVersion": "example.com/v2", "metadata": {"name": "w", "namespace": "default"}},
                    group="example.com", version="v2", resource="widgets", kind="Widget")
    v1_rule = {**RULE, "apiGroups": ["example.com"], "resources": ["widgets"]}
    assert matching.matches({"resourceRules": [v1_rule], "matchPolicy": "Equivalent"}, request, lambda: {}, view,
                            is_binding=False) == matching.Matched("example.com", "v1", "widgets", "Widget")
    assert matching.matches({"resourceRules": [v1_rule], "matchPolicy": "Exact"}, request, lambda: {}, view,
                            is_binding=False) is None


@pytest.mark.parametrize("selector, labels, expected", [
    ({}, {}, True),
    ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
    ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
    ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
    ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
])
def test_label_selectors(selector, labels, expected):
    assert matching.selector_matches(selector, labels) is expected


def test_a_binding_without_match_resources_matches_whatever_its_policy_matches():
    assert matching.matches(None, attrs(pod()), lambda: {}, None, is_binding=True)
    assert matching.matches({"namespaceSelector": {}, "objectSelector": {}}, attrs(pod()), lambda: {}, None,
                            is_binding=True)


def test_the_object_selector_also_accepts_the_old_object():
    request = attrs(pod(labels={}), operation="UPDATE", old=pod(labels={"keep": "1"}))
    assert matching.matches({"resourceRules": [{**RULE, "operations": ["UPDATE"]}],
                             "objectSelector": {"matchLabels": {"keep": "1"}}},
                            request, lambda: {}, None, is_binding=False)


def test_cluster_scoped_requests_ignore_the_namespace_selector():
    request = attrs({"metadata": {"name": "pc"}}, group="scheduling.k8s.io", resource="priorityclasses",
                    kind="PriorityClass", namespace="")
    rule = {**RULE, "apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"]}
    assert matching.matches({"resourceRules": [rule], "namespaceSelector": {"matchLabels": {"x": "y"}}},
                            request, lambda: None, None, is_binding=False)
