"""Issue #4's admission acceptance with real clients against a real `haru up`: kubectl v1.36.3 and
the kubernetes 36.0.3 Python client create the policies; pods show (or refuse) their effects.

Each test works in its own namespaces and removes its cluster-scoped policies, so order does not
matter. End-to-end with a real process and real binaries: marked slow, as tests/e2e is.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import Cluster, start_haru, stop_haru

pytestmark = pytest.mark.slow

USERNS_APPLY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: user-namespaces
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["pods"]
    namespaceSelector:
      matchLabels:
        multi-tenant: "true"
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{spec: Object.spec{hostUsers: false}}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: user-namespaces
spec:
  policyName: user-namespaces
"""
USERNS_JSONPATCH = USERNS_APPLY.replace("""  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{spec: Object.spec{hostUsers: false}}"
""", """  - patchType: JSONPatch
    jsonPatch:
      expression: "[JSONPatch{op: 'add', path: '/spec/hostUsers', value: false}]"
""")

REQUIRE_LIMITS = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: require-limits
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["pods"]
    namespaceSelector:
      matchLabels:
        limits: required
  validations:
  - expression: "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits))"
    messageExpression: "'every container needs resource limits (' + object.metadata.name + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: require-limits
spec:
  policyName: require-limits
  validationActions: [{action}]
