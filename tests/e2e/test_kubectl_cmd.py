"""kubectl v1.36.3 against `haru up`: the API-server behaviours upstream's `test/cmd` suite meets first.

CSR approval, immortal namespaces and their recreation, nodes registered with status, kube's text
for undecodable bodies, CRD schemas with `additionalProperties: true`, and watches that clients
close. The `delete ns --all` test runs last: it removes every namespace the others made.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests import realclients
from tests.apiserver.kinds.csr_requests import request_field
from tests.conftest import Cluster
from tests.e2e.polling import until

pytestmark = pytest.mark.slow


def _csr(name: str) -> str:
    return json.dumps({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                       "metadata": {"name": name},
                       "spec": {"request": request_field(name), "signerName": "kubernetes.io/kube-apiserver-client",
                                "usages": ["client auth"], "username": "someone-else"}})



def test_certificate_approve_and_deny(haru: Cluster) -> None:
    haru.kubectl("create", "-f", "-", input=_csr("csr-approve"))
    haru.kubectl("create", "-f", "-", input=_csr("csr-deny"))
    assert "Pending" in haru.kubectl("get", "csr", "csr-approve").stdout
    out = haru.kubectl("certificate", "approve", "csr-approve").stdout
    assert out.strip() == "certificatesigningrequest.certificates.k8s.io/csr-approve approved"
    haru.kubectl("certificate", "deny", "csr-deny")
    rows = {line.split()[0]: line.split() for line in haru.kubectl("get", "csr", "--no-headers").stdout.splitlines()}
    assert rows["csr-approve"][-1] == "Approved" and rows["csr-deny"][-1] == "Denied"
    assert rows["csr-approve"][3] == "kubernetes-admin"  # REQUESTOR: who created it, not the body's username
    again = haru.kubectl("certificate", "deny", "csr-approve", check=False)
    assert again.returncode != 0 and 'is already Approved' in again.stderr


def test_a_node_is_registered_with_its_capacity(haru: Cluster) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "kubemark-1"},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    haru.kubectl("create", "-f", "-", input=json.dumps(node))
    capacity = haru.kubectl("get", "node", "kubemark-1", "-o", "jsonpath={.status.capacity}").stdout
    assert json.loads(capacity) == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    haru.kubectl("delete", "node", "kubemark-1")


def test_an_undecodable_body_is_a_bad_request_naming_the_kind(haru: Cluster, tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"metadata": {"name": ')
    created = haru.kubectl("create", "--raw", "/api/v1/namespaces", "-f", str(bad), check=False)
    assert created.returncode != 0
    assert ("the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; "
            "json parse error: unexpected end of JSON input") in created.stderr
    replaced = haru.kubectl("replace", "--raw", "/api/v1/namespaces/default", "-f", str(bad), check=False)
    assert replaced.returncode != 0 and "(must be of type Namespace)" in replaced.stderr


def test_a_crd_may_put_additional_properties_true_beside_properties(haru: Cluster) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "bars.cmd.example.com"},
           "spec": {"group": "cmd.example.com", "scope": "Namespaced",
                    "names": {"plural": "bars", "singular": "bar", "kind": "Bar"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {
                            "type": "object", "properties": {"size": {"type": "string"}},
                            "additionalProperties": True}}}}}]}}
    haru.kubectl("apply", "-f", "-", input=json.dumps(crd))
    haru.kubectl("wait", "--for=condition=Established", "crd/bars.cmd.example.com", "--timeout=30s")
    crd["metadata"]["name"] = "bazs.cmd.example.com"
    crd["spec"]["names"] = {"plural": "bazs", "singular": "baz", "kind": "Baz"}
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["additionalProperties"] = False
    refused = haru.kubectl("apply", "-f", "-", input=json.dumps(crd), check=False)
    assert refused.returncode != 0
    assert ("spec.versions[0].schema.openAPIV3Schema.properties[spec].additionalProperties: "
            "Forbidden: additionalProperties and properties are mutual exclusive") in refused.stderr


def test_system_namespaces_survive_delete_all(haru: Cluster) -> None:
    refused = haru.kubectl("delete", "namespace", "default", check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == \
        'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted'
    haru.kubectl("create", "namespace", "cmd-doomed")
    lease_uid = haru.kubectl("get", "ns", "kube-node-lease", "-o", "jsonpath={.metadata.uid}").stdout
    everything = haru.kubectl("delete", "namespace", "--all", "--wait=false", check=False)
    assert everything.returncode == 1
    for name in ("default", "kube-system", "kube-public"):
        assert f'namespaces "{name}" is forbidden: this namespace may not be deleted' in everything.stderr
    assert 'namespace "cmd-doomed" deleted' in everything.stdout
    assert 'namespace "kube-node-lease" deleted' in everything.stdout

    def lease_is_back() -> bool:
        got = haru.kubectl("get", "ns", "kube-node-lease", "-o", "json", check=False)
        if got.returncode != 0:
            return False
        ns = json.loads(got.stdout)
        return ns["metadata"]["uid"] != lease_uid and ns["status"]["phase"] == "Active"

    until(lease_is_back, "kube-node-lease was recreated", rounds=300)
    names = haru.kubectl("get", "ns", "-o", "name").stdout.split()
    assert {"namespace/default", "namespace/kube-system", "namespace/kube-public"} <= set(names)
    haru.kubectl("-n", "default", "delete", "service", "kubernetes")
    until(lambda: haru.kubectl("-n", "default", "get", "service", "kubernetes", check=False).returncode == 0,
          "default/kubernetes was recreated", rounds=300)
