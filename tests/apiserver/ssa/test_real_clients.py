"""Server-side apply through real clients: kubectl v1.36.3 and helm v4.2.3 against `haru up`.

Each test uses its own namespace. What is checked is what a user sees: kubectl's own error text for
a conflict, the field ownership kubectl shows with --show-managed-fields, and fields that go away
when the configuration stops applying them.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import Cluster

pytestmark = pytest.mark.slow
CHART = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "charts", "small")

CONFIG = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {labels}
data: {data}
"""


def _ns(haru: Cluster, name: str) -> str:
    haru.kubectl("create", "namespace", name)
    return name


def _get(haru: Cluster, ns: str, *what: str) -> dict:
    return json.loads(haru.kubectl("-n", ns, "get", *what, "-o", "json", "--show-managed-fields").stdout)


def _owners(obj: dict) -> dict[tuple[str, str], dict]:
    return {(m["manager"], m["operation"]): m["fieldsV1"] for m in obj["metadata"].get("managedFields", [])}


def test_server_side_apply_twice_changes_one_field_and_removes_another(haru: Cluster) -> None:
    ns = _ns(haru, "ssa-twice")
    first = CONFIG.format(labels="{app: web, tier: front}", data="{a: '1', b: '2'}")
    out = haru.kubectl("-n", ns, "apply", "--server-side", "-f", "-", input=first)
    assert "configmap/settings serverside-applied" in out.stdout
    second = CONFIG.format(labels="{app: web}", data="{a: 'changed'}")
    haru.kubectl("-n", ns, "apply", "--server-side", "-f", "-", input=second)
    cm = _get(haru, ns, "configmap", "settings")
    assert cm["data"] == {"a": "changed"}
    assert cm["metadata"]["labels"] == {"app": "web"}
    assert _owners(cm)[("kubectl", "Apply")] == {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}
    haru.kubectl("-n", ns, "apply", "--server-side", "-f", "-", input=second)
    again = _get(haru, ns, "configmap", "settings")
    assert again["metadata"]["resourceVersion"] == cm["metadata"]["resourceVersion"]  # a no-op writes nothing


def test_two_managers_conflict_with_kubectl_text_then_force_takes_ownership(haru: Cluster) -> None:
    ns = _ns(haru, "ssa-conflict")
    haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=a", "-f", "-",
                 input=CONFIG.format(labels="{app: web}", data="{k: one}"))
    clash = haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=b", "-f", "-",
                         input=CONFIG.format(labels="{app: web}", data="{k: two}"), check=False)
    assert clash.returncode == 1
    assert clash.stderr.startswith('error: Apply failed with 1 conflict: conflict with "a": .data.k\n'), clash.stderr
    assert "--force-conflicts" in clash.stderr
    assert _get(haru, ns, "configmap", "settings")["data"] == {"k": "one"}

    haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=b", "--force-conflicts", "-f", "-",
                 input=CONFIG.format(labels="{app: web}", data="{k: two}"))
    cm = _get(haru, ns, "configmap", "settings")
    owners = _owners(cm)
    assert cm["data"] == {"k": "two"}
    assert owners[("b", "Apply")] == {"f:data": {"f:k": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}
    # `a` shared the label with the same value, so it keeps that and loses only the field it lost.
    assert owners[("a", "Apply")] == {"f:metadata": {"f:labels": {"f:app": {}}}}


def test_conflict_with_an_update_manager_names_its_api_version(haru: Cluster) -> None:
    ns = _ns(haru, "ssa-update-owner")
    haru.kubectl("-n", ns, "create", "configmap", "settings", "--from-literal=k=one")
    clash = haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=mine", "-f", "-",
                         input=CONFIG.format(labels="{}", data="{k: two}"), check=False)
    assert 'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.k' in clash.stderr


