"""Service accounts in the embedded cluster `haru_cluster` starts: as under `haru up`, the
ServiceAccount admission plugin runs (a pod gets the kube-api-access volume, a missing account is
refused) and `kube-root-ca.crt` holds the CA of the kubeconfig, although the controllers inside
reach the server over plain HTTP with none of their own."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException


def _kubeconfig_ca(path: str) -> str:
    config = yaml.safe_load(Path(path).read_text())
    return base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()


def test_the_root_ca_map_holds_the_kubeconfigs_ca(haru_cluster):
    core = client.CoreV1Api(haru_cluster.api_client)
    for _ in range(100):  # the publisher writes it when it gets to the namespace
        try:
            found = core.read_namespaced_config_map("kube-root-ca.crt", "default")
            break
        except ApiException as exc:
            if exc.status != 404:
                raise
            time.sleep(0.05)
    else:
        raise AssertionError("no kube-root-ca.crt in default")
    assert found.data["ca.crt"] == _kubeconfig_ca(haru_cluster.kubeconfig)


def test_pods_get_the_token_volume_and_need_their_account(haru_cluster):
    core = client.CoreV1Api(haru_cluster.api_client)
    pod = core.create_namespaced_pod("default", {"metadata": {"name": "with-token"},
                                                 "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert any(v.name.startswith("kube-api-access-") and v.projected for v in pod.spec.volumes)
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod("default", {"metadata": {"name": "orphan-account"}, "spec": {
            "serviceAccountName": "absent", "containers": [{"name": "c", "image": "busybox"}]}})
    assert refused.value.status == 403
    assert 'serviceaccount \\"absent\\" not found' in refused.value.body
