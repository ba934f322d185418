"""`Config`: where the API server is and how to prove who we are, read from a kubeconfig file.

`load(path)` resolves the current (or a named) context to its cluster and user: server URL,
certificate-authority-data or -file, insecure-skip-tls-verify, a bearer token (inline or tokenFile)
and client certificates (data or file). `Config.for_url()` builds one without a file (embedded
components, tests). `rest.RestClient` takes a Config and asks it for the SSL context and headers.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from typing import Any

import yaml


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Config:
    server: str
    token: str | None = None
    ca_pem: bytes | None = None
    insecure: bool = False
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    namespace: str = "default"

    @classmethod
    def for_url(cls, server: str, token: str | None = None, ca_pem: bytes | None = None) -> "Config":
        return cls(server=server.rstrip("/"), token=token, ca_pem=ca_pem)

    def headers(self) -> dict[str, str]:
        # Sent over plain http too (the Python client does; haru accepts either way).
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def ssl_context(self) -> ssl.SSLContext | bool:
        """What aiohttp's `ssl=` wants: False over http or when told to skip verification."""
        if not self.server.startswith("https://"):
            return False
        if self.insecure and not self.client_cert_pem:
            return False
        context = ssl.create_default_context(cadata=self.ca_pem.decode() if self.ca_pem else None)
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.client_cert_pem and self.client_key_pem:
            _load_client_pair(context, self.client_cert_pem, self.client_key_pem)
        return context


def _load_client_pair(context: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    # ssl only loads certificate chains from files; keep them for the shortest possible time.
    with tempfile.TemporaryDirectory(prefix="haru-client-") as folder:
        cert_path, key_path = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
        for path, data in ((cert_path, cert), (key_path, key)):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
                f.write(data)
        context.load_cert_chain(cert_path, key_path)


def _named(entries: list[dict[str, Any]] | None, name: str, what: str) -> dict[str, Any]:
    for entry in entries or []:
        if entry.get("name") == name:
            return entry.get(what) or {}
    raise ConfigError(f"kubeconfig has no {what} named {name!r}")


def _data_or_file(section: dict[str, Any], data_key: str, file_key: str, base: str) -> bytes | None:
    if section.get(data_key):
        return base64.b64decode(section[data_key])
    if section.get(file_key):
        with open(os.path.join(base, section[file_key]), "rb") as f:
            return f.read()
    return None


def load(path: str, context: str | None = None) -> Config:
    with open(path) as f:
        doc = yaml.safe_load(f) or {}
    base = os.path.dirname(os.path.abspath(path))
    context_name = context or doc.get("current-context")
    if not context_name:
        raise ConfigError(f"{path}: no current-context and no context given")
    ctx = _named(doc.get("contexts"), context_name, "context")
    cluster = _named(doc.get("clusters"), ctx.get("cluster", ""), "cluster")
    user = _named(doc.get("users"), ctx["user"], "user") if ctx.get("user") else {}
    if not cluster.get("server"):
        raise ConfigError(f"{path}: cluster {ctx.get('cluster')!r} has no server")
    token = user.get("token")
    if not token and user.get("tokenFile"):
        with open(os.path.join(base, user["tokenFile"])) as f:
            token = f.read().strip()
    return Config(
        server=cluster["server"].rstrip("/"),
        token=token,
        ca_pem=_data_or_file(cluster, "certificate-authority-data", "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        client_cert_pem=_data_or_file(user, "client-certificate-data", "client-certificate", base),
        client_key_pem=_data_or_file(user, "client-key-data", "client-key", base),
        namespace=ctx.get("namespace") or "default",
    )
