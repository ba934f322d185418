"""Service-account JWTs: what they claim, and each reason upstream's validator refuses one."""

from __future__ import annotations

import json
import time
from typing import Any

import jwt
import pytest

from apiserver.authentication import service_account_tokens as sat, signing_key

ISSUER = "https://kubernetes.default.svc.cluster.local"
KEY = signing_key.SigningKey(None)  # one in-memory key for the module: RSA generation is the slow part


def _obj(name: str, uid: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": uid, **meta}}


class Objects:
    def __init__(self) -> None:
        self.items: dict[tuple[str, str, str], dict[str, Any]] = {
            ("serviceaccounts", "ns", "robot"): _obj("robot", "sa-1"),
            ("pods", "ns", "web"): _obj("web", "pod-1"),
            ("secrets", "ns", "s"): _obj("s", "sec-1"),
            ("nodes", "", "n1"): _obj("n1", "node-1"),
        }

    def __call__(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.items.get((resource, namespace, name))


def _tokens(issuers: list[str] | None = None) -> sat.Tokens:
    return sat.Tokens(KEY, issuers or [ISSUER], [])


def _decode(token: str) -> dict[str, Any]:
    public = jwt.PyJWK(KEY.jwk()).key
    return jwt.decode(token, public, algorithms=["RS256"], audience=ISSUER, issuer=ISSUER)


def test_a_pod_bound_token_carries_upstreams_claims_and_verifies_with_the_public_jwk() -> None:
    token, _ = _tokens().issue("ns", "robot", "sa-1", 3600, [ISSUER],
                               sat.Bound(pod=sat.Ref("web", "pod-1"), node=sat.Ref("n1", "node-1")))
    header = jwt.get_unverified_header(token)
    claims = _decode(token)
    assert header == {"alg": "RS256", "kid": KEY.kid}
    assert sorted(claims) == ["aud", "exp", "iat", "iss", "jti", "kubernetes.io", "nbf", "sub"]
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"]
    assert claims["sub"] == "system:serviceaccount:ns:robot"
    assert claims["kubernetes.io"] == {"namespace": "ns", "serviceaccount": {"name": "robot", "uid": "sa-1"},
                                       "pod": {"name": "web", "uid": "pod-1"}, "node": {"name": "n1", "uid": "node-1"}}


def test_the_validated_user_is_the_account_with_pod_node_and_credential_extras() -> None:
    tokens = _tokens()
    token, claims = tokens.issue("ns", "robot", "sa-1", 3600, [ISSUER],
                                 sat.Bound(pod=sat.Ref("web", "pod-1"), node=sat.Ref("n1", "node-1")))
    answer = tokens.authenticate(token, Objects())
    assert answer is not None
    user, audiences = answer
    assert (user.name, user.groups, user.uid, audiences) == (
        "system:serviceaccount:ns:robot", ("system:serviceaccounts", "system:serviceaccounts:ns"), "sa-1", [ISSUER])
    assert user.extra == {"authentication.kubernetes.io/pod-name": ["web"],
                          "authentication.kubernetes.io/pod-uid": ["pod-1"],
                          "authentication.kubernetes.io/node-name": ["n1"],
                          "authentication.kubernetes.io/node-uid": ["node-1"],
                          "authentication.kubernetes.io/credential-id": [f"JTI={claims['jti']}"]}


def _tampered(token: str) -> str:
    header, payload, signature = token.split(".")
    claims = json.loads(signing_key.unb64url(payload))
    claims["sub"] = "system:serviceaccount:kube-system:admin"
    return ".".join([header, signing_key.b64url(json.dumps(claims).encode()), signature])


def _expired(tokens: sat.Tokens) -> str:
    token, _ = tokens.issue("ns", "robot", "sa-1", 600, [ISSUER])
    header, payload, _ = token.split(".")
    claims = json.loads(signing_key.unb64url(payload))
    claims["exp"] = int(time.time()) - 61  # past go-jose's one minute of leeway
    body = signing_key.b64url(json.dumps(claims).encode())
    return f"{header}.{body}.{signing_key.b64url(KEY.sign(f'{header}.{body}'.encode()))}"


REFUSALS = [
    ("a changed claim breaks the signature", lambda t: _tampered(t.issue("ns", "robot", "sa-1", 600, [ISSUER])[0]),
     None, "go-jose/go-jose: error in cryptographic primitive"),
    ("an expired token is refused", _expired, None, "service account token has expired"),
    ("a token for another audience is refused", lambda t: t.issue("ns", "robot", "sa-1", 600, ["vault"])[0], None,
     'token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]'),
    ("a deleted account invalidates its tokens", lambda t: t.issue("ns", "robot", "sa-1", 600, [ISSUER])[0],
     lambda o: o.items.pop(("serviceaccounts", "ns", "robot")), 'serviceaccounts "robot" not found'),
    ("a recreated account (new uid) invalidates its tokens", lambda t: t.issue("ns", "robot", "sa-1", 600, [ISSUER])[0],
     lambda o: o.items.update({("serviceaccounts", "ns", "robot"): _obj("robot", "sa-2")}),
     "service account UID (sa-2) does not match claim (sa-1)"),
    ("a deleted bound pod invalidates the token",
     lambda t: t.issue("ns", "robot", "sa-1", 600, [ISSUER], sat.Bound(pod=sat.Ref("web", "pod-1")))[0],
     lambda o: o.items.pop(("pods", "ns", "web")), "service account token has been invalidated"),
    ("a recreated bound pod invalidates the token",
     lambda t: t.issue("ns", "robot", "sa-1", 600, [ISSUER], sat.Bound(pod=sat.Ref("web", "pod-1")))[0],
     lambda o: o.items.update({("pods", "ns", "web"): _obj("web", "pod-2")}),
     "pod UID (pod-2) does not match service account pod ref claim (pod-1)"),
    ("a pod deleted more than a minute ago invalidates the token",
     lambda t: t.issue("ns", "robot", "sa-1", 600, [ISSUER], sat.Bound(pod=sat.Ref("web", "pod-1")))[0],
     lambda o: o.items.update({("pods", "ns", "web"): _obj("web", "pod-1", deletionTimestamp="2020-01-01T00:00:00Z")}),
     "service account token has been invalidated"),
    ("a recreated bound secret invalidates the token",
     lambda t: t.issue("ns", "robot", "sa-1", 600, [ISSUER], sat.Bound(secret=sat.Ref("s", "sec-1")))[0],
     lambda o: o.items.update({("secrets", "ns", "s"): _obj("s", "sec-9")}),
     "secret UID (sec-9) does not match service account secret ref claim (sec-1)"),
    ("a recreated bound node invalidates a node-bound token",
     lambda t: t.issue("ns", "robot", "sa-1", 600, [ISSUER], sat.Bound(node=sat.Ref("n1", "node-1")))[0],
     lambda o: o.items.update({("nodes", "", "n1"): _obj("n1", "node-2")}),
     "node UID (node-2) does not match service account node ref claim (node-1)"),
]


@pytest.mark.parametrize(("case", "make", "change", "error"), REFUSALS)
def test_validation_refuses(case: str, make: Any, change: Any, error: str) -> None:
    tokens, objects = _tokens(), Objects()
    token = make(tokens)
    if change is not None:
        change(objects)
    with pytest.raises(sat.TokenError) as raised:
        tokens.authenticate(token, objects)
    assert str(raised.value) == error


class VersionedObjects(Objects):
    """Objects that say when each resource last changed (as `options.StoreLookup` does from the store),
    and count the reads."""

    def __init__(self) -> None:
        super().__init__()
        self.revisions: dict[str, int] = {}
        self.reads = 0

    def __call__(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        self.reads += 1
        return super().__call__(resource, namespace, name)

    def changed(self, resource: str) -> int:
        return self.revisions.get(resource, 0)

    def write(self, resource: str) -> None:
        self.revisions[resource] = self.changed(resource) + 1


@pytest.mark.parametrize(("case", "make", "change", "error"), [r for r in REFUSALS if r[2] is not None])
def test_a_token_validated_before_is_refused_after_the_write_that_changed_its_objects(
        case: str, make: Any, change: Any, error: str) -> None:
    tokens, objects = _tokens(), VersionedObjects()
    token = make(tokens)
    assert tokens.authenticate(token, objects) is not None
    change(objects)
    for resource in ("serviceaccounts", "pods", "secrets", "nodes"):
        objects.write(resource)
    with pytest.raises(sat.TokenError) as raised:
        tokens.authenticate(token, objects)
    assert str(raised.value) == error


def test_a_validated_token_reads_its_objects_again_only_after_a_write_to_their_resources() -> None:
    tokens, objects = _tokens(), VersionedObjects()
    token, _ = tokens.issue("ns", "robot", "sa-1", 600, [ISSUER], sat.Bound(pod=sat.Ref("web", "pod-1")))
    first = tokens.authenticate(token, objects)
    assert objects.reads == 2  # the account and the pod
    objects.write("nodes")  # a resource this token does not read
    assert tokens.authenticate(token, objects) == first and objects.reads == 2
    objects.write("pods")
    assert tokens.authenticate(token, objects) == first and objects.reads == 4


def test_a_token_whose_account_is_being_deleted_is_checked_on_every_request() -> None:
    """Such a token passes until a minute after the deletionTimestamp, which no write announces."""
    tokens, objects = _tokens(), VersionedObjects()
    objects.items[("serviceaccounts", "ns", "robot")] = _obj(
        "robot", "sa-1", deletionTimestamp=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    token, _ = tokens.issue("ns", "robot", "sa-1", 600, [ISSUER])
    assert tokens.authenticate(token, objects) is not None
    assert tokens.authenticate(token, objects) is not None
    assert objects.reads == 2


def test_the_times_are_checked_on_every_request_of_a_validated_token(monkeypatch: Any) -> None:
    tokens, objects = _tokens(), VersionedObjects()
    token, claims = tokens.issue("ns", "robot", "sa-1", 600, [ISSUER])
    assert tokens.authenticate(token, objects) is not None
    later = claims["exp"] + sat.LEEWAY + 1
    monkeypatch.setattr(sat.time, "time", lambda: later)
    with pytest.raises(sat.TokenError, match="service account token has expired"):
        tokens.authenticate(token, objects)


def test_a_token_of_another_issuer_or_no_jwt_is_not_ours() -> None:
    other, _ = _tokens(["https://elsewhere.example"]).issue("ns", "robot", "sa-1", 600, [ISSUER])
    assert _tokens().authenticate(other, Objects()) is None
    assert _tokens().authenticate("opaque-token", Objects()) is None
    # Every issuer given is accepted; the first one signs.
    assert _tokens([ISSUER, "https://elsewhere.example"]).authenticate(other, Objects()) is not None


def test_a_reviewer_asking_for_its_own_audience_gets_only_that_one() -> None:
    tokens = _tokens()
    token, _ = tokens.issue("ns", "robot", "sa-1", 600, [ISSUER, "vault"])
    answer = tokens.authenticate(token, Objects(), ["vault"])
    assert answer is not None and answer[1] == ["vault"]


def test_the_key_is_kept_in_its_file_and_its_kid_is_the_sha256_of_the_public_der(tmp_path: Any) -> None:
    import base64
    import hashlib

    from cryptography.hazmat.primitives import serialization

    first = signing_key.SigningKey(str(tmp_path / "pki" / "sa.key"))
    again = signing_key.SigningKey(str(tmp_path / "pki" / "sa.key"))
    assert first.kid == again.kid and (tmp_path / "pki" / "sa.pub").exists()
    public = serialization.load_pem_public_key((tmp_path / "pki" / "sa.pub").read_bytes())
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert first.kid == base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
    assert oct((tmp_path / "pki" / "sa.key").stat().st_mode & 0o777) == "0o600"