"""


def _namespace(haru: Cluster, name: str, **labels: str) -> None:
    haru.kubectl("create", "namespace", name)
    if labels:
        haru.kubectl("label", "namespace", name, *[f"{k}={v}" for k, v in labels.items()])


def _host_users(haru: Cluster, namespace: str, pod: str) -> str:
    return haru.kubectl("-n", namespace, "get", "pod", pod, "-o", "jsonpath={.spec.hostUsers}").stdout


@pytest.mark.parametrize("manifest, suffix", [(USERNS_APPLY, "apply"), (USERNS_JSONPATCH, "patch")],
                         ids=["ApplyConfiguration", "JSONPatch"])
def test_host_users_false_is_injected_into_exactly_the_multi_tenant_pods(haru: Cluster, manifest: str, suffix: str):
    tenant, plain = f"tenant-{suffix}", f"plain-{suffix}"
    _namespace(haru, tenant, **{"multi-tenant": "true"})
    _namespace(haru, plain)
    haru.kubectl("apply", "-f", "-", input=manifest)
    try:
        for namespace in (tenant, plain):
            haru.kubectl("-n", namespace, "run", "web", "--image=nginx", "--restart=Never")
        assert _host_users(haru, tenant, "web") == "false"
        assert _host_users(haru, plain, "web") == ""
        # kubectl create (protobuf body) and a pod that already says hostUsers: true are mutated too.
        haru.kubectl("-n", tenant, "create", "-f", "-", input=json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "explicit"},
            "spec": {"hostUsers": True, "containers": [{"name": "c", "image": "nginx"}]}}))
        assert _host_users(haru, tenant, "explicit") == "false"
    finally:
        haru.kubectl("delete", "-f", "-", input=manifest)


def test_a_policy_denies_pods_without_limits_and_warn_mode_prints_a_warning(haru: Cluster):
    _namespace(haru, "limits-deny", limits="required")
    _namespace(haru, "limits-free")
    haru.kubectl("apply", "-f", "-", input=REQUIRE_LIMITS.format(action="Deny"))
    try:
        refused = haru.kubectl("-n", "limits-deny", "run", "bare", "--image=nginx", "--restart=Never", check=False)
        assert refused.returncode != 0
        assert ("ValidatingAdmissionPolicy 'require-limits' with binding 'require-limits' denied request: every "
                "container needs resource limits (bare)") in refused.stderr
        haru.kubectl("-n", "limits-free", "run", "bare", "--image=nginx", "--restart=Never")
        haru.kubectl("-n", "limits-deny", "create", "-f", "-", input=json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "limited"},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "100m"}}}]}}))

        haru.kubectl("apply", "-f", "-", input=REQUIRE_LIMITS.format(action="Warn"))
        warned = haru.kubectl("-n", "limits-deny", "run", "warned", "--image=nginx", "--restart=Never")
        assert ("Warning: Validation failed for ValidatingAdmissionPolicy 'require-limits' with binding "
                "'require-limits': every container needs resource limits (warned)") in warned.stderr
        assert "pod/warned created" in warned.stdout
    finally:
        haru.kubectl("delete", "-f", "-", input=REQUIRE_LIMITS.format(action="Warn"))


def test_malformed_cel_is_refused_at_create_with_the_parse_error(haru: Cluster):
    broken = REQUIRE_LIMITS.format(action="Deny").replace(
        "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits))", "object.spec.containers.all(c,")
    result = haru.kubectl("apply", "-f", "-", input=broken.split("---")[0], check=False)
    assert result.returncode != 0
    assert "spec.validations[0].expression: Invalid value: \"object.spec.containers.all(c,\": compilation failed: " \
           "ERROR: <input>:1:30: Syntax error: mismatched input '<EOF>'" in result.stderr


def test_the_python_client_sees_upstreams_statuses(haru: Cluster):
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=haru.kubeconfig)
    admission = client.AdmissionregistrationV1Api(api_client)
    core = client.CoreV1Api(api_client)
    rule = client.V1NamedRuleWithOperations(api_groups=[""], api_versions=["v1"], operations=["CREATE"],
                                            resources=["configmaps"])
    bad = client.V1ValidatingAdmissionPolicy(
        metadata=client.V1ObjectMeta(name="py-broken"),
        spec=client.V1ValidatingAdmissionPolicySpec(
            match_constraints=client.V1MatchResources(resource_rules=[rule]),
            validations=[client.V1Validation(expression="object.data.(")]))
    with pytest.raises(client.ApiException) as refused:
        admission.create_validating_admission_policy(bad)
    assert refused.value.status == 422 and "compilation failed" in refused.value.body

    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-policies")))
    failing = client.V1ValidatingAdmissionPolicy(
        metadata=client.V1ObjectMeta(name="py-runtime"),
        spec=client.V1ValidatingAdmissionPolicySpec(
            failure_policy="Fail",
            match_constraints=client.V1MatchResources(
                resource_rules=[rule],
                namespace_selector=client.V1LabelSelector(match_labels={"kubernetes.io/metadata.name": "py-policies"})),
            validations=[client.V1Validation(expression="object.data.mode == 'strict'")]))
    admission.create_validating_admission_policy(failing)
    admission.create_validating_admission_policy_binding(client.V1ValidatingAdmissionPolicyBinding(
        metadata=client.V1ObjectMeta(name="py-runtime"),
        spec=client.V1ValidatingAdmissionPolicyBindingSpec(policy_name="py-runtime", validation_actions=["Deny"])))
    try:
        with pytest.raises(client.ApiException) as denied:
            core.create_namespaced_config_map("py-policies", client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="no-data"), data={"other": "x"}))
        assert denied.value.status == 422
        assert ("expression 'object.data.mode == 'strict'' resulted in error: no such key: mode"
                in json.loads(denied.value.body)["message"])
        core.create_namespaced_config_map("py-policies", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="strict"), data={"mode": "strict"}))
    finally:
        admission.delete_validating_admission_policy_binding("py-runtime")
        admission.delete_validating_admission_policy("py-runtime")


def test_haru_up_loads_manifest_policies_that_the_api_cannot_touch(tmp_path: Path):
    manifests = tmp_path / "admission"
    manifests.mkdir()
    (manifests / "no-latest.yaml").write_text(textwrap.dedent("""\
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata:
          name: no-latest.static.k8s.io
        spec:
          matchConstraints:
            resourceRules:
            - apiGroups: [""]
              apiVersions: ["v1"]
              operations: ["CREATE"]
              resources: ["pods"]
          validations:
          - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
            message: "no :latest images"
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicyBinding
        metadata:
          name: no-latest.static.k8s.io
        spec:
          policyName: no-latest.static.k8s.io
          validationActions: [Deny]
        """))
    cluster = start_haru(str(tmp_path / "data"), "--admission-manifests", str(manifests))
    try:
        refused = cluster.kubectl("run", "latest", "--image=nginx:latest", "--restart=Never", check=False)
        assert "ValidatingAdmissionPolicy 'no-latest.static.k8s.io' with binding 'no-latest.static.k8s.io' " \
               "denied request: no :latest images" in refused.stderr
        cluster.kubectl("run", "pinned", "--image=nginx:1.27", "--restart=Never")
        listed = cluster.kubectl("get", "validatingadmissionpolicies", "-o", "name").stdout
        assert "no-latest" not in listed
        gone = cluster.kubectl("delete", "validatingadmissionpolicy", "no-latest.static.k8s.io", check=False)
        assert gone.returncode != 0 and "NotFound" in gone.stderr
        taken = cluster.kubectl("create", "-f", "-", check=False, input=(manifests / "no-latest.yaml").read_text())
        assert taken.returncode != 0 and "are reserved for static manifest-based configurations" in taken.stderr
    finally:
        stop_haru(cluster)
