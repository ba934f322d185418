"""The kubeconfigs `haru up` writes: one cluster, one user, one context named `haru`.

The admin's by default; `identities.py` writes the co-processes' own the same way (`user`).

Over HTTPS the admin is a client certificate signed by the cluster CA (CN kubernetes-admin, O
kubeadm:cluster-admins), as kubeadm's admin.conf; the cluster entry keeps
certificate-authority-data. Without a certificate (plain HTTP, the embedded components' loopback
socket) the admin token is written instead: the Python client sends it, client-go does not over
http, and the server accepts both. Written atomically, and only after the server answers.
"""

from __future__ import annotations

import base64
import os

import yaml


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def render(server_url: str, token: str, ca_pem: bytes | None,
           client_pair: tuple[bytes, bytes] | None = None, user_name: str = "haru-admin") -> str:
    cluster: dict[str, str] = {"server": server_url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = _b64(ca_pem)
    user = ({"client-certificate-data": _b64(client_pair[0]), "client-key-data": _b64(client_pair[1])}
            if client_pair is not None else {"token": token})
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "haru", "cluster": cluster}],
        "users": [{"name": user_name, "user": user}],
        "contexts": [{"name": "haru", "context": {"cluster": "haru", "user": user_name, "namespace": "default"}}],
        "current-context": "haru",
        "preferences": {},
    }
    # libyaml's dumper when present: `haru up` writes one kubeconfig per kubelet.
    return yaml.dump(config, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)


def write(path: str, server_url: str, token: str, ca_pem: bytes | None,
          client_pair: tuple[bytes, bytes] | None = None, user_name: str = "haru-admin") -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = path + ".partial"
    with open(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(render(server_url, token, ca_pem, client_pair, user_name))
    os.replace(partial, path)
