"""Upstream's "should support <Kind> API operations" tests for api-machinery kinds: the API priority
and fairness objects (test/e2e/apimachinery/flowcontrol.go) and the ValidatingAdmissionPolicy API
(validatingadmissionpolicy.go). Each runs `api_operations`: discovery, the eight verbs, status."""

from __future__ import annotations

from conformance.checks._confupstream_support import api_operations
from conformance.context import Context, Obj
from conformance.registry import conformance

NOW = "2026-01-01T00:00:00Z"


def _condition(type_: str) -> Obj:
    return {"type": type_, "status": "True", "lastTransitionTime": NOW, "reason": "E2E", "message": "Set from an e2e test"}


def _has_condition(type_: str):
    return lambda obj: any(c.get("type") == type_ for c in (obj.get("status") or {}).get("conditions") or [])


@conformance("[sig-api-machinery] API priority and fairness should support FlowSchema API operations [Conformance]",
             area="api-machinery")
async def flowschema_api(ctx: Context) -> None:
    await api_operations(ctx, lambda name: {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": name},
        "spec": {"priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 9000,
                 "rules": [{"subjects": [{"kind": "Group", "group": {"name": "e2e-nonexistent-group"}}],
                            "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                                               "namespaces": ["*"]}]}]}},
        status=lambda obj: {"status": {"conditions": [_condition("StatusPatched")]}},
        status_test=_has_condition("StatusPatched"))


@conformance("[sig-api-machinery] API priority and fairness should support PriorityLevelConfiguration API "
             "operations [Conformance]", area="api-machinery")
async def prioritylevel_api(ctx: Context) -> None:
    await api_operations(ctx, lambda name: {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 2,
                                                "limitResponse": {"type": "Reject"}}}},
        status=lambda obj: {"status": {"conditions": [_condition("StatusPatched")]}},
        status_test=_has_condition("StatusPatched"))


_POD_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}


@conformance("[sig-api-machinery] ValidatingAdmissionPolicy [Privileged:ClusterAdmin] should support "
             "ValidatingAdmissionPolicy API operations [Conformance]", area="api-machinery")
async def vap_api(ctx: Context) -> None:
    await api_operations(ctx, lambda name: {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {"matchConstraints": {"resourceRules": [_POD_RULE]},
                 "validations": [{"expression": "object.spec.containers.size() < 100"}]}},
        status=lambda obj: {"status": {"conditions": [_condition("StatusPatched")]}},
        status_test=_has_condition("StatusPatched"))


@conformance("[sig-api-machinery] ValidatingAdmissionPolicy [Privileged:ClusterAdmin] should support "
             "ValidatingAdmissionPolicyBinding API operations [Conformance]", area="api-machinery")
async def vap_binding_api(ctx: Context) -> None:
    await api_operations(ctx, lambda name: {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": "e2e-nonexistent-policy", "validationActions": ["Deny"]}})
