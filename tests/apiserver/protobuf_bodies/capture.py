"""Capture the protobuf bodies real kubectl v1.36.3 and helm v4.2.3 send, and kubectl's own JSON.

A throwaway aiohttp server (127.0.0.1, random port) answers the few requests the clients need
(version, legacy discovery for `pods`, one stored helm release, a plausible reply to each write) and
records every request body. `test_protobuf.py` drives it live;
`python -m tests.apiserver.protobuf_bodies.capture` rewrites the fixtures beside this file:
`<body>.pb` (a body as sent) and `<case>.json` (kubectl's `--dry-run=client -o json` output for the
same command, where the command has a dry run).
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from tests import realclients

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]           # the kubectl command, without --kubeconfig
    dry_run: bool = True            # `--dry-run=client -o json` prints the object kubectl would send
    reply: dict[str, Any] = field(default_factory=dict)  # extra fields for the server's answer
    client: str = "kubectl"
    bodies: tuple[str, ...] = ()    # fixture names of the bodies sent, in order; default: (name,)

    @property
    def body_names(self) -> tuple[str, ...]:
        return self.bodies or (self.name,)


CASES = [
    Case("namespace", ("create", "namespace", "ns1")),
    Case("configmap", ("create", "configmap", "cm1", "--from-literal=greeting=hello", "--from-literal=empty=")),
    Case("secret_generic", ("create", "secret", "generic", "s1", "--from-literal=password=s3cr3t",
                            "--from-literal=user=admin", "--type=Opaque")),
    Case("deployment", ("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=8080")),
    Case("deployment_zero_replicas", ("create", "deployment", "idle", "--image=busybox", "--replicas=0")),
    Case("job", ("create", "job", "once", "--image=busybox", "--", "sh", "-c", "echo hi")),
    Case("service_clusterip", ("create", "service", "clusterip", "svc1", "--tcp=80:8080")),
    Case("serviceaccount", ("create", "serviceaccount", "robot")),
    Case("role", ("create", "role", "reader", "--verb=get", "--verb=list", "--resource=pods")),
    Case("rolebinding", ("create", "rolebinding", "reader-binding", "--role=reader", "--user=alice",
                         "--serviceaccount=default:robot")),
    Case("priorityclass", ("create", "priorityclass", "high", "--value=1000", "--description=important",
                           "--preemption-policy=Never")),
    Case("quota", ("create", "quota", "q1", "--hard=cpu=2,memory=1Gi,pods=10", "--scopes=BestEffort")),
    Case("cronjob", ("create", "cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *", "--", "date")),
    Case("pdb", ("create", "pdb", "pdb1", "--selector=app=web", "--min-available=50%")),
    Case("ingress", ("create", "ingress", "ing1", "--class=nginx",
                     "--rule=example.com/api*=svc1:80,tls=secret1")),
    Case("auth_can_i", ("auth", "can-i", "get", "pods", "--namespace=team-a"), dry_run=False,
         reply={"status": {"allowed": True}}),
    Case("auth_whoami", ("auth", "whoami"), dry_run=False,
         reply={"status": {"userInfo": {"username": "admin", "groups": ["system:masters"]}}}),
    Case("token", ("create", "token", "robot", "--duration=1h", "--audience=api"), dry_run=False,
         reply={"status": {"token": "header.payload.signature", "expirationTimestamp": "2030-01-01T00:00:00Z"}}),
    # helm marks its release record "uninstalling" (PUT Secret), then deletes it (DeleteOptions body).
    Case("helm_uninstall", ("uninstall", "demo"), client="helm", dry_run=False,
         bodies=("helm_release_secret_update", "helm_delete_options")),
]

HELM_RELEASE = {
    "name": "demo", "namespace": "default", "version": 1, "manifest": "", "config": {},
    "info": {"first_deployed": "2026-01-01T00:00:00Z", "last_deployed": "2026-01-01T00:00:00Z",
             "deleted": "", "description": "Install complete", "status": "deployed"},
    "chart": {"metadata": {"apiVersion": "v2", "name": "demo", "version": "0.1.0"}, "templates": [], "values": {}},
}


def helm_release_secret() -> dict[str, Any]:
    """The Secret helm stores a release in: data.release is base64(gzip(JSON)), base64'd again by JSON."""
    record = base64.b64encode(gzip.compress(json.dumps(HELM_RELEASE).encode()))
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": "sh.helm.release.v1.demo.v1", "namespace": "default", "resourceVersion": "1",
                         "labels": {"name": "demo", "owner": "helm", "status": "deployed", "version": "1"}},
            "data": {"release": base64.b64encode(record).decode()}}


