"""The kubeconfig `haru up` writes: one cluster, one admin user, one context named `haru`.

Written atomically, and only after the server answers requests, so a client that sees the file
can use it at once. Over plain HTTP the token is still written (the Python client sends it; client-go
does not, and the server accepts both).
"""

from __future__ import annotations

import base64
import os

import yaml


def render(server_url: str, token: str, ca_pem: bytes | None) -> str:
    cluster: dict[str, str] = {"server": server_url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "haru", "cluster": cluster}],
        "users": [{"name": "haru-admin", "user": {"token": token}}],
        "contexts": [{"name": "haru", "context": {"cluster": "haru", "user": "haru-admin", "namespace": "default"}}],
        "current-context": "haru",
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def write(path: str, server_url: str, token: str, ca_pem: bytes | None) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = path + ".partial"
    with open(partial, "w") as f:
        f.write(render(server_url, token, ca_pem))
    os.chmod(partial, 0o600)
    os.replace(partial, path)
