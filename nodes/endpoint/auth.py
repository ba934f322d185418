"""Who may call a hollow kubelet's endpoint: TokenReview for the caller, SubjectAccessReview for the path.

As the kubelet's webhook authn/authz (pkg/kubelet/server/auth.go, fine-grained authorization GA in
1.36): `attributes(method, path, node)` maps the request to `nodes/<subresource>` attributes —
stats, metrics, log, checkpoint alone; pods, healthz and configz first and then `proxy` as the
fallback; anything else `proxy` — and the request passes when any of them is allowed. Decisions
are cached as the kubelet's defaults say (tokens 2 min, allowed 5 min, denied 30 s). `server.py`
runs `Gate.check` before every handler; the reviews go through `client.rest`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from client import errors as client_errors
from client.rest import RestClient

_VERBS = {"POST": "create", "GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_ALONE = (("/stats", "stats"), ("/metrics", "metrics"), ("/logs", "log"), ("/checkpoint", "checkpoint"))
_WITH_PROXY_FALLBACK = (("/pods", "pods"), ("/runningpods", "pods"), ("/healthz", "healthz"),
                        ("/configz", "configz"))
TOKEN_TTL, ALLOWED_TTL, DENIED_TTL = 120.0, 300.0, 30.0


@dataclass(frozen=True)
class User:
    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"user": self.username, "groups": list(self.groups)}
        if self.uid:
            spec["uid"] = self.uid
        if self.extra:
            spec["extra"] = {key: list(values) for key, values in self.extra}
        return spec


ANONYMOUS = User("system:anonymous", groups=("system:unauthenticated",))


@dataclass(frozen=True)
class Attributes:
    verb: str
    subresource: str
    name: str
    path: str = field(default="", compare=False)  # told to the log, not to the review
    resource: str = "nodes"

    def resource_attributes(self) -> dict[str, Any]:
        return {"verb": self.verb, "group": "", "version": "v1", "resource": self.resource,
                "subresource": self.subresource, "name": self.name, "namespace": ""}


def _is_subpath(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


def attributes(method: str, path: str, node: str) -> list[Attributes]:
    """The attributes to ask about, in order; the first allowed one lets the request through."""
    verb = _VERBS.get(method.upper(), "")
    for root, subresource in _ALONE:
        if _is_subpath(path, root):
            return [Attributes(verb, subresource, node, path)]
    for root, subresource in _WITH_PROXY_FALLBACK:
        if _is_subpath(path, root):
            return [Attributes(verb, subresource, node, path), Attributes(verb, "proxy", node, path)]
    return [Attributes(verb, "proxy", node, path)]


class Unauthorized(Exception):
    pass


class Forbidden(Exception):
    pass


class ReviewFailed(Exception):
    pass


@dataclass
class Gate:
    """Authenticates and authorizes one kubelet's requests through the API server's reviews."""

    rest: RestClient
    anonymous: bool = False  # KubeletConfiguration authentication.anonymous.enabled (v1beta1 default off)
    _tokens: dict[str, tuple[float, User | None]] = field(default_factory=dict)
    _decisions: dict[tuple[User, Attributes], tuple[float, bool]] = field(default_factory=dict)

    async def authenticate(self, authorization: str | None) -> User:
        if not authorization or not authorization.lower().startswith("bearer "):
            if self.anonymous:
                return ANONYMOUS
            raise Unauthorized()
        token = authorization[7:].strip()
        now = asyncio.get_running_loop().time()
        cached = self._tokens.get(token)
        if cached is None or cached[0] < now:
            cached = (now + TOKEN_TTL, await self._review_token(token))
            self._tokens[token] = cached
        if cached[1] is None:
            raise Unauthorized()
        return cached[1]

    async def _review_token(self, token: str) -> User | None:
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        try:
            answer = await self.rest.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", body=review)
        except (client_errors.APIError, aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
            raise ReviewFailed(f"token review failed: {exc}") from None
        status = (answer or {}).get("status") or {}
        if not status.get("authenticated"):
            return None
        user = status.get("user") or {}
        extra = tuple(sorted((k, tuple(v)) for k, v in (user.get("extra") or {}).items()))
        return User(user.get("username", ""), user.get("uid", ""), tuple(user.get("groups") or ()), extra)

    async def authorize(self, user: User, wanted: list[Attributes]) -> None:
        """Returns when one of `wanted` is allowed; Forbidden names the first one otherwise."""
        for attrs in wanted:
            if await self._allowed(user, attrs):
                return
        first = wanted[0]
        raise Forbidden(f"Forbidden (user={user.username}, verb={first.verb}, resource={first.resource}, "
                        f"subresource={first.subresource})")

    async def _allowed(self, user: User, attrs: Attributes) -> bool:
        now = asyncio.get_running_loop().time()
        cached = self._decisions.get((user, attrs))
        if cached is not None and cached[0] >= now:
            return cached[1]
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                  "spec": {**user.spec(), "resourceAttributes": attrs.resource_attributes()}}
        try:
            answer = await self.rest.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=review)
        except (client_errors.APIError, aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
            raise ReviewFailed(f"Authorization error (user={user.username}, verb={attrs.verb}, "
                               f"resource={attrs.resource}, subresource={attrs.subresource})") from exc
        allowed = bool(((answer or {}).get("status") or {}).get("allowed"))
        self._decisions[(user, attrs)] = (now + (ALLOWED_TTL if allowed else DENIED_TTL), allowed)
        return allowed
