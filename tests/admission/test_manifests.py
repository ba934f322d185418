"""Manifest-based admission configuration (KEP-5793): what `load(directory)` accepts and refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from admission.policy import manifests
from apiserver.kinds.admission_policies import prepare_manifest

POLICY = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {name}
spec:
  matchConstraints:
    resourceRules:
    - {{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}}
  validations:
  - expression: "true"
"""
BINDING = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {name}
spec:
  policyName: {policy}
  validationActions: [Deny]
"""


def _write(directory: Path, name: str, text: str) -> None:
    (directory / name).write_text(text)


def test_policies_and_bindings_load_defaulted_from_yaml_documents_and_lists(tmp_path: Path):
    _write(tmp_path, "a.yaml", POLICY.format(name="a.static.k8s.io") + "---\n"
           + BINDING.format(name="a-b.static.k8s.io", policy="a.static.k8s.io"))
    _write(tmp_path, "b.json", '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": '
           '"admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy", "metadata": {"name": '
           '"m.static.k8s.io"}, "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": '
           '["v1"], "operations": ["CREATE"], "resources": ["pods"]}]}, "reinvocationPolicy": "Never", "mutations": '
           '[{"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}]}}]}')
    _write(tmp_path, "notes.txt", "ignored")
    loaded = manifests.load(str(tmp_path), prepare_manifest)
    assert [p["metadata"]["name"] for p in loaded.validating] == ["a.static.k8s.io"]
    assert loaded.validating[0]["spec"]["failurePolicy"] == "Fail"
    assert [b["metadata"]["name"] for b in loaded.validating_bindings] == ["a-b.static.k8s.io"]
    assert [p["metadata"]["name"] for p in loaded.mutating] == ["m.static.k8s.io"]


@pytest.mark.parametrize("text, message", [
    (POLICY.format(name="plain"), "'plain' in file '{file}' must have a name ending with '.static.k8s.io'"),
    (BINDING.format(name="b.static.k8s.io", policy="gone.static.k8s.io"),
     "binding 'b.static.k8s.io' references policy 'gone.static.k8s.io' which does not exist in the manifest "
     "directory"),
    (POLICY.format(name="a.static.k8s.io") + "---\n" + POLICY.format(name="a.static.k8s.io"),
     "duplicate name 'a.static.k8s.io' found in file '{file}' (previously seen in '{file}')"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
     "error loading {file}: unsupported resource type /v1, Kind=ConfigMap"),
    (POLICY.format(name="p.static.k8s.io").replace('expression: "true"', 'expression: "1"'),
     "ValidatingAdmissionPolicy 'p.static.k8s.io': spec.validations[0].expression: Invalid value: \"1\": must "
     "evaluate to bool but got int"),
    (POLICY.format(name="p.static.k8s.io").replace("spec:\n", "spec:\n  paramKind: {apiVersion: v1, kind: ConfigMap}\n"),
     "ValidatingAdmissionPolicy 'p.static.k8s.io': spec.paramKind is not supported for static manifests"),
])
def test_invalid_manifests_stop_the_load(tmp_path: Path, text: str, message: str):
    _write(tmp_path, "m.yaml", text)
    with pytest.raises(manifests.ManifestError) as failed:
        manifests.load(str(tmp_path), prepare_manifest)
    assert message.format(file=tmp_path / "m.yaml") in str(failed.value)
