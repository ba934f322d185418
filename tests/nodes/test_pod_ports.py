"""`nodes/kubelet/pod_ports.py`: which ports a simulated pod listens on, and what answers there."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from nodes.kubelet import pod_ports


def _pod(*containers: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": list(containers)}}


@pytest.mark.parametrize("container, expected", [
    ({"name": "c", "image": "python", "command": ["python", "-u", "/opt/port-server.py", "1234", "1235"]},
     {1234: "echo", 1235: "echo"}),
    ({"name": "c", "image": "busybox", "command": ["sleep", "80"]}, {}),
    ({"name": "c", "image": "nginx"}, {80: "http"}),
    ({"name": "c", "image": "docker.io/library/nginx:1.27", "ports": [{"containerPort": 8080}]},
     {80: "http", 8080: "http"}),
    ({"name": "c", "image": "app", "ports": [{"containerPort": 53, "protocol": "UDP"}],
      "readinessProbe": {"httpGet": {"port": 8081}}, "startupProbe": {"tcpSocket": {"port": 9000}}},
     {8081: "http", 9000: "echo"}),
], ids=["a server listens on the ports it was started with", "a command that ends listens on nothing",
        "nginx answers HTTP on 80", "a web server answers HTTP on its declared ports too",
        "probes name ports, UDP ports are not TCP listeners"])
def test_listeners(container: dict[str, Any], expected: dict[int, str]) -> None:
    assert pod_ports.listeners(_pod(container), lambda name: True) == expected


def test_a_container_that_does_not_run_listens_on_nothing() -> None:
    assert pod_ports.listeners(_pod({"name": "c", "image": "nginx"}), lambda name: False) == {}


async def _exchange(conn: Any, *chunks: bytes, half_close: bool = True) -> bytes:
    for chunk in chunks:
        await conn.write(chunk)
    if half_close:
        await conn.close_write()
    got = b""
    while data := await asyncio.wait_for(conn.read(), 5):
        got += data
    return got


async def test_the_echo_answers_every_byte_and_hangs_up_after_the_client_does() -> None:
    assert await _exchange(pod_ports.EchoConnection(), b"Test 1 port ", b"1234 forwarding") == b"Test 1 port 1234 forwarding"


async def test_nginx_answers_the_welcome_page_and_404_elsewhere() -> None:
    pod = _pod({"name": "c", "image": "nginx"})
    page = await _exchange(pod_ports.connection("http", pod), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", half_close=False)
    head, _, body = page.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"Server: nginx" in head
    assert b"<h1>Welcome to nginx!</h1>" in body and f"Content-Length: {len(body)}".encode() in head
    missing = await _exchange(pod_ports.connection("http", pod), b"GET /x HTTP/1.1\r\n\r\n", half_close=False)
    assert missing.startswith(b"HTTP/1.1 404 Not Found\r\n")
    garbage = await _exchange(pod_ports.connection("http", pod), b"hello")
    assert garbage.startswith(b"HTTP/1.1 400 Bad Request\r\n")
