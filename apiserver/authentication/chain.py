"""The request authenticator: client certificate first, then the bearer token, as kube-apiserver's union.

`authenticate()` answers an `Outcome`: a user (with `system:authenticated` added, as upstream's
group adder does), nobody (no credentials: the caller decides about anonymous), or an error (a
token was sent and nobody took it: 401). The token comes from `Authorization: Bearer`, or for a
websocket from the `base64url.bearer.authorization.k8s.io.<token>` subprotocol (browsers cannot
set headers there). Tokens are tried in order: the admin token haru writes into kubeconfigs,
`--token-auth-file` entries, then service-account JWTs. Over plain HTTP
(`admin_token` None) a request without good credentials is the admin, as before. `review()` is
TokenReview's view of the same token authenticators. Built by `app.build`, read by `app.py` and
`subresources/reviews.py`.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
from dataclasses import dataclass, field
from typing import Any

from apiserver import auth
from apiserver.authentication import service_account_tokens, token_file, x509_users

AUTHENTICATED = "system:authenticated"
INVALID_BEARER = "invalid bearer token"
WEBSOCKET_PREFIX = "base64url.bearer.authorization.k8s.io."
_RAW_URL_BASE64 = re.compile(r"[A-Za-z0-9_-]*")


@dataclass(frozen=True)
class Outcome:
    user: auth.User | None = None
    error: str = ""  # a credential was offered and refused; the text is upstream's
    audiences: list[str] = field(default_factory=list)


def _with_authenticated(user: auth.User) -> auth.User:
    if AUTHENTICATED in user.groups or "system:unauthenticated" in user.groups:
        return user
    return auth.User(user.name, (*user.groups, AUTHENTICATED), uid=user.uid, extra=user.extra)


class Authenticator:
    def __init__(self, admin_token: str | None, tokens: service_account_tokens.Tokens,
                 lookup: service_account_tokens.Lookup, static_tokens: dict[str, auth.User] | None = None) -> None:
        self.admin_token = admin_token
        self.tokens = tokens
        self.lookup = lookup
        self.static_tokens = static_tokens or {}

    def authenticate(self, authorization: str | None, peercert: dict[str, Any] | None = None,
                     der: bytes | None = None, websocket_protocols: list[str] | None = None) -> Outcome:
        """`websocket_protocols`: the Sec-WebSocket-Protocol headers of a websocket upgrade, else None."""
        outcome = self._authenticate(authorization, peercert, der, websocket_protocols)
        if self.admin_token is None and outcome.user is None:
            return Outcome(auth.ADMIN_USER)  # plain HTTP: client-go sends no credentials there
        return outcome

    def _authenticate(self, authorization: str | None, peercert: dict[str, Any] | None,
                      der: bytes | None, websocket_protocols: list[str] | None) -> Outcome:
        user = x509_users.user_of(peercert, der)
        if user is not None:
            return Outcome(_with_authenticated(user), audiences=list(self.tokens.api_audiences))
        token = _bearer(authorization)
        if not token and websocket_protocols:
            token, error = _websocket_token(websocket_protocols)
            if error:
                return Outcome(error=error)
        if not token:
            return Outcome()
        outcome = self.review(token)
        if outcome.user is None and not outcome.error:
            return Outcome(error=INVALID_BEARER)
        return outcome

    def review(self, token: str, audiences: list[str] | None = None) -> Outcome:
        """The token authenticators alone (TokenReview); `audiences`: the ones the reviewer asked for."""
        implicit = list(self.tokens.api_audiences)
        # The admin and file tokens carry no audience: they are good for the API server's own.
        agnostic = [a for a in audiences if a in implicit] if audiences else implicit
        if self.admin_token is not None and hmac.compare_digest(token.encode(), self.admin_token.encode()):
            return Outcome(auth.ADMIN_USER, audiences=agnostic) if agnostic else Outcome()
        found = token_file.find(self.static_tokens, token)
        if found is not None:
            return Outcome(_with_authenticated(found), audiences=agnostic) if agnostic else Outcome()
        try:
            answer = self.tokens.authenticate(token, self.lookup, audiences)
        except service_account_tokens.TokenError as err:
            return Outcome(error=str(err))
        if answer is None:
            return Outcome()
        user, accepted = answer
        return Outcome(_with_authenticated(user), audiences=accepted)


def _bearer(authorization: str | None) -> str:
    if not authorization:
        return ""
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _websocket_token(headers: list[str]) -> tuple[str, str]:
    """(token, error) from the subprotocols, with upstream's refusals (websocket/protocol.go)."""
    token, seen, others = "", False, 0
    for header in headers:
        for protocol in (p.strip() for p in header.split(",")):
            if not protocol.startswith(WEBSOCKET_PREFIX):
                others += 1
                continue
            if seen:
                return "", "multiple base64.bearer.authorization tokens specified"
            seen = True
            encoded = protocol[len(WEBSOCKET_PREFIX):]
            try:
                if not _RAW_URL_BASE64.fullmatch(encoded):  # Go's RawURLEncoding: no padding, no +/
                    raise binascii.Error(encoded)
                raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
            except (binascii.Error, ValueError):
                return "", "invalid base64.bearer.authorization token encoding"
            try:
                token = raw.decode("utf-8")
            except UnicodeDecodeError:
                return "", "invalid base64.bearer.authorization token"
    # Another subprotocol must remain, to be the one the server answers with.
    if token and not others:
        return "", "missing additional subprotocol"
    return token, ""
