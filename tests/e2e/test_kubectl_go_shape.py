"""kubectl v1.36.3 against a real `haru up`: what Go's omitempty means for diff and patch.

`kubectl diff` sends a dry-run patch that leaves `metadata.annotations: {}` behind; kube's Go
encoder drops it, so the diff shows only the edit. A patch to `labels: {}` stores no labels.
"""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from tests.conftest import Cluster

pytestmark = pytest.mark.slow

_CONFIGMAP = textwrap.dedent("""\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: settings
      namespace: {ns}
    data:
      mode: "{mode}"
      level: info
""")


def test_diff_after_a_server_side_apply_shows_only_the_edit(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "goshape-diff")
    path = os.path.join(haru.data_dir, "goshape-settings.yaml")
    with open(path, "w") as f:
        f.write(_CONFIGMAP.format(ns="goshape-diff", mode="fast"))
    haru.kubectl("apply", "--server-side", "-f", path)
    with open(path, "w") as f:
        f.write(_CONFIGMAP.format(ns="goshape-diff", mode="slow"))
    result = haru.kubectl("diff", "-f", path, check=False)
    assert result.returncode == 1, result.stderr  # 1: differences found
    changed = [line for line in result.stdout.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ['-  mode: fast', '+  mode: slow'], result.stdout
    assert "annotations: {}" not in result.stdout
    # The server-side flavour (a dry-run apply) agrees, and so do the managedFields it hides.
    result = haru.kubectl("diff", "--server-side", "-f", path, check=False)
    assert result.returncode == 1, result.stderr
    changed = [line for line in result.stdout.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ['-  mode: fast', '+  mode: slow'], result.stdout


def test_patching_labels_to_an_empty_map_leaves_no_labels_key(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "goshape-patch")
    haru.kubectl("-n", "goshape-patch", "create", "configmap", "plain", "--from-literal=a=1")
    haru.kubectl("-n", "goshape-patch", "patch", "configmap", "plain", "-p", '{"metadata":{"labels":{}}}')
    obj = json.loads(haru.kubectl("-n", "goshape-patch", "get", "configmap", "plain", "-o", "json").stdout)
    assert "labels" not in obj["metadata"] and obj["data"] == {"a": "1"}
    for entry in obj["metadata"].get("managedFields", []):
        assert "f:labels" not in json.dumps(entry.get("fieldsV1", {}))


def test_the_python_client_sees_a_409_body_byte_for_byte(haru: Cluster) -> None:
    """The upstream Python-client e2e suite compares ApiException.body as a string."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    api = client.CoreV1Api(config.new_client_from_config(config_file=haru.kubeconfig))
    api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="goshape-py")))
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="twice"))
    api.create_namespaced_config_map("goshape-py", body)
    with pytest.raises(ApiException) as exists:
        api.create_namespaced_config_map("goshape-py", body)
    assert exists.value.status == 409
    assert exists.value.body == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"configmaps \\"twice\\" already exists","reason":"AlreadyExists",'
        '"details":{"name":"twice","kind":"configmaps"},"code":409}\n')


_DEPLOYMENT = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      namespace: goshape-deploy
    spec:
      replicas: 0
      selector:
        matchLabels: {{app: web}}
      template:
        metadata:
          labels: {{app: web}}
        spec:
          containers:
          - name: web
            image: {image}
""")


def test_a_deployment_applied_and_edited_diffs_only_the_image(haru: Cluster) -> None:
    """What Go writes for unset fields (`status: {}`, the template's `resources: {}`) is in the
    live object and in the dry-run result alike, so it never shows up as a change."""
    haru.kubectl("create", "namespace", "goshape-deploy")
    path = os.path.join(haru.data_dir, "goshape-web.yaml")
    with open(path, "w") as f:
        f.write(_DEPLOYMENT.format(image="nginx:1.27"))
    haru.kubectl("apply", "-f", path)
    live = json.loads(haru.kubectl("-n", "goshape-deploy", "get", "deployment", "web", "-o", "json").stdout)
    assert live["spec"]["replicas"] == 0 and "status" in live
    with open(path, "w") as f:
        f.write(_DEPLOYMENT.format(image="nginx:1.28"))
    for flags in ((), ("--server-side",)):
        result = haru.kubectl("diff", *flags, "-f", path, check=False)
        assert result.returncode == 1, result.stderr
        changed = [line.replace(" ", "") for line in result.stdout.splitlines()
                   if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        # The server-side flavour also rewrites the last-applied annotation (its value is a line
        # of JSON); generation may move. Nothing else may change.
        rest = [c for c in changed if not c.startswith(("-generation:", "+generation:", '-{"apiVersion"',
                                                        '+{"apiVersion"'))]
        assert rest == ["--image:nginx:1.27", "+-image:nginx:1.28"], (flags, result.stdout)
