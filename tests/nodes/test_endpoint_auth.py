"""Fine-grained kubelet authorization: the path → nodes/<subresource> table (upstream's auth.go), the
reviews the endpoint sends and in what order (a recording API server that allows only what a test
says), the proxy fallback for pods/healthz/configz only, 401 without credentials, and the real
in-process API server's TokenReview and SubjectAccessReview on the way.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from aiohttp import web

from nodes.endpoint import auth
from tests.nodes import endpoint_fixture
from tests.nodes.fake_runtime import FakeNode


@pytest.mark.parametrize(("method", "path", "want"), [
    ("GET", "/stats/summary", ["stats"]),
    ("GET", "/metrics", ["metrics"]),
    ("GET", "/metrics/cadvisor", ["metrics"]),
    ("GET", "/logs/", ["log"]),
    ("POST", "/checkpoint/ns/p/c", ["checkpoint"]),
    ("GET", "/pods", ["pods", "proxy"]),
    ("GET", "/runningpods/", ["pods", "proxy"]),
    ("GET", "/healthz", ["healthz", "proxy"]),
    ("GET", "/configz", ["configz", "proxy"]),
    ("GET", "/spec/", ["proxy"]),
    ("GET", "/exec/ns/p/c", ["proxy"]),
    ("POST", "/exec/ns/p/c", ["proxy"]),
    ("GET", "/containerLogs/ns/p/c", ["proxy"]),
    ("GET", "/statsfoo", ["proxy"]),  # a prefix is not a subpath
])
def test_each_path_asks_for_its_subresource_then_the_fallback(method: str, path: str, want: list[str]) -> None:
    asked = auth.attributes(method, path, "node-a")

    assert [a.subresource for a in asked] == want
    assert {(a.verb, a.resource, a.name) for a in asked} == {
        ({"GET": "get", "POST": "create"}[method], "nodes", "node-a")}
    assert asked[0].resource_attributes() == {"verb": asked[0].verb, "group": "", "version": "v1",
                                              "resource": "nodes", "subresource": want[0], "name": "node-a",
                                              "namespace": ""}


class RecordingAPI:
    """An API server that answers TokenReview for one token and allows the listed subresources."""

    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed
        self.reviews: list[dict[str, Any]] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.reviews.append(body)
        if body["kind"] == "TokenReview":
            good = body["spec"]["token"] == "good"
            return web.json_response({**body, "status": {"authenticated": good, "user": {
                "username": "system:serviceaccount:monitoring:scraper", "uid": "u-1",
                "groups": ["system:serviceaccounts"]}}}, status=201)
        subresource = body["spec"]["resourceAttributes"]["subresource"]
        return web.json_response({**body, "status": {"allowed": subresource in self.allowed}}, status=201)

    def asked(self) -> list[str]:
        return [r["spec"]["resourceAttributes"]["subresource"] for r in self.reviews
                if r["kind"] == "SubjectAccessReview"]


@pytest_asyncio.fixture
async def recording() -> AsyncIterator[tuple[RecordingAPI, str]]:
    api = RecordingAPI({"proxy"})
    app = web.Application()
    app.router.add_post("/apis/{group}/v1/{kind}", api.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield api, f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def test_pods_falls_back_to_proxy_and_stats_does_not(recording: tuple[RecordingAPI, str]) -> None:
    api, url = recording
    async with endpoint_fixture.running(url, FakeNode(anonymous=False)) as kubelet:
        good = {"Authorization": "Bearer good"}

        assert (await kubelet.get("/pods", headers=good))[0] == 200
        assert api.asked() == ["pods", "proxy"]
        review = api.reviews[1]["spec"]
        assert (review["user"], review["uid"], review["groups"]) == (
            "system:serviceaccount:monitoring:scraper", "u-1", ["system:serviceaccounts"])
        assert review["resourceAttributes"]["name"] == "node-a"

        assert await kubelet.get("/stats/summary", headers=good) == (
            403, "Forbidden (user=system:serviceaccount:monitoring:scraper, verb=get, resource=nodes, "
                 "subresource=stats)")
        assert api.asked()[2:] == ["stats"]


async def test_decisions_and_tokens_are_cached(recording: tuple[RecordingAPI, str]) -> None:
    api, url = recording
    async with endpoint_fixture.running(url, FakeNode(anonymous=False)) as kubelet:
        for _ in range(3):
            assert (await kubelet.get("/healthz", headers={"Authorization": "Bearer good"})) == (200, "ok")
    assert [r["kind"] for r in api.reviews] == ["TokenReview", "SubjectAccessReview", "SubjectAccessReview"]


async def test_no_or_a_bad_token_is_401_without_anonymous_auth(recording: tuple[RecordingAPI, str]) -> None:
    api, url = recording
    async with endpoint_fixture.running(url, FakeNode(anonymous=False)) as kubelet:
        assert await kubelet.get("/healthz") == (401, "Unauthorized")
        assert await kubelet.get("/healthz", headers={"Authorization": "Bearer bad"}) == (401, "Unauthorized")
    assert api.asked() == []


async def test_anonymous_requests_are_reviewed_as_system_anonymous(recording: tuple[RecordingAPI, str]) -> None:
    api, url = recording
    async with endpoint_fixture.running(url, FakeNode(anonymous=True)) as kubelet:
        assert await kubelet.get("/configz") == (200, '{"kubeletconfig":' + _config_json(kubelet.node) + "}")
    spec = api.reviews[0]["spec"]
    assert (spec["user"], spec["groups"]) == ("system:anonymous", ["system:unauthenticated"])


def _config_json(node: FakeNode) -> str:
    return json.dumps(node.kubelet_config(), separators=(",", ":"))


async def test_the_real_api_servers_reviews_let_its_admin_through(tmp_path: Any) -> None:
    from apiserver import runner

    running = await runner.start(str(tmp_path / "data"), port=0, admin_token="admin-secret")
    try:
        async with endpoint_fixture.running(running.url, FakeNode(anonymous=False), token="admin-secret") as kubelet:
            assert await kubelet.get("/healthz", headers={"Authorization": "Bearer admin-secret"}) == (200, "ok")
            assert await kubelet.get("/healthz", headers={"Authorization": "Bearer wrong"}) == (401, "Unauthorized")
    finally:
        await running.stop()
