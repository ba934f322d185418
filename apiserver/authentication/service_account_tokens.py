"""Service-account tokens: the JWTs `serviceaccounts/<name>/token` issues, and their validation.

Issued as kube-apiserver's TokenRequest issues them (pkg/serviceaccount/claims.go): RS256 with the
cluster's `signing_key`, header {alg, kid}, claims aud, exp, iat, iss, jti, nbf, sub and
`kubernetes.io` {namespace, serviceaccount, pod | secret | node, warnafter}. A token authenticates
while its signature holds, it is inside exp/nbf/iat (one minute of leeway, go-jose's), one of its
audiences is one the caller accepts, and the service account and bound object still exist with
the same uid. A token with another issuer, or that is no JWT, is not ours: None, and the next
authenticator may try it. Called by `chain.Authenticator` and `subresources/token.py`.

The bound-object check of a token that passed it is kept (`Tokens._validated`) while none of the
resources it read has been written since (`VersionedLookup.changed`). kube-apiserver instead keeps
a token's whole answer for 10 s (its token cache); here a token still dies with the first write
that deletes or replaces its account, pod, secret or node, and the signature-independent checks
(times, audiences) still run on every request.
"""

from __future__ import annotations

import datetime
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from apiserver import auth
from apiserver.authentication import signing_key

# Injected by the kubelet's projected volume; such pod-bound tokens live a year and warn after it.
WARN_ONLY_SECONDS = 60 * 60 + 7
EXTENDED_SECONDS = 24 * 365 * 60 * 60
LEEWAY = 60  # go-jose's jwt.DefaultLeeway
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"

# (resource, namespace, name) -> the stored object, decoded, or None.
Lookup = Callable[[str, str, str], "dict[str, Any] | None"]


