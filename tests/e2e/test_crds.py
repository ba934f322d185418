"""CRDs with the real clients: kubectl v1.36.3 and the `kubernetes` 36.0.3 Python client.

The CRD (`tests/apiserver/crds/widget.py`) has two versions, status and scale subresources,
printer columns, defaults and CEL rules. Checked as a person would: `kubectl apply` of the CRD and
of custom resources (valid and invalid), `kubectl get` columns, `kubectl explain`, `kubectl scale`,
CustomObjectsApi CRUD, and `kubectl delete crd` taking the resources and the API with it.
"""

from __future__ import annotations

import json
import time

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from tests.apiserver.crds import widget as w
from tests.conftest import Cluster

pytestmark = pytest.mark.slow


def _apply(haru: Cluster, obj: dict, *extra: str, check: bool = True):  # type: ignore[no-untyped-def]
    return haru.kubectl("apply", "-f", "-", *extra, input=yaml.safe_dump(obj), check=check)


@pytest.fixture(scope="module")
def crd(haru: Cluster) -> Cluster:
    _apply(haru, w.crd())
    haru.kubectl("wait", "--for=condition=Established", f"crd/{w.NAME}", "--timeout=10s")
    return haru


def test_kubectl_applies_valid_widgets_and_shows_the_columns(crd: Cluster) -> None:
    _apply(crd, w.widget("w1", replicas=2, color="red"))
    _apply(crd, w.widget("w2", "v2"))
    out = crd.kubectl("get", "widgets").stdout.splitlines()
    assert out[0].split() == ["NAME", "REPLICAS", "COLOR", "AGE"]
    rows = {line.split()[0]: line.split() for line in out[1:]}
    assert rows["w1"][1:3] == ["2", "red"] and rows["w2"][1:3] == ["1", "blue"]
    wide = crd.kubectl("get", "wd", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "REPLICAS", "COLOR", "READY", "AGE"]
    got = json.loads(crd.kubectl("get", "widgets.v2.example.com", "w1", "-o", "json").stdout)
    assert got["apiVersion"] == "example.com/v2" and got["spec"]["maxReplicas"] == 10
    listed = crd.kubectl("get", "haru-test", "-o", "name").stdout.split()
    assert sorted(listed) == ["widget.example.com/w1", "widget.example.com/w2"]
    selected = crd.kubectl("get", "widgets", "--field-selector", "spec.color=red", "-o", "name").stdout.split()
    assert selected == ["widget.example.com/w1"]


def test_kubectl_shows_the_servers_validation_errors(crd: Cluster) -> None:
    result = _apply(crd, w.widget("bad", replicas=20, maxReplicas=5, color="pink"), check=False)
    assert result.returncode != 0
    assert 'The Widget "bad" is invalid' in result.stderr
    assert 'spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"' in result.stderr
    assert 'spec: Invalid value: "object": replicas must not exceed maxReplicas' in result.stderr
    result = _apply(crd, w.widget("typo", replicas="two"), check=False)
    assert 'spec.replicas: Invalid value: "two": spec.replicas in body must be of type integer: "string"' \
        in result.stderr
    result = _apply(crd, w.widget("unknown", bogus=True), check=False)
    assert result.returncode != 0 and 'unknown field "spec.bogus"' in result.stderr


def test_kubectl_explain_reads_the_crd_schema(crd: Cluster) -> None:
    out = crd.kubectl("explain", "widgets.spec").stdout
    assert "KIND:       Widget" in out and "VERSION:    v2" in out  # v2 outranks v1
    for field in ("color\t<string>", "replicas\t<integer> -required-", "tags\t<[]string>"):
        assert field in out


def test_kubectl_scale_uses_the_scale_subresource(crd: Cluster) -> None:
    _apply(crd, w.widget("sc", replicas=1))
    crd.kubectl("scale", "widget/sc", "--replicas=3")
    got = json.loads(crd.kubectl("get", "widget", "sc", "-o", "json").stdout)
    assert got["spec"]["replicas"] == 3 and got["metadata"]["generation"] == 2


def test_custom_objects_api_crud(crd: Cluster) -> None:
    api = client.CustomObjectsApi(config.new_client_from_config(config_file=crd.kubeconfig))
    args = ("example.com", "v1", "default", "widgets")
    created = api.create_namespaced_custom_object(*args, w.widget("py", replicas=1))
    assert created["spec"]["color"] == "blue" and created["metadata"]["generation"] == 1
    got = api.get_namespaced_custom_object(*args, "py")
    got["spec"]["replicas"] = 4
    replaced = api.replace_namespaced_custom_object(*args, "py", got)
    assert replaced["spec"]["replicas"] == 4 and replaced["metadata"]["generation"] == 2
    patched = api.patch_namespaced_custom_object(*args, "py", {"spec": {"color": "green"}})
    assert patched["spec"]["color"] == "green"
    status = api.patch_namespaced_custom_object_status(*args, "py", {"status": {"replicas": 4}})
    assert status["status"] == {"replicas": 4}
    names = [i["metadata"]["name"] for i in api.list_namespaced_custom_object(*args)["items"]]
    assert "py" in names
    with pytest.raises(ApiException) as invalid:
        api.create_namespaced_custom_object(*args, w.widget("py-bad", replicas=-1))
    assert invalid.value.status == 422
    assert "spec.replicas in body should be greater than or equal to 0" in invalid.value.body
    api.delete_namespaced_custom_object(*args, "py")
    with pytest.raises(ApiException) as missing:
        api.get_namespaced_custom_object(*args, "py")
    assert missing.value.status == 404


def test_deleting_the_crd_removes_widgets_and_the_api(crd: Cluster) -> None:
    _apply(crd, w.widget("last"))
    crd.kubectl("delete", "crd", w.NAME, "--timeout=20s")
    assert "widgets" not in crd.kubectl("api-resources").stdout
    deadline = time.monotonic() + 5
    while "widgets" in crd.kubectl("api-resources", "--api-group=example.com").stdout:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    result = crd.kubectl("get", "widgets", check=False)
    assert result.returncode != 0 and "the server doesn't have a resource type" in result.stderr
