"""TokenRequest, TokenReview, the 401 answers and the issuer documents, against an in-process server.

The server has an admin token (as under `haru up`), so a request without good credentials is
refused; it serves plain HTTP, so client certificates are left to the real-client tests.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import jwt
import pytest
import pytest_asyncio

from apiserver import runner

ADMIN = {"Authorization": "Bearer adm1n"}
SA = "/api/v1/namespaces/default/serviceaccounts"
PODS = "/api/v1/namespaces/default/pods"
ISSUER = "https://kubernetes.default.svc.cluster.local"
UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


class Server:
    def __init__(self, url: str, session: aiohttp.ClientSession) -> None:
        self.url, self.session = url, session

    async def call(self, method: str, path: str, body: Any = None, token: str | None = "adm1n") -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with self.session.request(method, self.url + path, json=body, headers=headers) as resp:
            try:
                return resp.status, await resp.json(content_type=None)
            except ValueError:
                return resp.status, await resp.text()

    async def token(self, account: str, spec: dict[str, Any]) -> tuple[int, Any]:
        return await self.call("POST", f"{SA}/{account}/token",
                               {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})

    async def whoami(self, token: str) -> tuple[int, Any]:
        return await self.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                               {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, token=token)

    async def review(self, token: str, audiences: list[str] | None = None) -> tuple[int, Any]:
        spec: dict[str, Any] = {"token": token}
        if audiences:
            spec["audiences"] = audiences
        return await self.call("POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                               {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    running = await runner.start(str(tmp_path / "data"), port=0, admin_token="adm1n")
    async with aiohttp.ClientSession() as session:
        s = Server(running.url, session)
        for name in ("robot", "other"):
            await s.call("POST", SA, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
               "spec": {"serviceAccountName": "robot", "containers": [{"name": "c", "image": "busybox"}]}}
        status, _ = await s.call("POST", PODS, pod)
        assert status == 201
        try:
            yield s
        finally:
            await running.stop()


def _ref(kind: str, name: str, uid: str = "", api_version: str = "v1") -> dict[str, Any]:
    ref = {"apiVersion": api_version, "kind": kind, "name": name}
    return {**ref, "uid": uid} if uid else ref


@pytest.mark.parametrize(("case", "spec", "code", "message"), [
    ("a pod that runs as another account", {"boundObjectRef": _ref("Pod", "web")}, 400,
     'cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.'),
    ("a kind tokens cannot be bound to", {"boundObjectRef": _ref("ConfigMap", "cm")}, 400,
     "cannot bind token to object of type /v1, Kind=ConfigMap"),
    ("a pod that does not exist", {"boundObjectRef": _ref("Pod", "gone")}, 404, 'pods "gone" not found'),
    ("less than ten minutes", {"expirationSeconds": 599}, 422,
     'TokenRequest.authentication.k8s.io "other" is invalid: spec.expirationSeconds: Invalid value: 599: '
     "may not specify a duration less than 10 minutes"),
    ("more than 2^32 seconds", {"expirationSeconds": (1 << 32) + 1}, 422,
     'TokenRequest.authentication.k8s.io "other" is invalid: spec.expirationSeconds: Invalid value: 4294967297: '
     "may not specify a duration larger than 2^32 seconds"),
])
async def test_token_requests_refused(server: Server, case: str, spec: dict[str, Any], code: int,
                                      message: str) -> None:
    status, body = await server.token("other", spec)
    assert (status, body["message"]) == (code, message)


async def test_a_uid_that_does_not_match_the_bound_pod_is_a_conflict(server: Server) -> None:
    status, body = await server.token("robot", {"boundObjectRef": _ref("Pod", "web", uid="not-the-uid")})
    assert (status, body["reason"], body["message"]) == (
        409, "Conflict", 'Operation cannot be fulfilled on Pod "web": the UID in the bound object reference '
        "(not-the-uid) does not match the UID in record. The object might have been deleted and then recreated")


async def test_a_pod_bound_token_names_the_pod_and_dies_with_it(server: Server) -> None:
    _, pod = await server.call("GET", f"{PODS}/web")
    status, answer = await server.token("robot", {"boundObjectRef": _ref("Pod", "web", pod["metadata"]["uid"])})
    assert status == 201 and answer["spec"]["audiences"] == [ISSUER] and answer["spec"]["expirationSeconds"] == 3600
    token = answer["status"]["token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["kubernetes.io"]["pod"] == {"name": "web", "uid": pod["metadata"]["uid"]}
    status, me = await server.whoami(token)
    assert status == 201 and me["status"]["userInfo"]["username"] == "system:serviceaccount:default:robot"
    assert me["status"]["userInfo"]["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default",
                                                  "system:authenticated"]
    assert me["status"]["userInfo"]["extra"]["authentication.kubernetes.io/pod-name"] == ["web"]
    await server.call("DELETE", f"{PODS}/web?gracePeriodSeconds=0")
    assert await server.whoami(token) == (401, UNAUTHORIZED)
    status, review = await server.review(token)
    assert (status, review["status"]) == (201, {"user": {}, "error": "service account token has been invalidated"})


async def test_the_kubelets_3607_seconds_are_extended_to_a_year_with_a_warning_after_the_hour(server: Server) -> None:
    status, answer = await server.token("robot", {"expirationSeconds": 3607, "boundObjectRef": _ref("Pod", "web")})
    assert status == 201
    claims = jwt.decode(answer["status"]["token"], options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 365 * 24 * 3600
    assert claims["kubernetes.io"]["warnafter"] - claims["iat"] == 3607
    expiry = time.strptime(answer["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
    assert int(time.mktime(expiry) - time.mktime(time.gmtime(claims["iat"]))) == 3607


async def test_token_review_answers_for_the_audiences_asked(server: Server) -> None:
    _, mine = await server.token("robot", {"audiences": ["vault"]})
    status, review = await server.review(mine["status"]["token"], ["vault"])
    assert status == 201 and review["status"]["authenticated"] is True
    assert review["status"]["audiences"] == ["vault"]
    assert review["status"]["user"]["username"] == "system:serviceaccount:default:robot"
    _, default = await server.token("robot", {})
    _, review = await server.review(default["status"]["token"], ["vault"])
    assert review["status"] == {"user": {}, "error": f'token audiences ["{ISSUER}"] is invalid for the target '
                                                    'audiences ["vault"]'}
    _, review = await server.review("adm1n")
    assert review["status"]["authenticated"] is True and review["status"]["audiences"] == [ISSUER]
    status, body = await server.call("POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                                     {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {}})
    assert (status, body["message"]) == (400, "token is required for TokenReview in authentication")


@pytest.mark.parametrize(("path", "token", "code"), [
    ("/api/v1/namespaces", None, 401),
    ("/api/v1/namespaces", "wrong", 401),
    ("/healthz", None, 200),
    ("/version", None, 200),
    ("/healthz", "wrong", 401),  # a refused credential is not anonymous
])
async def test_who_may_come_without_credentials(server: Server, path: str, token: str | None, code: int) -> None:
    status, body = await server.call("GET", path, token=token)
    assert status == code
    if code == 401:
        assert body == UNAUTHORIZED


async def test_the_issuer_documents_let_a_third_party_verify_a_token(server: Server) -> None:
    # Read as a service account, whom upstream's system:service-account-issuer-discovery binding
    # lets in. Anonymous passes authentication here; whether it may read is authorization's say.
    _, answer = await server.token("robot", {})
    token = answer["status"]["token"]
    status, config = await server.call("GET", "/.well-known/openid-configuration", token=token)
    assert status == 200 and config == {
        "issuer": ISSUER, "jwks_uri": f"{server.url}/openid/v1/jwks", "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"]}
    async with server.session.get(server.url + "/openid/v1/jwks", headers={"Authorization": f"Bearer {token}"}) as resp:
        assert resp.headers["Content-Type"] == "application/jwk-set+json"
        assert resp.headers["Cache-Control"] == "public, max-age=3600"
        jwks = jwt.PyJWKSet.from_dict(await resp.json(content_type=None))
    for path in ("/.well-known/openid-configuration", "/openid/v1/jwks"):
        assert (await server.call("GET", path, token=None))[0] != 401
    key = jwks[jwt.get_unverified_header(token)["kid"]]
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=ISSUER, issuer=ISSUER)
    assert claims["sub"] == "system:serviceaccount:default:robot"


@pytest.mark.parametrize(("kind", "path", "body"), [
    ("Node", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n9"}}),
    ("Secret", "/api/v1/namespaces/default/secrets",
     {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "n9"}, "data": {}}),
])
async def test_a_node_or_secret_bound_token_holds_while_that_object_lives(server: Server, kind: str, path: str,
                                                                         body: dict[str, Any]) -> None:
    status, created = await server.call("POST", path, body)
    assert status == 201
    status, answer = await server.token("robot", {"boundObjectRef": _ref(kind, "n9")})
    assert status == 201
    token = answer["status"]["token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["kubernetes.io"][kind.lower()] == {"name": "n9", "uid": created["metadata"]["uid"]}
    assert (await server.whoami(token))[0] == 201
    await server.call("DELETE", f"{path}/n9")
    assert await server.whoami(token) == (401, UNAUTHORIZED)