def test_client_side_apply_then_server_side_apply_migrates_the_managers(haru: Cluster) -> None:
    ns = _ns(haru, "ssa-migrate")
    haru.kubectl("-n", ns, "apply", "-f", "-", input=CONFIG.format(labels="{app: web}", data="{a: '1', b: '2'}"))
    before = _owners(_get(haru, ns, "configmap", "settings"))
    assert ("kubectl-client-side-apply", "Update") in before
    # Changing `a` would conflict with the client-side manager, but the last-applied annotation
    # shows kubectl applied it, so kubectl's server-side apply takes it over; `b` goes away.
    out = haru.kubectl("-n", ns, "apply", "--server-side", "-f", "-",
                       input=CONFIG.format(labels="{app: web}", data="{a: '3'}"))
    assert "serverside-applied" in out.stdout, out.stderr
    assert "Warning" not in out.stderr, out.stderr
    cm = _get(haru, ns, "configmap", "settings")
    owners = _owners(cm)
    assert cm["data"] == {"a": "3"}
    assert ("kubectl-client-side-apply", "Update") not in owners
    assert owners[("kubectl", "Apply")]["f:data"] == {"f:a": {}}
    annotation = cm["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    assert json.loads(annotation)["data"] == {"a": "3"}


def test_a_deployment_keeps_fields_other_managers_own(haru: Cluster) -> None:
    ns = _ns(haru, "ssa-deploy")
    deploy = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: main
        image: {image}
        ports: [{{containerPort: 80}}]
"""
    haru.kubectl("-n", ns, "apply", "--server-side", "-f", "-", input=deploy.format(image="nginx:1.26"))
    haru.kubectl("-n", ns, "set", "env", "deploy/web", "MODE=fast")
    haru.kubectl("-n", ns, "apply", "--server-side", "-f", "-", input=deploy.format(image="nginx:1.27"))
    obj = _get(haru, ns, "deployment", "web")
    container = obj["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.27" and container["env"] == [{"name": "MODE", "value": "fast"}]
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    applied = _owners(obj)[("kubectl", "Apply")]
    ports = applied["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"main"}']["f:ports"]
    assert ports == {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}


def test_helm_install_and_upgrade_apply_server_side(haru: Cluster) -> None:
    ns = _ns(haru, "ssa-helm")
    haru.helm("install", "rel1", CHART, "-n", ns)
    haru.helm("upgrade", "rel1", CHART, "-n", ns, "--set", "greeting=bonjour", "--set", "replicas=2")
    cm = _get(haru, ns, "configmap", "rel1-config")
    assert cm["data"]["greeting"] == "bonjour"
    managers = {m["manager"]: m["operation"] for m in cm["metadata"]["managedFields"]}
    assert managers.get("helm") == "Apply", managers
    deploy = _get(haru, ns, "deployment", "rel1-web")
    assert deploy["spec"]["replicas"] == 2


def test_cleared_managed_fields_make_the_next_apply_meet_before_first_apply(haru: Cluster) -> None:
    ns = _ns(haru, "ssa-cleared")
    haru.kubectl("-n", ns, "create", "configmap", "settings", "--from-literal=k=one")
    haru.kubectl("-n", ns, "patch", "configmap", "settings", "--type=json",
                 "-p", '[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]')
    assert "managedFields" not in _get(haru, ns, "configmap", "settings")["metadata"]
    clash = haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=tool", "-f", "-",
                         input=CONFIG.format(labels="{}", data="{k: two}"), check=False)
    assert 'conflict with "before-first-apply" using v1: .data.k' in clash.stderr, clash.stderr
    haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=tool", "-f", "-",
                 input=CONFIG.format(labels="{}", data="{k: one, j: two}"))
    owners = _owners(_get(haru, ns, "configmap", "settings"))
    assert owners[("before-first-apply", "Update")] == {"f:data": {".": {}, "f:k": {}}}
    assert owners[("tool", "Apply")]["f:data"] == {"f:j": {}, "f:k": {}}


GATEWAY_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gateways.ssa.example.com}
spec:
  group: ssa.example.com
  names: {plural: gateways, singular: gateway, kind: Gateway}
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
              listeners:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
              selector:
                type: object
                x-kubernetes-map-type: atomic
                additionalProperties: {type: string}
"""

GATEWAY = """apiVersion: ssa.example.com/v1
kind: Gateway
metadata: {{name: gw}}
spec:
  listeners: [{listeners}]
"""


def test_custom_resources_merge_list_maps_by_key_between_managers(haru: Cluster) -> None:
    ns = _ns(haru, "ssa-crd")
    haru.kubectl("apply", "--server-side", "-f", "-", input=GATEWAY_CRD)
    haru.kubectl("wait", "--for=condition=Established", "crd/gateways.ssa.example.com", "--timeout=10s")
    haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=team-a", "-f", "-",
                 input=GATEWAY.format(listeners="{name: http, port: 80}"))
    haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=team-b", "-f", "-",
                 input=GATEWAY.format(listeners="{name: https, port: 443}"))
    gw = _get(haru, ns, "gateways.ssa.example.com", "gw")
    assert gw["spec"]["listeners"] == [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    clash = haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=team-b", "-f", "-",
                         input=GATEWAY.format(listeners="{name: http, port: 8080}"), check=False)
    assert 'conflict with "team-a": .spec.listeners[name="http"].port' in clash.stderr, clash.stderr
    haru.kubectl("-n", ns, "apply", "--server-side", "--field-manager=team-a", "-f", "-",
                 input=GATEWAY.format(listeners=""))
    assert _get(haru, ns, "gateways.ssa.example.com", "gw")["spec"]["listeners"] == [{"name": "https", "port": 443}]