class VersionedLookup(Protocol):
    """A `Lookup` that can also say when a resource last changed: the revision of the last write of
    any object of `resource` (`options.StoreLookup`). A plain `Lookup` is asked on every request."""

    def __call__(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None: ...

    def changed(self, resource: str) -> int: ...


class TokenError(Exception):
    """The token is ours but does not authenticate; the text is upstream's reason."""


@dataclass(frozen=True)
class Ref:
    name: str
    uid: str

    def claim(self) -> dict[str, str]:
        return {"name": self.name, "uid": self.uid} if self.uid else {"name": self.name}


@dataclass(frozen=True)
class Bound:
    """What a token is bound to: at most one of pod or secret; node alone, or the pod's node."""

    pod: Ref | None = None
    secret: Ref | None = None
    node: Ref | None = None


_VERIFIED_MAX = 4096


class Tokens:
    def __init__(self, key: signing_key.SigningKey, issuers: list[str], api_audiences: list[str]) -> None:
        self.key = key
        self.issuers = issuers  # the first signs; all are accepted (--service-account-issuer, repeated)
        self.api_audiences = api_audiences or issuers[:1]
        # Tokens whose signature held, with their claims: a signature never changes, and checking it
        # is most of a token's cost (60 µs of CPU, measured). Times, audiences and the bound objects
        # are still checked on every request, so a cached token still dies with its pod.
        self._verified: dict[str, dict[str, Any]] = {}
        # Tokens whose bound objects were all there: ((resource read, its `changed` revision then)…,
        # the user). Reading and decoding those objects was a third of a token's cost.
        self._validated: dict[str, tuple[tuple[tuple[str, int], ...], auth.User]] = {}

    @property
    def issuer(self) -> str:
        return self.issuers[0]

    def issue(self, namespace: str, name: str, uid: str, seconds: int, audiences: list[str],
              bound: Bound = Bound(), warn_after: int = 0) -> tuple[str, dict[str, Any]]:
        now = int(time.time())
        private: dict[str, Any] = {"namespace": namespace, "serviceaccount": Ref(name, uid).claim()}
        if bound.pod is not None:
            private["pod"] = bound.pod.claim()
        if bound.secret is not None:
            private["secret"] = bound.secret.claim()
        if bound.node is not None:
            private["node"] = bound.node.claim()
        if warn_after:
            private["warnafter"] = now + warn_after
        claims = {"aud": audiences, "exp": now + seconds, "iat": now, "iss": self.issuer,
                  "jti": str(uuid.uuid4()), "kubernetes.io": private, "nbf": now,
                  "sub": f"system:serviceaccount:{namespace}:{name}"}
        header = signing_key.b64url(json.dumps({"alg": signing_key.ALGORITHM, "kid": self.key.kid},
                                               separators=(",", ":")).encode())
        payload = signing_key.b64url(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
        signature = signing_key.b64url(self.key.sign(f"{header}.{payload}".encode()))
        return f"{header}.{payload}.{signature}", claims

    def authenticate(self, token: str, lookup: Lookup | VersionedLookup,
                     audiences: list[str] | None = None) -> tuple[auth.User, list[str]] | None:
        """(user, the audiences it was accepted for), None if not ours, or TokenError."""
        claims = self._verified.get(token)
        if claims is None:
            parsed = _parse(token)
            if parsed is None:
                return None
            header, claims, signed, signature = parsed
            if claims.get("iss") not in self.issuers:
                return None
            if header.get("alg") != signing_key.ALGORITHM or not self.key.verify(signed, signature):
                raise TokenError("go-jose/go-jose: error in cryptographic primitive")
            _bounded_put(self._verified, token, claims)
        token_audiences = _audiences(claims.get("aud")) or self.api_audiences
        wanted = audiences if audiences else self.api_audiences
        accepted = [a for a in token_audiences if a in wanted]
        if not accepted:
            raise TokenError(f"token audiences {_go_quoted(token_audiences)} is invalid for the target audiences "
                             f"{_go_quoted(wanted)}")
        _check_times(claims)
        return self._validated_user(token, claims, lookup), accepted

    def _validated_user(self, token: str, claims: dict[str, Any], lookup: Lookup | VersionedLookup) -> auth.User:
        """`_validate_objects`, or its earlier answer while nothing it read can have changed."""
        changed = getattr(lookup, "changed", None)
        if changed is None:
            return _validate_objects(claims, lookup)
        known = self._validated.get(token)
        if known is not None:
            revisions, user = known
            if all(changed(resource) == revision for resource, revision in revisions):
                return user
        as_of: dict[str, int] = {}
        read: list[dict[str, Any] | None] = []

        def recording(resource: str, namespace: str, name: str) -> dict[str, Any] | None:
            # The revision before the read: a write landing after it makes the entry stale, not wrong.
            as_of.setdefault(resource, changed(resource))
            found = lookup(resource, namespace, name)
            read.append(found)
            return found

        user = _validate_objects(claims, recording)
        # An object being deleted passes only until a minute after its deletionTimestamp, a change
        # no write announces: such a token is checked anew each time.
        if not any(obj is None or (obj.get("metadata") or {}).get("deletionTimestamp") for obj in read):
            _bounded_put(self._validated, token, (tuple(as_of.items()), user))
        return user


def _bounded_put(cache: dict[str, Any], token: str, value: Any) -> None:
    if token not in cache and len(cache) >= _VERIFIED_MAX:
        del cache[next(iter(cache))]  # the oldest first
    cache[token] = value


def _parse(token: str) -> tuple[dict[str, Any], dict[str, Any], bytes, bytes] | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        header = json.loads(signing_key.unb64url(parts[0]))
        claims = json.loads(signing_key.unb64url(parts[1]))
        signature = signing_key.unb64url(parts[2])
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return None
    return header, claims, f"{parts[0]}.{parts[1]}".encode(), signature


def _audiences(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [a for a in value if isinstance(a, str)] if isinstance(value, list) else []


def _go_quoted(values: list[str]) -> str:
    """A []string as Go's %q prints it: ["a" "b"]."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def _check_times(claims: dict[str, Any]) -> None:
    now = time.time()
    if isinstance(claims.get("exp"), (int, float)) and now - LEEWAY > claims["exp"]:
        raise TokenError("service account token has expired")
    if isinstance(claims.get("nbf"), (int, float)) and now + LEEWAY < claims["nbf"]:
        raise TokenError("service account token is not valid yet")
    if isinstance(claims.get("iat"), (int, float)) and now + LEEWAY < claims["iat"]:
        raise TokenError("service account token is issued in the future")


def _deleted_long_ago(obj: dict[str, Any]) -> bool:
    stamp = (obj.get("metadata") or {}).get("deletionTimestamp")
    if not stamp:
        return False
    when = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return when < time.time() - LEEWAY


def _uid(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid", ""))


def _validate_objects(claims: dict[str, Any], lookup: Lookup) -> auth.User:
    """Upstream's validator: the account, then the bound secret, pod or node, must still be there."""
    private = claims.get("kubernetes.io") or {}
    namespace = str(private.get("namespace", ""))
    account_ref = private.get("serviceaccount") or {}
    account_name = str(account_ref.get("name", ""))
    account = lookup("serviceaccounts", namespace, account_name)
    if account is None:
        raise TokenError(f'serviceaccounts "{account_name}" not found')
    if _uid(account) != account_ref.get("uid", ""):
        raise TokenError(f"service account UID ({_uid(account)}) does not match claim ({account_ref.get('uid', '')})")
    if _deleted_long_ago(account):
        raise TokenError(f"service account {namespace}/{account_name} has been deleted")
    extra: dict[str, list[str]] = {}
    for kind, resource, where in (("secret", "secrets", namespace), ("pod", "pods", namespace)):
        ref = private.get(kind)
        if ref is None:
            continue
        obj = lookup(resource, where, str(ref.get("name", "")))
        if obj is None:
            raise TokenError("service account token has been invalidated")
        if _uid(obj) != ref.get("uid", ""):
            raise TokenError(f"{kind} UID ({_uid(obj)}) does not match service account {kind} ref claim "
                             f"({ref.get('uid', '')})")
        if _deleted_long_ago(obj):
            raise TokenError("service account token has been invalidated")
        if kind == "pod":
            extra["authentication.kubernetes.io/pod-name"] = [str(ref.get("name", ""))]
            extra["authentication.kubernetes.io/pod-uid"] = [str(ref.get("uid", ""))]
    node_ref = private.get("node")
    if node_ref is not None:
        if private.get("pod") is None:  # a node-bound token: the node must still be the same one
            node = lookup("nodes", "", str(node_ref.get("name", "")))
            if node is None:
                raise TokenError("service account token has been invalidated")
            if _uid(node) != node_ref.get("uid", ""):
                raise TokenError(f"node UID ({_uid(node)}) does not match service account node ref claim "
                                 f"({node_ref.get('uid', '')})")
            if _deleted_long_ago(node):
                raise TokenError("service account token has been invalidated")
        extra["authentication.kubernetes.io/node-name"] = [str(node_ref.get("name", ""))]
        if node_ref.get("uid"):
            extra["authentication.kubernetes.io/node-uid"] = [str(node_ref["uid"])]
    if claims.get("jti"):
        extra[CREDENTIAL_ID] = [f"JTI={claims['jti']}"]
    return auth.User(f"system:serviceaccount:{namespace}:{account_name}",
                     ("system:serviceaccounts", f"system:serviceaccounts:{namespace}"),
                     uid=str(account_ref.get("uid", "")), extra=extra)
