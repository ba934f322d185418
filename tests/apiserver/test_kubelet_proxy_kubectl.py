"""kubectl v1.36.3 `exec`, `logs -f`, `attach` and `port-forward` through an in-process API server's
proxy to a hollow kubelet endpoint over an in-test runtime, with a Node made by hand pointing at it;
over plain HTTP, and over HTTPS with the admin token as `haru up` serves it.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import ssl
import struct
import termios
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import pytest_asyncio

from apiserver import runner
from cluster import certs, kubeconfig
from tests import realclients
from tests.apiserver.test_kubelet_proxy import make_node, make_pod
from tests.conftest import InProcess
from tests.nodes import endpoint_fixture
from tests.nodes.endpoint_fixture import Kubelet
from tests.nodes.fake_runtime import FakeNode


class Kubectl:
    def __init__(self, url: str, tmp_path: Path) -> None:
        self.kubeconfig = tmp_path / "kubeconfig"
        self.kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters: [{{name: haru, cluster: {{server: '{url}'}}}}]\n"
            "users: [{name: me, user: {}}]\n"
            "contexts: [{name: here, context: {cluster: haru, user: me, namespace: default}}]\n"
            "current-context: here\n")
        self.cache = tmp_path / "cache"

    async def start(self, *args: str, stdin: bool = False) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            realclients.kubectl(), f"--kubeconfig={self.kubeconfig}", f"--cache-dir={self.cache}", *args,
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)

    async def run(self, *args: str, input: bytes | None = None) -> tuple[int, str, str]:
        proc = await self.start(*args, stdin=input is not None)
        out, err = await asyncio.wait_for(proc.communicate(input), 60)
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()


@pytest_asyncio.fixture
async def cluster(api: Any, tmp_path: Path) -> AsyncIterator[tuple[Kubelet, Kubectl]]:
    async with endpoint_fixture.running(api.url) as kubelet:
        await make_node(api, "node-a", kubelet.port)
        kubelet.node.add("web", ["c"])
        await make_pod(api, "web", ["c"])
        yield kubelet, Kubectl(api.url, tmp_path)


async def test_kubectl_exec_prints_stdout_and_exits_with_the_commands_code(cluster: tuple[Kubelet, Kubectl]) -> None:
    _, kubectl = cluster

    assert await kubectl.run("exec", "web", "--", "echo", "hi", "there") == (0, "hi there\n", "")
    code, out, err = await kubectl.run("exec", "web", "--", "exit", "3")
    assert (code, out) == (3, "")
    assert "command terminated with exit code 3" in err
    code, _, err = await kubectl.run("exec", "web", "-c", "c", "--", "warn", "on", "stderr")
    assert code == 1 and err.startswith("on stderr\n")


async def test_kubectl_exec_with_stdin_sends_it_and_closes_it(cluster: tuple[Kubelet, Kubectl]) -> None:
    _, kubectl = cluster

    assert await kubectl.run("exec", "-i", "web", "--", "cat", input=b"piped through\n") == (0, "piped through\n", "")


async def test_kubectl_exec_in_a_stopped_container_prints_the_kubelets_reason(cluster: tuple[Kubelet, Kubectl]) -> None:
    kubelet, kubectl = cluster
    kubelet.node.by_key[("default", "web")].by_name["c"].stop()

    code, _, err = await kubectl.run("exec", "web", "--", "true")

    assert code == 1
    assert 'unable to upgrade connection: container not found ("c")' in err


async def test_kubectl_logs_follow_streams_until_the_container_ends(cluster: tuple[Kubelet, Kubectl]) -> None:
    kubelet, kubectl = cluster
    container = kubelet.node.by_key[("default", "web")].by_name["c"]
    container.print("started")
    proc = await kubectl.start("logs", "-f", "web")
    assert proc.stdout is not None
    assert await asyncio.wait_for(proc.stdout.readline(), 30) == b"started\n"
    container.print("more")
    assert await asyncio.wait_for(proc.stdout.readline(), 30) == b"more\n"
    container.stop()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    assert await kubectl.run("logs", "web", "--tail=1", "--timestamps") == (
        0, "2026-12-01T12:00:01.000000000Z more\n", "")


async def test_kubectl_attach_shows_the_main_process_until_it_ends(cluster: tuple[Kubelet, Kubectl]) -> None:
    kubelet, kubectl = cluster
    proc = await kubectl.start("attach", "web", "-c", "c")
    assert proc.stdout is not None
    assert await asyncio.wait_for(proc.stdout.readline(), 30) == b"attached\n"
    kubelet.node.by_key[("default", "web")].by_name["c"].stop()
    assert await asyncio.wait_for(proc.wait(), 30) == 0


async def test_kubectl_port_forward_relays_a_local_connection(cluster: tuple[Kubelet, Kubectl]) -> None:
    kubelet, kubectl = cluster
    kubelet.node.by_key[("default", "web")].listening.add(8080)
    proc = await kubectl.start("port-forward", "pod/web", ":8080")
    assert proc.stdout is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert line.startswith("Forwarding from 127.0.0.1:") and line.endswith(" -> 8080\n"), line
        local = int(line.split("127.0.0.1:")[1].split(" ")[0])
        reader, writer = await asyncio.open_connection("127.0.0.1", local)
        writer.write(b"hello")
        await writer.drain()
        assert await asyncio.wait_for(reader.readexactly(5), 30) == b"HELLO"
        writer.write(b"bye")
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 30) == b"BYE"
        writer.close()
    finally:
        proc.terminate()
        await proc.wait()


async def test_over_https_the_api_server_proves_itself_to_a_kubelet_without_anonymous_auth(tmp_path: Path) -> None:
    # As `haru up` runs: HTTPS, the admin token; the kubelet asks TokenReview who the API server is.
    pki = certs.ensure(str(tmp_path / "data"))
    running = await runner.start(str(tmp_path / "data"), port=0, ssl_context=pki.ssl_context(), admin_token="t0ken")
    context = ssl.create_default_context(cadata=pki.ca_pem().decode())
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context),
                                    headers={"Authorization": "Bearer t0ken"})
    api = InProcess(running, session)
    try:
        async with endpoint_fixture.running(running.url, FakeNode(anonymous=False), token="t0ken",
                                            ca_pem=pki.ca_pem()) as kubelet:
            await make_node(api, "node-a", kubelet.port)
            kubelet.node.add("web", ["c"]).by_name["c"].print("secure")
            await make_pod(api, "web", ["c"])
            kubectl = Kubectl(running.url, tmp_path)
            kubeconfig.write(str(kubectl.kubeconfig), running.url, "t0ken", pki.ca_pem())

            assert await kubectl.run("exec", "web", "--", "echo", "over", "tls") == (0, "over tls\n", "")
            assert await kubectl.run("logs", "web") == (0, "secure\n", "")
    finally:
        await session.close()
        await running.stop()


async def test_kubectl_exec_with_a_tty_sends_the_terminal_size(cluster: tuple[Kubelet, Kubectl]) -> None:
    _, kubectl = cluster
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
    proc = await asyncio.create_subprocess_exec(
        realclients.kubectl(), f"--kubeconfig={kubectl.kubeconfig}", f"--cache-dir={kubectl.cache}",
        "exec", "-it", "web", "--", "size", stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    loop = asyncio.get_running_loop()
    seen = b""
    try:
        while b"33 101" not in seen:
            chunk = await asyncio.wait_for(loop.run_in_executor(None, os.read, leader, 1024), 30)
            assert chunk, seen
            seen += chunk
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        os.close(leader)


async def test_kubectl_port_forward_reports_a_port_nothing_listens_on(cluster: tuple[Kubelet, Kubectl]) -> None:
    _, kubectl = cluster
    proc = await kubectl.start("port-forward", "pod/web", ":9090")
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        local = int(line.split("127.0.0.1:")[1].split(" ")[0])
        reader, writer = await asyncio.open_connection("127.0.0.1", local)
        writer.write(b"anyone?")
        await writer.drain()
        # kubectl hangs up the local side: a FIN, or an RST when our bytes are still unread there.
        try:
            assert await asyncio.wait_for(reader.read(), 30) == b""
        except ConnectionResetError:
            pass
        writer.close()
        err = b""
        while b"error forwarding port 9090" not in err:
            chunk = await asyncio.wait_for(proc.stderr.read(4096), 30)
            assert chunk, err
            err += chunk
        assert (b"error forwarding port 9090 to pod web, uid uid-web: failed to connect to localhost:9090 inside "
                b"namespace of pod web: connection refused") in err
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


async def test_kubectl_get_raw_reaches_the_kubelet_through_node_proxy(cluster: tuple[Kubelet, Kubectl]) -> None:
    _, kubectl = cluster

    code, out, err = await kubectl.run("get", "--raw", "/api/v1/nodes/node-a/proxy/stats/summary")
    assert code == 0, err
    assert json.loads(out)["pods"][0]["podRef"]["name"] == "web"
    code, out, _ = await kubectl.run("get", "--raw", "/api/v1/nodes/node-a/proxy/metrics")
    assert 'kubelet_running_pods 1' in out.splitlines()
