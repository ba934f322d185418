"""How the API server authenticates, as kube-apiserver's flags say it, and the authenticator they build.

`Options` holds the flags (`--service-account-key-file`, `--service-account-issuer` (repeatable),
`--api-audiences`, `--service-account-jwks-uri`, `--token-auth-file`) plus haru's admin token;
`build(server)` makes the `chain.Authenticator` with a lookup into the server's store, so bound
tokens are checked against what is stored now. `runner.start` builds one; `app.build` makes a
default (in-memory key) for servers built without it, as in-process tests do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiserver import responses
from apiserver.authentication import chain, service_account_tokens, signing_key, token_file

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"


@dataclass(frozen=True)
class Options:
    admin_token: str | None = None
    service_account_key_file: str | None = None  # None: a key in memory, gone at exit
    issuers: tuple[str, ...] = (DEFAULT_ISSUER,)
    api_audiences: tuple[str, ...] = ()  # empty: the first issuer, as upstream defaults --api-audiences
    jwks_uri: str = ""  # empty: the API server's own address + /openid/v1/jwks
    token_auth_file: str | None = None

    def build(self, server: Any) -> chain.Authenticator:
        tokens = service_account_tokens.Tokens(signing_key.SigningKey(self.service_account_key_file),
                                               list(self.issuers or (DEFAULT_ISSUER,)), list(self.api_audiences))
        static = token_file.load(self.token_auth_file) if self.token_auth_file else {}
        return chain.Authenticator(self.admin_token, tokens, StoreLookup(server), static)


class StoreLookup:
    """Reads core objects (service accounts, pods, secrets, nodes) straight from the store, and says
    when a resource was last written (`Store.last_change` of its key prefix), so that a validated
    token's bound objects are read again only after a write to one of their resources."""

    def __init__(self, server: Any) -> None:
        self._server = server

    def __call__(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        info = self._server.registry.get("", "v1", resource)
        if info is None or not name:
            return None
        record = self._server.store.get(info.key(namespace or None, name))
        return None if record is None else responses.decode(record.value)

    def changed(self, resource: str) -> int:
        info = self._server.registry.get("", "v1", resource)
        # No such resource: its lookups find nothing, so no token that reads it is ever kept.
        return -1 if info is None else self._server.store.last_change(info.key_prefix)
