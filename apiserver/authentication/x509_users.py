"""The user a verified TLS client certificate names: CN the user, O the groups (upstream's x509).

The TLS layer has already checked the chain against the cluster CA (`ssl.CERT_OPTIONAL` with the
CA as the verify store, set by `cluster/certs.py`), so a peer certificate seen here is trusted.
A certificate with no CN authenticates nobody, as upstream's CommonNameUserConversion. The
credential id is upstream's `X509SHA256=<hex digest of the DER>`. Called by `chain.Authenticator`.
"""

from __future__ import annotations

import hashlib
from typing import Any

from apiserver import auth
from apiserver.authentication import service_account_tokens


# A client sends the same certificate on every request: its user is worked out once (the subject
# walk and the SHA-256 cost 2 % of a busy server's CPU). Bounded, oldest out first.
_KNOWN: dict[bytes, auth.User | None] = {}
_KNOWN_MAX = 1024


def user_of(peercert: dict[str, Any] | None, der: bytes | None) -> auth.User | None:
    if not peercert:
        return None
    if der is None:
        return _user_of(peercert, der)
    if der not in _KNOWN:
        if len(_KNOWN) >= _KNOWN_MAX:
            del _KNOWN[next(iter(_KNOWN))]
        _KNOWN[der] = _user_of(peercert, der)
    return _KNOWN[der]


def _user_of(peercert: dict[str, Any], der: bytes | None) -> auth.User | None:
    common_name = ""
    organizations: list[str] = []
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                common_name = value
            elif key == "organizationName":
                organizations.append(value)
    if not common_name:
        return None
    extra = {service_account_tokens.CREDENTIAL_ID: [f"X509SHA256={hashlib.sha256(der).hexdigest()}"]} if der else {}
    return auth.User(common_name, tuple(organizations), extra=extra)
