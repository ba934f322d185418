"""Kubeconfig loading: contexts, CA data, tokens inline and from files; and a real HTTPS server
with a generated CA and a bearer token reached through a kubeconfig like the one `haru up` writes."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from apiserver import runner
from client import errors, kubeconfig
from client.resources import NAMESPACES
from client.rest import RestClient
from cluster import certs
from cluster import kubeconfig as written


def test_kubeconfig_resolves_the_current_context_with_ca_data_and_token(tmp_path: Path) -> None:
    ca = b"-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n"
    (tmp_path / "token").write_text("from-file\n")
    (tmp_path / "config").write_text(f"""
apiVersion: v1
kind: Config
current-context: b
clusters:
- name: ca
  cluster: {{server: "https://127.0.0.1:6443/", certificate-authority-data: {base64.b64encode(ca).decode()}}}
- name: plain
  cluster: {{server: "http://127.0.0.1:8080"}}
users:
- name: inline
  user: {{token: abc}}
- name: file
  user: {{tokenFile: token}}
contexts:
- name: a
  context: {{cluster: plain, user: file}}
- name: b
  context: {{cluster: ca, user: inline, namespace: team}}
""")
    current = kubeconfig.load(str(tmp_path / "config"))
    assert (current.server, current.token, current.ca_pem, current.namespace) == \
        ("https://127.0.0.1:6443", "abc", ca, "team")
    assert current.headers() == {"Authorization": "Bearer abc"}
    other = kubeconfig.load(str(tmp_path / "config"), context="a")
    assert (other.server, other.token, other.ca_pem, other.ssl_context()) == ("http://127.0.0.1:8080", "from-file", None, False)
    with pytest.raises(kubeconfig.ConfigError):
        kubeconfig.load(str(tmp_path / "config"), context="missing")



async def test_a_haru_kubeconfig_reaches_an_https_server_with_its_ca_and_token(tmp_path: Path) -> None:
    pki = certs.ensure(str(tmp_path / "pki"))
    running = await runner.start(str(tmp_path / "data"), port=0, ssl_context=pki.ssl_context(), admin_token="s3cret")
    try:
        path = tmp_path / "kubeconfig"
        written.write(str(path), running.url, "s3cret", pki.ca_pem())
        async with RestClient(kubeconfig.load(str(path))) as client:
            assert (await client.get(NAMESPACES, "default"))["metadata"]["name"] == "default"
        wrong = kubeconfig.Config(server=running.url, token="wrong", ca_pem=pki.ca_pem())
        async with RestClient(wrong) as client:
            with pytest.raises(errors.APIError) as denied:
                await client.get(NAMESPACES, "default")
        assert denied.value.code == 401
    finally:
        await running.stop()
