"""Authentication through the real clients against `haru up`: kubectl v1.36.3 and the Python client 36.0.3.

One cluster for the module, started with a `--token-auth-file` and one hollow node. It checks
the admin kubeconfig's client certificate (kubeadm's identity), a certificate minted for a
component identity, a static token, a refused token's 401, and that a token from
`kubectl create token` verifies against `/openid/v1/jwks` with PyJWT, as a third party would.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import jwt
import pytest
import yaml
from kubernetes import client as pyclient, config as pyconfig

from apiserver.authentication import signing_key
from cluster import certs
from tests.conftest import Cluster, start_haru, stop_haru

pytestmark = pytest.mark.slow
ISSUER = "https://kubernetes.default.svc.cluster.local"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    data_dir = tmp_path_factory.mktemp("authn")
    tokens = data_dir / "tokens.csv"
    tokens.write_text('alice-secret,alice,u-alice,"dev,ops"\n')
    running = start_haru(str(data_dir / "d"), "--nodes", "1", "--token-auth-file", str(tokens))
    try:
        yield running
    finally:
        stop_haru(running)


def _kubeconfig(cluster: Cluster, path: Path, user: dict[str, str]) -> str:
    """The admin kubeconfig with another user in it."""
    doc = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    doc["users"][0]["user"] = user
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _whoami(cluster: Cluster, kubeconfig: str | None = None) -> dict[str, Any]:
    env = {"KUBECONFIG": kubeconfig} if kubeconfig else None
    return json.loads(cluster.kubectl("auth", "whoami", "-o", "json", env=env).stdout)["status"]["userInfo"]


def _ca_context(cluster: Cluster) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=os.path.join(cluster.data_dir, "pki", "ca.crt"))


def test_the_admin_kubeconfig_is_a_client_certificate_as_kubeadm_writes_it(cluster: Cluster) -> None:
    user = yaml.safe_load(Path(cluster.kubeconfig).read_text())["users"][0]["user"]
    assert sorted(user) == ["client-certificate-data", "client-key-data"]
    me = _whoami(cluster)
    assert (me["username"], me["groups"]) == ("kubernetes-admin", ["kubeadm:cluster-admins", "system:authenticated"])
    assert me["extra"]["authentication.kubernetes.io/credential-id"][0].startswith("X509SHA256=")
    assert cluster.kubectl("get", "namespaces", "-o", "name").stdout.split() == [
        "namespace/default", "namespace/kube-node-lease", "namespace/kube-public", "namespace/kube-system"]


def test_a_certificate_minted_for_a_node_identity_authenticates_as_that_node(cluster: Cluster,
                                                                           tmp_path: Path) -> None:
    pki = certs.ensure(cluster.data_dir)
    cert, key = pki.client_certificate(*certs.component_identity("node", "node-1"))
    path = _kubeconfig(cluster, tmp_path / "node.kubeconfig", {
        "client-certificate-data": base64.b64encode(cert).decode(),
        "client-key-data": base64.b64encode(key).decode()})
    me = _whoami(cluster, path)
    assert (me["username"], me["groups"]) == ("system:node:node-1", ["system:nodes", "system:authenticated"])


def test_a_token_given_beside_the_admin_certificate_loses_to_it_as_upstream(cluster: Cluster) -> None:
    # kube-apiserver's union tries x509 before bearer tokens; kubectl sends both.
    assert _whoami_with_token(cluster, "alice-secret")["username"] == "kubernetes-admin"


def _whoami_with_token(cluster: Cluster, token: str) -> dict[str, Any]:
    return json.loads(cluster.kubectl("auth", "whoami", "-o", "json", "--token", token).stdout)["status"]["userInfo"]


def test_a_static_token_from_the_token_file_authenticates_with_its_groups(cluster: Cluster) -> None:
    me = _whoami(cluster, cluster.token_kubeconfig("alice-secret"))
    assert (me["username"], me["uid"], me["groups"]) == ("alice", "u-alice", ["dev", "ops", "system:authenticated"])


def test_a_wrong_token_is_refused_with_upstreams_401(cluster: Cluster) -> None:
    path = cluster.token_kubeconfig("not-a-token")
    result = cluster.kubectl("get", "pods", env={"KUBECONFIG": path}, check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == "error: You must be logged in to the server (Unauthorized)"
    request = urllib.request.Request(f"{cluster.url}/api/v1/namespaces/default/pods",
                                     headers={"Authorization": "Bearer not-a-token"})
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, context=_ca_context(cluster))
    assert raised.value.code == 401
    assert json.loads(raised.value.read()) == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                               "status": "Failure", "message": "Unauthorized",
                                               "reason": "Unauthorized", "code": 401}


def test_a_certificate_from_another_ca_fails_the_handshake(cluster: Cluster, tmp_path: Path) -> None:
    stranger = certs.ensure(str(tmp_path / "elsewhere"))
    cert, key = stranger.client_certificate("kubernetes-admin", ("system:masters",))
    (tmp_path / "c.crt").write_bytes(cert)
    (tmp_path / "c.key").write_bytes(key)
    context = _ca_context(cluster)
    context.load_cert_chain(str(tmp_path / "c.crt"), str(tmp_path / "c.key"))
    with pytest.raises((ssl.SSLError, ConnectionResetError, urllib.error.URLError)):
        urllib.request.urlopen(f"{cluster.url}/api", context=context).read()


def _jwks(cluster: Cluster) -> jwt.PyJWKSet:
    return jwt.PyJWKSet.from_dict(json.loads(cluster.kubectl("get", "--raw", "/openid/v1/jwks").stdout))


def test_a_token_from_kubectl_create_token_verifies_against_the_jwks_with_pyjwt(cluster: Cluster) -> None:
    token = cluster.kubectl("create", "token", "default", "--duration", "20m").stdout.strip()
    discovery = json.loads(cluster.kubectl("get", "--raw", "/.well-known/openid-configuration").stdout)
    assert discovery["issuer"] == ISSUER and discovery["jwks_uri"] == f"{cluster.url}/openid/v1/jwks"
    key = _jwks(cluster)[jwt.get_unverified_header(token)["kid"]]
    claims = jwt.decode(token, key.key, algorithms=discovery["id_token_signing_alg_values_supported"],
                        audience=ISSUER, issuer=discovery["issuer"])
    account = json.loads(cluster.kubectl("get", "serviceaccount", "default", "-o", "json").stdout)
    assert claims["exp"] - claims["iat"] == 1200 and claims["nbf"] == claims["iat"] and claims["jti"]
    assert claims["sub"] == "system:serviceaccount:default:default"
    assert claims["kubernetes.io"] == {"namespace": "default", "serviceaccount": {
        "name": "default", "uid": account["metadata"]["uid"]}}
    # A key that is not the cluster's does not verify it.
    stranger = jwt.PyJWK(signing_key.SigningKey(None).jwk())
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token, stranger.key, algorithms=["RS256"], audience=ISSUER)


def test_a_pod_bound_token_from_kubectl_names_the_pod_and_its_node(cluster: Cluster) -> None:
    cluster.kubectl("run", "bound", "--image=busybox", "--restart=Never")
    node_name = ""
    for _ in range(300):  # until the scheduler has bound it
        node_name = cluster.kubectl("get", "pod", "bound", "-o", "jsonpath={.spec.nodeName}").stdout
        if node_name:
            break
        time.sleep(0.1)
    assert node_name
    token = cluster.kubectl("create", "token", "default", "--bound-object-kind", "Pod",
                            "--bound-object-name", "bound").stdout.strip()
    claims = jwt.decode(token, _jwks(cluster)[jwt.get_unverified_header(token)["kid"]].key, algorithms=["RS256"],
                        audience=ISSUER)
    pod = json.loads(cluster.kubectl("get", "pod", "bound", "-o", "json").stdout)
    node = json.loads(cluster.kubectl("get", "node", node_name, "-o", "json").stdout)
    assert claims["kubernetes.io"]["pod"] == {"name": "bound", "uid": pod["metadata"]["uid"]}
    assert claims["kubernetes.io"]["node"] == {"name": node_name, "uid": node["metadata"]["uid"]}
    review = json.loads(cluster.kubectl("create", "-o", "json", "-f", "-", input=json.dumps({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})).stdout)
    assert review["status"]["authenticated"] is True
    assert review["status"]["user"]["extra"]["authentication.kubernetes.io/node-name"] == [node_name]
    cluster.kubectl("delete", "pod", "bound", "--grace-period=0", "--force", "--wait=true")
    review = json.loads(cluster.kubectl("create", "-o", "json", "-f", "-", input=json.dumps({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})).stdout)
    assert review["status"] == {"user": {}, "error": "service account token has been invalidated"}


def test_the_python_client_works_with_the_certificate_kubeconfig(cluster: Cluster, tmp_path: Path) -> None:
    api = pyconfig.new_client_from_config(config_file=cluster.kubeconfig)
    names = [n.metadata.name for n in pyclient.CoreV1Api(api).list_namespace().items]
    assert "kube-system" in names
    me = pyclient.AuthenticationV1Api(api).create_self_subject_review(
        pyclient.V1SelfSubjectReview(api_version="authentication.k8s.io/v1", kind="SelfSubjectReview"))
    assert me.status.user_info.username == "kubernetes-admin"
    # A service-account token in a kubeconfig, as an in-cluster client would hold it.
    token = cluster.kubectl("create", "token", "default").stdout.strip()
    api = pyconfig.new_client_from_config(
        config_file=_kubeconfig(cluster, tmp_path / "sa.kubeconfig", {"token": token}))
    me = pyclient.AuthenticationV1Api(api).create_self_subject_review(
        pyclient.V1SelfSubjectReview(api_version="authentication.k8s.io/v1", kind="SelfSubjectReview"))
    assert me.status.user_info.username == "system:serviceaccount:default:default"
    assert me.status.user_info.groups == ["system:serviceaccounts", "system:serviceaccounts:default",
                                          "system:authenticated"]
    with pytest.raises(pyclient.ApiException) as raised:
        pyclient.CoreV1Api(pyconfig.new_client_from_config(
            config_file=_kubeconfig(cluster, tmp_path / "bad.kubeconfig", {"token": token + "x"}))).list_namespace()
    assert raised.value.status == 401 and json.loads(raised.value.body)["reason"] == "Unauthorized"


def test_anonymous_reaches_health_and_version_only(cluster: Cluster) -> None:
    context = _ca_context(cluster)
    assert urllib.request.urlopen(f"{cluster.url}/readyz", context=context).read() == b"ok"
    assert json.loads(urllib.request.urlopen(f"{cluster.url}/version", context=context).read())["major"] == "1"
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(f"{cluster.url}/apis", context=context)
    assert raised.value.code == 401


def test_component_identities_are_upstreams() -> None:
    assert certs.component_identity("scheduler") == ("system:kube-scheduler", ())
    assert certs.component_identity("controllers") == ("system:kube-controller-manager", ())
    assert certs.component_identity("node", "n1") == ("system:node:n1", ("system:nodes",))
    with pytest.raises(ValueError):
        certs.component_identity("node")
