"""The ServiceAccount admission plugin in a real API server, with the service-account and root-CA
controllers running, driven by kubectl v1.36.3.

A pod in a brand-new namespace is admitted although its `default` account comes a moment later
(the create looks again); it carries the kube-api-access volume whose ConfigMap exists; a pod
naming a missing account is refused with upstream's 403; `kubectl create token default` works in
the new namespace.
"""

from __future__ import annotations

import json

import pytest

from client.resources import CONFIGMAPS, NAMESPACES, PODS
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("serviceaccount", "root-ca-certificate-publisher")
ADMISSION_PLUGINS = ("ServiceAccount",)
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_pod_right_after_its_namespace_is_admitted_with_the_token_volume(cluster: Cluster) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "hurry"}})
    code, out, err = await cluster.kubectl("run", "first", "-n", "hurry", "--image=busybox", "--restart=Never")
    assert code == 0, err
    assert out.strip() == "pod/first created"

    pod = await cluster.client.get(PODS, "first", "hurry")
    spec = pod["spec"]
    assert spec["serviceAccountName"] == "default"
    (volume,) = [v for v in spec["volumes"] if v["name"].startswith("kube-api-access-")]
    assert volume["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"] == 3607
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]

    async def root_ca() -> dict | None:
        try:
            return await cluster.client.get(CONFIGMAPS, "kube-root-ca.crt", "hurry")
        except Exception:  # noqa: BLE001 - not there yet
            return None

    assert "ca.crt" in (await eventually(root_ca, timeout=10))["data"]


async def test_a_pod_naming_a_missing_account_is_forbidden(cluster: Cluster) -> None:
    overrides = json.dumps({"spec": {"serviceAccountName": "ghost"}})
    code, out, err = await cluster.kubectl("run", "haunted", "-n", "default", "--image=busybox", "--restart=Never",
                                           f"--overrides={overrides}")
    assert code == 1
    assert err.strip() == ('Error from server (Forbidden): pods "haunted" is forbidden: error looking up service '
                           'account default/ghost: serviceaccount "ghost" not found')
    code, out, err = await cluster.kubectl("get", "pod", "haunted", "-n", "default", "--ignore-not-found")
    assert code == 0 and out == ""


async def test_kubectl_create_token_default_works_in_a_new_namespace(cluster: Cluster) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "tokens"}})

    async def token() -> str | None:
        code, out, _ = await cluster.kubectl("create", "token", "default", "-n", "tokens")
        return out.strip() if code == 0 else None

    issued = await eventually(token, timeout=10)
    assert issued.count(".") == 2  # a JWT: header.payload.signature
