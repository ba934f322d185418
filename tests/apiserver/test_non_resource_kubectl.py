"""Real kubectl v1.36.3 against `haru up`: the /openapi/v2 fallback, componentstatuses, health checks."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.slow

_DEVICE_CLASS = """\
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: 'device.driver == "gpu.example.com"'
"""

_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, description: how many gadgets}
"""


def test_apply_of_an_unserved_version_says_no_matches_for_kind(haru, tmp_path):
    # resource.k8s.io/v1beta1 is not in the v3 root, so kubectl checks fieldValidation support
    # in /openapi/v2 (protobuf); reading it must work for kubectl to get to the mapping error.
    manifest = tmp_path / "dc.yaml"
    manifest.write_text(_DEVICE_CLASS)
    result = haru.kubectl("apply", "-f", str(manifest), check=False)
    assert result.returncode == 1
    assert result.stderr == (
        f'error: resource mapping not found for name: "gpu.example.com" namespace: "" from "{manifest}": '
        'no matches for kind "DeviceClass" in version "resource.k8s.io/v1beta1"\n'
        "ensure CRDs are installed first\n")


def test_explain_reads_the_v2_protobuf_document_and_its_crds(haru, tmp_path):
    out = haru.kubectl("explain", "deployments.spec.replicas", "--output=plaintext-openapiv2").stdout
    assert out.splitlines()[:4] == ["KIND:     Deployment", "VERSION:  apps/v1", "", "FIELD:    replicas <integer>"]
    crd = tmp_path / "crd.yaml"
    crd.write_text(_CRD)
    haru.kubectl("apply", "-f", str(crd))
    haru.kubectl("wait", "--for=condition=Established", "crd/gadgets.example.com")
    deadline = time.monotonic() + 20
    while True:
        result = haru.kubectl("explain", "gadgets.spec", "--output=plaintext-openapiv2", check=False)
        if result.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)  # discovery of the new group can trail the Established condition
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["KIND:     Gadget", "VERSION:  example.com/v1"]
    assert "   size\t<integer>" in lines and "     how many gadgets" in lines


def test_get_componentstatuses_reports_the_store_the_controllers_and_the_scheduler(haru):
    result = haru.kubectl("get", "componentstatuses")
    assert result.stderr == "Warning: v1 ComponentStatus is deprecated in v1.19+\n"
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows[0] == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    assert sorted(rows[1:]) == [["controller-manager", "Healthy", "ok"], ["etcd-0", "Healthy", "ok"],
                                ["scheduler", "Healthy", "ok"]]
    names = haru.kubectl("get", "cs", "-o", "jsonpath={.items[*].metadata.name}").stdout.split()
    for name in names:  # what upstream's e2e "should get componentstatuses" does
        assert haru.kubectl("get", "componentstatuses", name).returncode == 0
    missing = haru.kubectl("get", "cs", "etcd-1", check=False)
    assert missing.returncode == 1 and "Error from server: Component not found: etcd-1" in missing.stderr


def test_get_raw_health_endpoints(haru):
    livez = haru.kubectl("get", "--raw", "/livez?verbose").stdout
    assert livez.splitlines() == ["[+]ping ok", "[+]etcd ok", "[+]poststarthook/start-apiextensions-controllers ok",
                                  "[+]poststarthook/bootstrap-controller ok", "livez check passed"]
    readyz = haru.kubectl("get", "--raw", "/readyz?verbose&exclude=etcd").stdout.splitlines()
    assert "[+]etcd excluded: ok" in readyz and "[+]informer-sync ok" in readyz and readyz[-1] == "readyz check passed"
    assert haru.kubectl("get", "--raw", "/livez/etcd").stdout == "ok"
    assert haru.kubectl("get", "--raw", "/healthz").stdout == "ok"

