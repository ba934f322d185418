"""The authenticator chain's order and refusals: certificate before token, tokens in upstream's order."""

from __future__ import annotations

import base64
import hashlib

import pytest

from apiserver import auth
from apiserver.authentication import chain, service_account_tokens as sat, signing_key

ISSUER = "https://kubernetes.default.svc.cluster.local"
CERT = {"subject": ((("organizationName", "dev"),), (("organizationName", "ops"),), (("commonName", "carol"),))}


def _chain(admin_token: str | None = "adm") -> chain.Authenticator:
    tokens = sat.Tokens(signing_key.SigningKey(None), [ISSUER], [])
    return chain.Authenticator(admin_token, tokens, lambda *_: None, {"alice-t": auth.User("alice", ("dev",), "u1")})


def _ws(token: str) -> str:
    return chain.WEBSOCKET_PREFIX + base64.urlsafe_b64encode(token.encode()).rstrip(b"=").decode()


def test_a_client_certificate_wins_over_any_token_as_upstreams_union_orders_them() -> None:
    outcome = _chain().authenticate("Bearer wrong", CERT, b"der")
    assert outcome.user is not None
    assert (outcome.user.name, outcome.user.groups) == ("carol", ("dev", "ops", "system:authenticated"))
    assert outcome.user.extra == {"authentication.kubernetes.io/credential-id": [
        "X509SHA256=" + hashlib.sha256(b"der").hexdigest()]}


def test_a_certificate_without_a_common_name_names_nobody() -> None:
    assert _chain().authenticate(None, {"subject": ((("organizationName", "dev"),),)}, b"der without a CN") == chain.Outcome()


@pytest.mark.parametrize(("case", "authorization", "protocols", "user", "error"), [
    ("the admin token", "Bearer adm", None, "kubernetes-admin", ""),
    ("a token-file entry, with system:authenticated added", "bearer alice-t", None, "alice", ""),
    ("an unknown token", "Bearer nope", None, None, "invalid bearer token"),
    ("no credentials at all", None, None, None, ""),
    ("another scheme is no bearer token", "Basic YTpi", None, None, ""),
    ("a websocket subprotocol token", None, [f"{_ws('alice-t')}, v5.channel.k8s.io"], "alice", ""),
    ("a websocket token alone, with nothing to answer with", None, [_ws("alice-t")], None,
     "missing additional subprotocol"),
    ("two websocket tokens", None, [f"{_ws('a')},{_ws('b')},v5.channel.k8s.io"], None,
     "multiple base64.bearer.authorization tokens specified"),
    ("a websocket token that is no base64url", None, [f"{chain.WEBSOCKET_PREFIX}a+b, v5.channel.k8s.io"], None,
     "invalid base64.bearer.authorization token encoding"),
])
def test_bearer_tokens(case: str, authorization: str | None, protocols: list[str] | None, user: str | None,
                       error: str) -> None:
    outcome = _chain().authenticate(authorization, None, None, protocols)
    assert (outcome.user.name if outcome.user else None, outcome.error) == (user, error)
    if outcome.user is not None:
        assert "system:authenticated" in outcome.user.groups


def test_over_plain_http_a_request_without_good_credentials_is_the_admin() -> None:
    assert _chain(None).authenticate("Bearer nope").user == auth.ADMIN_USER
    assert _chain(None).authenticate("Bearer alice-t").user.name == "alice"  # type: ignore[union-attr]


def test_token_review_gives_audience_free_tokens_only_the_api_servers_audiences() -> None:
    assert _chain().review("adm").audiences == [ISSUER]
    assert _chain().review("adm", ["vault"]) == chain.Outcome()
    assert _chain().review("alice-t", [ISSUER, "vault"]).audiences == [ISSUER]
