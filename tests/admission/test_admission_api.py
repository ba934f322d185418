"""The admission chain behind the API (raw HTTP on an in-process server): policies created through
the API take effect on the next request, refusals come back as upstream's Status, warnings as
`Warning` headers, and the server keeps VAP type checking and ResourceQuota usage in status."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from apiserver import runner
from tests.conftest import InProcess

A = "/apis/admissionregistration.k8s.io/v1"
POD_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
LIMITS = "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits))"


def vap(name: str, expression: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": [POD_RULE]},
                     "validations": [{"expression": expression, "message": f"{name} says no"}], **spec}}


def vapb(name: str, policy: str, actions: list[str]) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": {"policyName": policy, "validationActions": actions}}


def pod(name: str, limits: bool = False) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "nginx"}
    if limits:
        container["resources"] = {"limits": {"cpu": "100m", "memory": "64Mi"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container]}}


async def create(api: InProcess, path: str, obj: dict[str, Any]) -> tuple[int, Any, Any]:
    return await api.request("POST", path, json=obj)


async def created(api: InProcess, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    status, body, _ = await create(api, path, obj)
    assert status == 201, body
    return body


async def eventually(check: Any, timeout: float = 5.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = await check()
        if result or asyncio.get_running_loop().time() > deadline:
            return result
        await asyncio.sleep(0.05)


async def test_a_policy_denies_from_the_next_request_on_and_warn_mode_sends_a_warning(api: InProcess):
    await created(api, f"{A}/validatingadmissionpolicies", vap("require-limits", LIMITS))
    await created(api, f"{A}/validatingadmissionpolicybindings", vapb("deny", "require-limits", ["Deny"]))
    status, body, _ = await create(api, "/api/v1/namespaces/default/pods", pod("bare"))
    assert status == 422, body
    assert body["reason"] == "Invalid"
    assert body["message"] == ("pods \"bare\" is forbidden: ValidatingAdmissionPolicy 'require-limits' with binding "
                               "'deny' denied request: require-limits says no")
    await created(api, "/api/v1/namespaces/default/pods", pod("limited", limits=True))

    status, body, _ = await api.request("DELETE", f"{A}/validatingadmissionpolicybindings/deny")
    assert status == 200, body
    await created(api, f"{A}/validatingadmissionpolicybindings", vapb("warn", "require-limits", ["Warn"]))
    status, body, headers = await create(api, "/api/v1/namespaces/default/pods", pod("warned"))
    assert status == 201, body
    assert headers.getall("Warning") == ['299 - "Validation failed for ValidatingAdmissionPolicy \'require-limits\' '
                                         'with binding \'warn\': require-limits says no"']


async def test_malformed_cel_is_refused_at_create_time(api: InProcess):
    status, body, _ = await create(api, f"{A}/validatingadmissionpolicies", vap("broken", "object.spec.(("))
    assert status == 422, body
    assert body["details"]["causes"][0]["field"] == "spec.validations[0].expression"
    assert body["message"].startswith('ValidatingAdmissionPolicy.admissionregistration.k8s.io "broken" is invalid: '
                                      'spec.validations[0].expression: Invalid value: "object.spec.((": compilation '
                                      "failed: ERROR: <input>:1:13: Syntax error:")
    status, body, _ = await api.request("GET", f"{A}/validatingadmissionpolicies/broken")
    assert status == 404


@pytest.mark.parametrize("failure_policy, expected_status", [("Fail", 422), ("Ignore", 201)])
async def test_a_runtime_error_follows_the_failure_policy(api: InProcess, failure_policy: str, expected_status: int):
    await created(api, f"{A}/validatingadmissionpolicies",
                  vap("zone", "object.spec.nodeSelector.zone == 'a'", failurePolicy=failure_policy))
    await created(api, f"{A}/validatingadmissionpolicybindings", vapb("zone", "zone", ["Deny"]))
    status, body, _ = await create(api, "/api/v1/namespaces/default/pods", pod("p"))
    assert status == expected_status, body
    if status == 422:
        assert body["message"] == ("pods \"p\" is forbidden: ValidatingAdmissionPolicy 'zone' with binding 'zone' "
                                   "denied request: expression 'object.spec.nodeSelector.zone == 'a'' resulted in "
                                   "error: no such key: nodeSelector")


async def test_a_mutating_policy_failure_is_a_403(api: InProcess):
    await created(api, f"{A}/mutatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "zone-label"},
        "spec": {"matchConstraints": {"resourceRules": [POD_RULE]}, "reinvocationPolicy": "Never",
                 "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
                     "expression": "Object{metadata: Object.metadata{labels: {'zone': object.spec.nodeSelector.zone}}}"
                 }}]}})
    await created(api, f"{A}/mutatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": "zone-label"}, "spec": {"policyName": "zone-label"}})
    status, body, _ = await create(api, "/api/v1/namespaces/default/pods", pod("p"))
    assert (status, body["reason"]) == (403, "Invalid"), body
    assert body["message"].startswith("policy 'zone-label' with binding 'zone-label' denied request: expression ")
    pod_with_zone = pod("q")
    pod_with_zone["spec"]["nodeSelector"] = {"zone": "east"}
    body = await created(api, "/api/v1/namespaces/default/pods", pod_with_zone)
    assert body["metadata"]["labels"] == {"zone": "east"}


async def test_a_namespace_relabelled_or_deleted_is_seen_by_the_next_request(api: InProcess):
    # NamespaceLifecycle and the namespaceSelector read namespaces through one cache.
    await created(api, "/api/v1/namespaces", {"metadata": {"name": "tenant", "labels": {"multi-tenant": "true"}}})
    await created(api, f"{A}/mutatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "userns"},
        "spec": {"matchConstraints": {"resourceRules": [POD_RULE],
                                      "namespaceSelector": {"matchLabels": {"multi-tenant": "true"}}},
                 "reinvocationPolicy": "Never",
                 "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
                     "expression": "Object{spec: Object.spec{hostUsers: false}}"}}]}})
    await created(api, f"{A}/mutatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": "userns"}, "spec": {"policyName": "userns"}})
    body = await created(api, "/api/v1/namespaces/tenant/pods", pod("a"))
    assert body["spec"]["hostUsers"] is False
    status, _, _ = await api.request("PATCH", "/api/v1/namespaces/tenant", data=b'{"metadata":{"labels":null}}',
                                     headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200
    body = await created(api, "/api/v1/namespaces/tenant/pods", pod("b"))
    assert "hostUsers" not in body["spec"]
    status, _, _ = await api.request("DELETE", "/api/v1/namespaces/tenant")
    assert status == 200
    status, body, _ = await create(api, "/api/v1/namespaces/tenant/pods", pod("c"))
    assert status in (403, 404), body  # terminating, or already gone
    if status == 403:
        assert body["message"].endswith("because it is being terminated"), body


async def test_delete_is_validated_and_refused_with_the_stored_object(api: InProcess):
    await created(api, "/api/v1/namespaces/default/configmaps",
                  {"metadata": {"name": "keep", "labels": {"protected": "true"}}})
    rule = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]}
    await created(api, f"{A}/validatingadmissionpolicies", {
        **vap("protect", "!('protected' in oldObject.metadata.labels)"),
        "spec": {"matchConstraints": {"resourceRules": [rule]},
                 "validations": [{"expression": "!('protected' in oldObject.metadata.labels)",
                                  "reason": "Forbidden", "message": "protected"}]}})
    await created(api, f"{A}/validatingadmissionpolicybindings", vapb("protect", "protect", ["Deny"]))
    status, body, _ = await api.request("DELETE", "/api/v1/namespaces/default/configmaps/keep")
    assert (status, body["reason"]) == (403, "Forbidden"), body
    status, _, _ = await api.request("GET", "/api/v1/namespaces/default/configmaps/keep")
    assert status == 200


async def test_type_checking_warnings_are_written_to_the_policy_status(api: InProcess):
    policy = vap("typo", "object.spec.containerz.size() > 0")
    await created(api, f"{A}/validatingadmissionpolicies", policy)

    async def status() -> Any:
        _, body, _ = await api.request("GET", f"{A}/validatingadmissionpolicies/typo")
        return body.get("status")

    written = await eventually(status)
    assert written == {"observedGeneration": 1, "typeChecking": {"expressionWarnings": [{
        "fieldRef": "spec.validations[0].expression",
        "warning": "/v1, Kind=Pod: ERROR: <input>:1:12: undefined field 'containerz'\n"
                   " | object.spec.containerz.size() > 0\n | ...........^\n"}]}}


async def test_quota_usage_is_kept_in_status_and_enforced(api: InProcess):
    await created(api, "/api/v1/namespaces/default/resourcequotas",
                  {"metadata": {"name": "pods"}, "spec": {"hard": {"pods": "1", "limits.cpu": "1"}}})
    await created(api, "/api/v1/namespaces/default/pods", pod("one", limits=True))

    async def used() -> Any:
        _, body, _ = await api.request("GET", "/api/v1/namespaces/default/resourcequotas/pods")
        return (body.get("status") or {}).get("used") == {"pods": "1", "limits.cpu": "100m"} and body["status"]

    assert await eventually(used) == {"hard": {"pods": "1", "limits.cpu": "1"},
                                      "used": {"pods": "1", "limits.cpu": "100m"}}
    status, body, _ = await create(api, "/api/v1/namespaces/default/pods", pod("two", limits=True))
    assert status == 403
    assert body["message"] == ('pods "two" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, '
                               "limited: pods=1")


async def test_a_quota_or_limit_range_created_after_some_pods_applies_to_the_next_one(api: InProcess):
    """The server remembers a namespace's quotas and limit ranges between writes; a new one counts."""
    await created(api, "/api/v1/namespaces/default/pods", pod("before"))  # nothing to enforce yet
    await created(api, "/api/v1/namespaces/default/limitranges", {"metadata": {"name": "defaults"}, "spec": {
        "limits": [{"type": "Container", "default": {"cpu": "250m"}}]}})
    status, body, _ = await create(api, "/api/v1/namespaces/default/pods", pod("after"))
    assert status == 201, body
    assert body["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "250m"}
    await created(api, "/api/v1/namespaces/default/resourcequotas",
                  {"metadata": {"name": "none"}, "spec": {"hard": {"configmaps": "0"}}})
    status, body, _ = await create(api, "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}})
    assert status == 403, body
    assert body["message"].startswith('configmaps "c" is forbidden: exceeded quota: none')


async def test_the_system_priority_classes_exist_and_set_pod_priority(api: InProcess):
    status, body, _ = await api.request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/system-cluster-critical")
    assert status == 200 and body["value"] == 2000000000
    critical = pod("critical")
    critical["spec"]["priorityClassName"] = "system-node-critical"
    body = await created(api, "/api/v1/namespaces/kube-system/pods", critical)
    assert body["spec"]["priority"] == 2000001000


async def test_api_policies_may_not_use_the_static_suffix(api: InProcess):
    status, body, _ = await create(api, f"{A}/validatingadmissionpolicies", vap("x.static.k8s.io", "true"))
    assert status == 422
    assert "are reserved for static manifest-based configurations" in body["message"]


MANIFEST = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: guard-policies.static.k8s.io
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["admissionregistration.k8s.io"]
      apiVersions: ["v1"]
      operations: ["DELETE"]
      resources: ["validatingadmissionpolicies"]
  validations:
  - expression: "!oldObject.metadata.name.startsWith('core-')"
    reason: Forbidden
    message: core policies stay
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: guard-policies.static.k8s.io
spec:
  policyName: guard-policies.static.k8s.io
  validationActions: [Deny]
"""


@pytest_asyncio.fixture
async def with_manifests(tmp_path: Path) -> AsyncIterator[InProcess]:
    manifests_dir = tmp_path / "manifests"
    manifests_dir.mkdir()
    (manifests_dir / "guard.yaml").write_text(MANIFEST)
    running = await runner.start(str(tmp_path / "data"), port=0, admission_manifests=str(manifests_dir))
    session = aiohttp.ClientSession()
    try:
        yield InProcess(running, session)
    finally:
        await session.close()
        await running.stop()


async def test_manifest_policies_apply_from_the_start_and_are_not_in_the_api(with_manifests: InProcess):
    api = with_manifests
    status, body, _ = await api.request("GET", f"{A}/validatingadmissionpolicies")
    assert status == 200 and body["items"] == []
    status, _, _ = await api.request("GET", f"{A}/validatingadmissionpolicies/guard-policies.static.k8s.io")
    assert status == 404
    status, _, _ = await api.request("DELETE", f"{A}/validatingadmissionpolicies/guard-policies.static.k8s.io")
    assert status == 404
    # A manifest policy guards API policies, which API policies themselves never can.
    await created(api, f"{A}/validatingadmissionpolicies", vap("core-limits", LIMITS))
    status, body, _ = await api.request("DELETE", f"{A}/validatingadmissionpolicies/core-limits")
    assert status == 403, body
    assert body["message"] == ('validatingadmissionpolicies.admissionregistration.k8s.io "core-limits" is forbidden: '
                               "ValidatingAdmissionPolicy 'guard-policies.static.k8s.io' with binding "
                               "'guard-policies.static.k8s.io' denied request: core policies stay")


async def test_a_bad_manifest_stops_the_server_from_starting(tmp_path: Path):
    from admission.policy import manifests

    manifests_dir = tmp_path / "manifests"
    manifests_dir.mkdir()
    (manifests_dir / "bad.yaml").write_text(MANIFEST.replace("guard-policies.static.k8s.io", "guard"))
    with pytest.raises(manifests.ManifestError, match="must have a name ending with '.static.k8s.io'"):
        await runner.start(str(tmp_path / "data"), port=0, admission_manifests=str(manifests_dir))


async def test_concurrent_generate_name_creates_cannot_overrun_a_quota(api: InProcess):
    """A controller's burst of generateName pods: each admitted one counts against the next at once."""
    await created(api, "/api/v1/namespaces/default/resourcequotas",
                  {"metadata": {"name": "pods"}, "spec": {"hard": {"pods": "2"}}})
    body = {"metadata": {"generateName": "burst-"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    answers = await asyncio.gather(*(create(api, "/api/v1/namespaces/default/pods", body) for _ in range(3)))
    assert sorted(status for status, _, _ in answers) == [201, 201, 403]
