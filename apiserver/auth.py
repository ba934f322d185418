"""Who is asking: the admin bearer token, service-account tokens we issued, or anyone over plain HTTP.

Over plain HTTP client-go sends no credentials (kubernetes/kubectl#744), so every request there is
the admin. Over HTTPS the admin token from the kubeconfig, or a token from `serviceaccounts/token`
(an HMAC-signed JWT carrying the service account's identity and expiry), authenticates; anything
else is 401. Real authorization (RBAC) comes later: every authenticated user may do everything.
Used by the app's middleware and by the review endpoints (`subresources/reviews.py`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any

ADMIN = "kubernetes-admin"


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ("system:masters", "system:authenticated")
    uid: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            info["uid"] = self.uid
        if self.extra:
            info["extra"] = self.extra
        return info


ADMIN_USER = User(ADMIN)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Authenticator:
    def __init__(self, admin_token: str | None, signing_key: bytes) -> None:
        self.admin_token = admin_token
        self.signing_key = signing_key

    def authenticate(self, authorization: str | None) -> User | None:
        if self.admin_token is None:
            return ADMIN_USER
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        token = authorization[7:].strip()
        if hmac.compare_digest(token, self.admin_token):
            return ADMIN_USER
        return self.verify(token)

    def review(self, token: str) -> User | None:
        """Whom a token names (TokenReview): the admin token or a token we issued, in any mode."""
        if self.admin_token is not None and hmac.compare_digest(token, self.admin_token):
            return ADMIN_USER
        return self.verify(token)

    def issue(self, namespace: str, name: str, uid: str, seconds: int, audiences: list[str]) -> tuple[str, int]:
        """A service-account token; returns (token, expiry as unix seconds)."""
        expiry = int(time.time()) + seconds
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        claims = {
            "aud": audiences, "exp": expiry, "iat": int(time.time()), "iss": "https://kubernetes.default.svc",
            "sub": f"system:serviceaccount:{namespace}:{name}",
            "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
        }
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        signature = _b64(hmac.new(self.signing_key, f"{header}.{payload}".encode(), hashlib.sha256).digest())
        return f"{header}.{payload}.{signature}", expiry

    def verify(self, token: str) -> User | None:
        try:
            header, payload, signature = token.split(".")
            expected = _b64(hmac.new(self.signing_key, f"{header}.{payload}".encode(), hashlib.sha256).digest())
            if not hmac.compare_digest(signature, expected):
                return None
            claims = json.loads(_unb64(payload))
        except (ValueError, json.JSONDecodeError):
            return None
        if claims.get("exp", 0) < time.time():
            return None
        sa = claims.get("kubernetes.io", {})
        namespace = sa.get("namespace", "")
        return User(
            claims.get("sub", ""),
            ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"),
            uid=sa.get("serviceaccount", {}).get("uid", ""),
        )
