"""kubectl v1.36.3 against `haru up`: service accounts, their admission and the root CA map.

A pod created the moment its namespace exists is admitted (the ServiceAccount plugin looks for
`default` again while the controller makes it) and carries the kube-api-access volume; the
namespace's `kube-root-ca.crt` holds the very CA the kubeconfig trusts; `kubectl create token
default` works there; a missing account is refused with upstream's message.
"""

from __future__ import annotations

import json

import pytest

from client import kubeconfig
from tests.conftest import Cluster
from tests.e2e.polling import until

pytestmark = pytest.mark.slow



def test_a_pod_in_a_new_namespace_gets_its_account_and_token_volume(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "arrivals")
    created = haru.kubectl("run", "first", "-n", "arrivals", "--image=busybox", "--restart=Never")
    assert created.stdout.strip() == "pod/first created"
    pod = json.loads(haru.kubectl("get", "pod", "first", "-n", "arrivals", "-o", "json").stdout)
    assert pod["spec"]["serviceAccountName"] == "default"
    volume = next(v for v in pod["spec"]["volumes"] if v["name"].startswith("kube-api-access-"))
    assert [next(iter(s)) for s in volume["projected"]["sources"]] == ["serviceAccountToken", "configMap", "downwardAPI"]
    assert {"name": volume["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"} \
        in pod["spec"]["containers"][0]["volumeMounts"]


def test_the_root_ca_map_holds_the_kubeconfigs_ca(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "trusting")
    ca = kubeconfig.load(haru.kubeconfig).ca_pem
    assert ca
    published = until(lambda: haru.kubectl("get", "configmap", "kube-root-ca.crt", "-n", "trusting",
                                           "-o", "jsonpath={.data.ca\\.crt}", check=False).stdout, "kube-root-ca.crt")
    assert published == ca.decode()


def test_create_token_default_works_in_a_new_namespace(haru: Cluster) -> None:
    haru.kubectl("create", "namespace", "tokened")
    token = until(lambda: haru.kubectl("create", "token", "default", "-n", "tokened", check=False).stdout.strip(),
                  "a token for tokened/default")
    assert token.count(".") == 2


def test_a_pod_naming_a_missing_account_is_refused(haru: Cluster) -> None:
    overrides = json.dumps({"spec": {"serviceAccountName": "nobody"}})
    refused = haru.kubectl("run", "lonely", "--image=busybox", "--restart=Never", f"--overrides={overrides}",
                           check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == ('Error from server (Forbidden): pods "lonely" is forbidden: error looking up '
                                      'service account default/nobody: serviceaccount "nobody" not found')
