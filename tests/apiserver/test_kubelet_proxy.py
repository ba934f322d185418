"""pods/exec|attach|log|portforward and nodes/proxy through an in-process API server to a hollow
kubelet endpoint (over an in-test runtime) that a Node made by hand points at: frames relayed end
to end, the kubelet's refusals passed back, kube's own errors for containers, hosts and nodes, and
the Python client 36.0.3's `stream` and `portforward` against it.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any, AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from kubernetes import client as pyclient
from kubernetes.stream import portforward, stream

from tests.nodes import endpoint_fixture
from tests.nodes.endpoint_fixture import Kubelet

NS = "/api/v1/namespaces/default"


async def make_node(api: Any, name: str, port: int, address: str = "127.0.0.1") -> None:
    status, body, _ = await api.request("POST", "/api/v1/nodes", json={"metadata": {"name": name}})
    assert status == 201, body
    patch = {"status": {"addresses": [{"type": "Hostname", "address": name}, {"type": "InternalIP", "address": address}],
                        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}
    status, body, _ = await api.request("PATCH", f"/api/v1/nodes/{name}/status", data=json.dumps(patch),
                                        headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200, body


async def make_pod(api: Any, name: str, containers: list[str], node: str | None = "node-a") -> None:
    spec: dict[str, Any] = {"containers": [{"name": c, "image": "busybox"} for c in containers]}
    if node:
        spec["nodeName"] = node
    status, body, _ = await api.request("POST", f"{NS}/pods", json={"metadata": {"name": name}, "spec": spec})
    assert status == 201, body
    patch = {"status": {"phase": "Running"}}
    await api.request("PATCH", f"{NS}/pods/{name}/status", data=json.dumps(patch),
                      headers={"Content-Type": "application/merge-patch+json"})


@pytest_asyncio.fixture
async def kubelet(api: Any) -> AsyncIterator[Kubelet]:
    async with endpoint_fixture.running(api.url) as running:
        await make_node(api, "node-a", running.port)
        yield running


def _core(api: Any) -> pyclient.CoreV1Api:
    return pyclient.CoreV1Api(pyclient.ApiClient(pyclient.Configuration(host=api.url)))


async def test_exec_frames_are_relayed_end_to_end_on_v5(api: Any, kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])
    await make_pod(api, "web", ["c"])
    url = f"{api.url}{NS}/pods/web/exec?command=cat&stdin=true&stdout=true&stderr=true"
    async with api.session.ws_connect(url, protocols=("v5.channel.k8s.io",)) as ws:
        assert ws.protocol == "v5.channel.k8s.io"  # the kubelet's choice, passed back
        await ws.send_bytes(b"\x00through the proxy")
        await ws.send_bytes(b"\xff\x00")
        frames = [msg.data async for msg in ws if msg.type == aiohttp.WSMsgType.BINARY]
    assert b"".join(f[1:] for f in frames if f[0] == 1) == b"through the proxy"
    assert json.loads(b"".join(f[1:] for f in frames if f[0] == 3)) == {"metadata": {}, "status": "Success"}


async def test_the_python_client_reads_the_exit_code_from_the_error_channel(api: Any, kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])
    await make_pod(api, "web", ["c"])
    core = _core(api)

    def run() -> tuple[str, int | None]:
        resp = stream(core.connect_get_namespaced_pod_exec, "web", "default", command=["exit", "3"],
                      stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
        resp.run_forever(timeout=10)
        return resp.read_stdout(), resp.returncode

    assert await asyncio.to_thread(run) == ("", 3)
    echoed = await asyncio.to_thread(lambda: stream(core.connect_get_namespaced_pod_exec, "web", "default",
                                                    command=["echo", "hello"], stderr=True, stdin=False,
                                                    stdout=True, tty=False))
    assert echoed == "hello\n"


async def test_the_python_client_forwards_a_port(api: Any, kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["c"])
    pod.listening.add(8080)
    await make_pod(api, "web", ["c"])
    core = _core(api)

    def run() -> bytes:
        forward = portforward(core.connect_get_namespaced_pod_portforward, "web", "default", ports="8080")
        sock = forward.socket(8080)
        sock.setblocking(True)
        sock.settimeout(10)
        sock.sendall(b"bye")
        received = b""
        while chunk := sock.recv(1024):
            received += chunk
        sock.close()
        assert forward.error(8080) is None
        return received

    assert await asyncio.to_thread(run) == b"BYE"


async def test_logs_are_text_and_follow_streams(api: Any, kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["c"])
    for text in ("a", "b", "c"):
        pod.by_name["c"].print(text)
    await make_pod(api, "web", ["c"])

    status, body, headers = await api.request("GET", f"{NS}/pods/web/log?tailLines=2&timestamps=true")
    assert (status, headers["Content-Type"]) == (200, "text/plain")
    assert body == "2026-12-01T12:00:01.000000000Z b\n2026-12-01T12:00:02.000000000Z c\n"
    async with api.session.get(f"{api.url}{NS}/pods/web/log?follow=true&container=c") as resp:
        assert await resp.content.readline() == b"a\n"
        await resp.content.readline()
        await resp.content.readline()
        pod.by_name["c"].print("d")
        assert await resp.content.readline() == b"d\n"
        pod.by_name["c"].stop()
        assert await resp.content.read() == b""


async def test_the_kubelets_log_refusal_becomes_a_status(api: Any, kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["c"])
    pod.status["containerStatuses"][0]["state"] = {"waiting": {"reason": "ContainerCreating"}}
    await make_pod(api, "web", ["c"])

    status, body, _ = await api.request("GET", f"{NS}/pods/web/log")

    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == 'container "c" in pod "web" is waiting to start: ContainerCreating'


@pytest.mark.parametrize(("query", "message"), [
    ("tailLines=-1", 'PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0'),
    ("limitBytes=0", 'PodLogOptions "web" is invalid: limitBytes: Invalid value: 0: must be greater than 0'),
])
async def test_log_options_are_validated_before_the_kubelet_is_asked(api: Any, kubelet: Kubelet, query: str,
                                                                      message: str) -> None:
    await make_pod(api, "web", ["c"])

    status, body, _ = await api.request("GET", f"{NS}/pods/web/log?{query}")

    assert (status, body["reason"], body["message"]) == (422, "Invalid", message)


async def test_container_choice_is_checked_as_kube_does(api: Any, kubelet: Kubelet) -> None:
    await make_pod(api, "two", ["a", "b"])

    status, body, _ = await api.request("GET", f"{NS}/pods/two/log?container=x")
    assert (status, body["message"]) == (400, "container x is not valid for pod two")
    status, body, _ = await api.request("GET", f"{NS}/pods/two/exec?command=true&stdout=true")
    assert (status, body["message"]) == (400, "a container name must be specified for pod two, choose one of: [a b]")


async def test_exec_in_a_container_that_does_not_run_passes_the_kubelets_answer(api: Any, kubelet: Kubelet) -> None:
    pod = kubelet.node.add("web", ["c"])
    pod.by_name["c"].stop()
    await make_pod(api, "web", ["c"])
    url = f"{api.url}{NS}/pods/web/exec?command=true&stdout=true"

    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await api.session.ws_connect(url, protocols=("v5.channel.k8s.io",))
    assert refused.value.status == 500
    async with api.session.post(url) as resp:  # kubectl's SPDY fallback reads the same answer
        assert (resp.status, await resp.text()) == (500, 'container not found ("c")')


async def test_no_host_no_node_and_no_kubelet_are_kubes_errors(api: Any, kubelet: Kubelet) -> None:
    await make_pod(api, "pending", ["c"], node=None)
    status, body, _ = await api.request("GET", f"{NS}/pods/pending/exec?command=true&stdout=true")
    assert (status, body["message"]) == (400, "pod pending does not have a host assigned")
    status, body, _ = await api.request("GET", f"{NS}/pods/pending/log")
    assert (status, body) == (204, "")  # kube's LogLocation: no host, no stream, 204 No Content

    await make_pod(api, "lost", ["c"], node="node-gone")
    status, body, _ = await api.request("GET", f"{NS}/pods/lost/log")
    assert (status, body["reason"], body["message"]) == (404, "NotFound", 'nodes "node-gone" not found')

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    await make_node(api, "node-dead", dead)
    await make_pod(api, "orphan", ["c"], node="node-dead")
    status, body, _ = await api.request("GET", f"{NS}/pods/orphan/log")
    assert (status, body["message"]) == (500, f'Get "https://127.0.0.1:{dead}/containerLogs/default/orphan/c": '
                                              f"dial tcp 127.0.0.1:{dead}: connect: connection refused")
    status, body, _ = await api.request("GET", f"{NS}/pods/orphan/exec?command=true&stdout=true",
                                        headers={"Connection": "Upgrade", "Upgrade": "websocket",
                                                 "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "a2V5a2V5a2V5a2V5a2V5aw=="})
    assert (status, body["message"]) == (500, f"error dialing backend: dial tcp 127.0.0.1:{dead}: connect: "
                                              "connection refused")


async def test_node_proxy_reaches_the_kubelets_own_endpoints(api: Any, kubelet: Kubelet) -> None:
    kubelet.node.add("web", ["c"])

    status, body, _ = await api.request("GET", "/api/v1/nodes/node-a/proxy/healthz")
    assert (status, body) == (200, "ok")
    status, body, _ = await api.request("GET", "/api/v1/nodes/node-a/proxy/pods")
    assert (status, body["kind"], [p["metadata"]["name"] for p in body["items"]]) == (200, "PodList", ["web"])
    status, body, _ = await api.request("GET", "/api/v1/nodes/node-a/proxy/stats/summary")
    assert body["node"]["nodeName"] == "node-a"
    assert body["pods"][0]["containers"][0]["cpu"]["usageNanoCores"] == 250_000_000
    status, body, _ = await api.request("GET", "/api/v1/nodes/node-a/proxy/configz")
    assert body["kubeletconfig"]["authorization"] == {"mode": "Webhook"}
    status, body, _ = await api.request("GET", "/api/v1/nodes/node-a/proxy/metrics")
    assert 'kubelet_node_name{node="node-a"} 1' in body
    status, body, _ = await api.request("GET", "/api/v1/nodes/node-a/proxy/logs/kubelet.log")
    assert (status, body) == (200, "I1201 started\n")
    status, body, _ = await api.request("GET", "/api/v1/nodes/node-a/proxy/nothing-here")
    assert status == 404
    core = _core(api)
    raw = await asyncio.to_thread(core.connect_get_node_proxy_with_path, "node-a", "healthz", _preload_content=False)
    assert (raw.status, raw.data) == (200, b"ok")


async def test_the_python_client_forwards_several_ports_and_hears_the_refused_one(api: Any, kubelet: Kubelet) -> None:
    # The shape of the upstream Python-client e2e (test_portforward_raw): two served ports, one not.
    pod = kubelet.node.add("web", ["c"])
    pod.listening.update({1234, 1235})
    await make_pod(api, "web", ["c"])
    core = _core(api)

    def run() -> tuple[bytes, bytes, bytes, str | None, bool]:
        forward = portforward(core.connect_get_namespaced_pod_portforward, "web", "default", ports="1234,1235,1236")
        socks = {port: forward.socket(port) for port in (1234, 1235, 1236)}
        for sock in socks.values():
            sock.setblocking(True)
            sock.settimeout(10)
        socks[1234].sendall(b"one")
        socks[1235].sendall(b"two")
        replies = socks[1234].recv(1024), socks[1235].recv(1024), socks[1236].recv(1024)
        error = forward.error(1236)
        for sock in socks.values():
            sock.close()
        return (*replies, error, forward.error(1234) is None and forward.error(1235) is None)

    one, two, refused, error, clean = await asyncio.to_thread(run)
    assert (one, two, refused, clean) == (b"ONE", b"TWO", b"", True)
    assert error == ("error forwarding port 1236 to pod web, uid uid-web: failed to connect to localhost:1236 "
                     "inside namespace of pod web: connection refused")
