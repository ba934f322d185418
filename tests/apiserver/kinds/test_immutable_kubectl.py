"""Immutable fields and DRA admin access through kubectl v1.36.3 against a real `haru up`.

kubectl prints the server's Status message ("The ResourceClaim "rc1" is invalid: …") and exits 1;
each refused write must leave the stored object as it was.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.conftest import Cluster

pytestmark = pytest.mark.slow

CLAIM = textwrap.dedent("""\
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {{name: {name}, namespace: {namespace}}}
    spec:
      devices:
        requests:
        - name: gpu
          exactly: {{deviceClassName: gpu.example.com, adminAccess: {admin}}}
    """)


def _ns(haru: Cluster, name: str, *labels: str) -> str:
    haru.kubectl("create", "namespace", name)
    if labels:
        haru.kubectl("label", "namespace", name, *labels)
    return name


def test_patching_a_claims_spec_is_refused_and_changes_nothing(haru: Cluster) -> None:
    ns = _ns(haru, "imm-claims")
    haru.kubectl("apply", "-f", "-", input=CLAIM.format(name="rc1", namespace=ns, admin="false"))
    patch = '{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"other.example.com"}}]}}}'
    result = haru.kubectl("-n", ns, "patch", "resourceclaim", "rc1", "--type=merge", "-p", patch, check=False)
    assert result.returncode == 1
    assert 'The ResourceClaim "rc1" is invalid: spec: Invalid value: {"devices":{"requests":[{"name":"gpu","exactly":' \
           '{"deviceClassName":"other.example.com"' in result.stderr
    assert result.stderr.rstrip().endswith("field is immutable")
    stored = json.loads(haru.kubectl("-n", ns, "get", "resourceclaim", "rc1", "-o", "json").stdout)
    assert stored["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"
    # Metadata stays writable.
    haru.kubectl("-n", ns, "label", "resourceclaim", "rc1", "team=ml")


def test_admin_access_needs_the_namespace_label(haru: Cluster) -> None:
    plain = _ns(haru, "imm-plain")
    admins = _ns(haru, "imm-admins", "resource.kubernetes.io/admin-access=true")
    refused = haru.kubectl("apply", "-f", "-", input=CLAIM.format(name="rc1", namespace=plain, admin="true"), check=False)
    assert refused.returncode == 1
    assert ('The ResourceClaim "rc1" is invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access to '
            'devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace'
            in refused.stderr)
    assert haru.kubectl("-n", plain, "get", "resourceclaim", "rc1", check=False).returncode == 1
    haru.kubectl("apply", "-f", "-", input=CLAIM.format(name="rc1", namespace=admins, admin="true"))


def test_other_kinds_refuse_their_fixed_fields(haru: Cluster) -> None:
    ns = _ns(haru, "imm-other")
    haru.kubectl("-n", ns, "create", "role", "reader", "--verb=get", "--resource=pods")
    haru.kubectl("-n", ns, "create", "rolebinding", "rb1", "--role=reader", "--user=ann")
    result = haru.kubectl("-n", ns, "patch", "rolebinding", "rb1", "--type=merge",
                          "-p", '{"roleRef":{"name":"writer"}}', check=False)
    assert result.returncode == 1
    assert ('The RoleBinding "rb1" is invalid: roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io",'
            '"kind":"Role","name":"writer"}: cannot change roleRef') in result.stderr

    workload = textwrap.dedent(f"""\
        apiVersion: scheduling.k8s.io/v1alpha2
        kind: Workload
        metadata: {{name: train, namespace: {ns}}}
        spec:
          podGroupTemplates:
          - name: workers
            schedulingPolicy: {{gang: {{minCount: 4}}}}
        """)
    haru.kubectl("apply", "-f", "-", input=workload)
    result = haru.kubectl("-n", ns, "apply", "-f", "-", input=workload.replace("minCount: 4", "minCount: 8"), check=False)
    assert result.returncode == 1
    assert 'spec.podGroupTemplates: Invalid value: null: field is immutable' in result.stderr

    haru.kubectl("apply", "-f", "-", input="apiVersion: storage.k8s.io/v1\nkind: StorageClass\n"
                                            "metadata: {name: imm-fast}\nprovisioner: csi.example.com\n")
    result = haru.kubectl("patch", "storageclass", "imm-fast", "--type=merge",
                          "-p", '{"provisioner":"other.example.com"}', check=False)
    assert result.returncode == 1
    assert ('The StorageClass "imm-fast" is invalid: provisioner: Forbidden: updates to provisioner are forbidden.'
            in result.stderr)
