"""The kube-root-ca.crt publisher against a real API server, with a made-up CA given in SETTINGS
(the test server speaks plain HTTP, whose kubeconfig has none), read with kubectl v1.36.3.

Every active namespace, the existing ones and a new one, gets the ConfigMap with `ca.crt` and
upstream's description annotation; deleted, it comes back; edited, it is put back.
"""

from __future__ import annotations

import json

import pytest

from client.resources import CONFIGMAPS, NAMESPACES
from controllers.root_ca_publisher import DESCRIPTION, NAME
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CA = "-----BEGIN CERTIFICATE-----\nTUFERS1VUA==\n-----END CERTIFICATE-----\n"
CONTROLLERS = ("root-ca-certificate-publisher",)
SETTINGS = {"root-ca-certificate-publisher": {"ca_pem": CA.encode()}}
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _kubectl_map(cluster: Cluster, namespace: str) -> dict | None:
    code, out, _ = await cluster.kubectl("get", "configmap", NAME, "-n", namespace, "-o", "json")
    return json.loads(out) if code == 0 else None


async def test_every_namespace_has_the_root_ca_map(cluster: Cluster) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": "brand-new"}})
    for namespace in ("default", "kube-system", "brand-new"):
        found = await eventually(lambda: _kubectl_map(cluster, namespace), timeout=20)
        assert found["data"] == {"ca.crt": CA}
        assert found["metadata"]["annotations"]["kubernetes.io/description"] == DESCRIPTION


async def test_a_deleted_map_comes_back_and_an_edited_one_is_put_back(cluster: Cluster) -> None:
    first = await eventually(lambda: _kubectl_map(cluster, "default"), timeout=20)
    code, out, err = await cluster.kubectl("delete", "configmap", NAME, "-n", "default")
    assert code == 0, err

    async def recreated() -> dict | None:
        found = await _kubectl_map(cluster, "default")
        return found if found and found["metadata"]["uid"] != first["metadata"]["uid"] else None

    await eventually(recreated, timeout=20)
    code, out, err = await cluster.kubectl("patch", "configmap", NAME, "-n", "default", "--type=merge",
                                           "-p", '{"data":{"ca.crt":"tampered"}}')
    assert code == 0, err

    async def restored() -> bool:
        found = await cluster.client.get(CONFIGMAPS, NAME, "default")
        return found["data"] == {"ca.crt": CA}

    await eventually(restored, timeout=10)