@dataclass
class Captured:
    method: str
    path: str
    content_type: str
    body: bytes


def _core_resources() -> dict[str, Any]:
    verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1", "resources": [
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod", "verbs": verbs,
         "shortNames": ["po"], "categories": ["all"]},
    ]}


class CaptureServer:
    """Answers kubectl just enough and records each request that carries a body."""

    def __init__(self) -> None:
        self.requests: list[Captured] = []
        self.reply: dict[str, Any] = {}
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def __aenter__(self) -> CaptureServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        path = request.path.rstrip("/") or "/"
        if request.method == "GET":
            if path == "/version":
                return web.json_response({"major": "1", "minor": "36", "gitVersion": "v1.36.3",
                                          "platform": "linux/amd64"})
            if path == "/api":
                return web.json_response({"kind": "APIVersions", "versions": ["v1"]})
            if path == "/apis":
                return web.json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": []})
            if path == "/api/v1":
                return web.json_response(_core_resources())
            if path == "/api/v1/namespaces/default/secrets":
                return web.json_response({"apiVersion": "v1", "kind": "SecretList", "metadata": {"resourceVersion": "1"},
                                          "items": [helm_release_secret()]})
            if path == "/api/v1/namespaces/default/secrets/sh.helm.release.v1.demo.v1":
                return web.json_response(helm_release_secret())
            return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                      "reason": "NotFound", "code": 404}, status=404)
        body = await request.read()
        self.requests.append(Captured(request.method, path, request.headers.get("Content-Type", ""), body))
        # kubectl decodes the answer into the type it sent; a name and the case's status are enough.
        answer = {"metadata": {"name": "captured", "namespace": "default"}, **self.reply}
        return web.json_response(answer, status=201)


async def run_client(client: str, port: int, args: tuple[str, ...], home: str) -> str:
    kubeconfig = os.path.join(home, f"kubeconfig-{port}")
    if not os.path.exists(kubeconfig):
        with open(kubeconfig, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "capture",
                       "clusters": [{"name": "capture", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                       "users": [{"name": "capture", "user": {}}],
                       "contexts": [{"name": "capture", "context": {"cluster": "capture", "user": "capture",
                                                                     "namespace": "default"}}]}, f)
    binary = realclients.kubectl() if client == "kubectl" else realclients.helm()
    proc = await asyncio.create_subprocess_exec(
        binary, f"--kubeconfig={kubeconfig}", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, "HOME": home})
    stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout=60)
    # `auth can-i` exits 1 when the answer is "no"; every other command must succeed.
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and args[:2] != ("auth", "can-i")):
        raise RuntimeError(f"{client} {' '.join(args)} exited {proc.returncode}: {stderr.decode()}")
    return stdout.decode()


def _dry_run(args: tuple[str, ...]) -> tuple[str, ...]:
    # Flags go before a `--`, after which everything is the container's command.
    cut = args.index("--") if "--" in args else len(args)
    return (*args[:cut], "--dry-run=client", "-o", "json", *args[cut:])


async def capture(case: Case, home: str) -> tuple[list[Captured], dict[str, Any] | None]:
    """Run one case: the requests with a body the client sent, and kubectl's dry-run JSON (or None)."""
    async with CaptureServer() as server:
        server.reply = case.reply
        await run_client(case.client, server.port, case.args, home)
        sent = [r for r in server.requests if r.body]
        if len(sent) != len(case.body_names):
            raise RuntimeError(f"{case.client} {' '.join(case.args)} sent {len(sent)} bodies, "
                               f"expected {len(case.body_names)}")
        oracle = None
        if case.dry_run:
            oracle = json.loads(await run_client(case.client, server.port, _dry_run(case.args), home))
        return sent, oracle


async def _rewrite_fixtures() -> None:
    with tempfile.TemporaryDirectory() as home:
        for case in CASES:
            sent, oracle = await capture(case, home)
            for name, request in zip(case.body_names, sent):
                (HERE / f"{name}.pb").write_bytes(request.body)
                print(f"{name}: {request.method} {request.path} {request.content_type} {len(request.body)} bytes")
            if oracle is not None:
                (HERE / f"{case.name}.json").write_text(json.dumps(oracle, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    asyncio.run(_rewrite_fixtures())
