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


def user_of(peercert: dict[str, Any] | None, der: bytes | None) -> auth.User | None:
    if not peercert:
        return None
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
