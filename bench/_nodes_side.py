"""The two things `bench.nodes` drives: the `python -m nodes` child and the pods it binds by hand.

`start_nodes(url, count, work_dir)` writes a kubeconfig for the plain-HTTP API server child and
starts `python -m nodes --kubeconfig K --nodes N --gpu-model none` (or another model) as its own process (the same
command `haru up` supervises), returning a `ServerProcess` for its pid, CPU and memory.
`create_pods(url, namespace, nodes, count, clients)` POSTs Pods that already carry `spec.nodeName`,
spread round-robin over the nodes, from `clients` concurrent connections, as a user binding by hand
(no scheduler) would.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import msgspec

from bench._server_process import REPO, ServerProcess, child_env

_JSON = {"Accept": "application/json", "Content-Type": "application/json"}


def free_port() -> int:
    """A port nothing listens on now, for the nodes' kubelet endpoint (as `haru up` picks one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_kubeconfig(path: Path, url: str) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: bench\n  cluster:\n    server: {url}\n"
        "contexts:\n- name: bench\n  context:\n    cluster: bench\n"
        "current-context: bench\nusers: []\n")
    return path


async def start_nodes(url: str, count: int, work_dir: Path, gpu_model: str = "none") -> tuple[ServerProcess, float]:
    """The nodes child and the perf_counter time just before it was exec'ed."""
    kubeconfig = write_kubeconfig(work_dir / "kubeconfig", url)
    log_path = work_dir / "nodes.log"
    argv = [sys.executable, "-m", "nodes", "--kubeconfig", str(kubeconfig), "--nodes", str(count),
            "--gpu-model", gpu_model, "--state-dir", str(work_dir / "nodes-state"), "--kubelet-port", str(free_port())]
    with open(log_path, "wb") as log:
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=str(REPO), env=child_env(), stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True)
    return ServerProcess(process, log_path, "nodes"), started


async def create_namespace(session: aiohttp.ClientSession, url: str, name: str) -> None:
    body = msgspec.json.encode({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    async with session.post(f"{url}/api/v1/namespaces", data=body, headers=_JSON) as resp:
        if resp.status not in (201, 409):
            raise RuntimeError(f"creating namespace {name} answered {resp.status}: {(await resp.text())[:300]}")


def pod_body(namespace: str, index: int, node: str) -> bytes:
    """A Deployment-like Pod already bound to `node`: one long-running container with requests."""
    return msgspec.json.encode({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"pod-{index:06d}", "namespace": namespace,
                     "labels": {"app": f"web-{index % 50:02d}", "bench": "nodes"}},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "web", "image": "registry.k8s.io/nginx-slim:0.27",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"},
                                          "limits": {"memory": "64Mi"}}}],
            "terminationGracePeriodSeconds": 30,
        },
    })


@dataclass
class Creates:
    count: int
    clients: int
    seconds: float = 0.0  # first POST sent -> last 201
    failed: int = 0
    first_error: str = ""

    def describe(self) -> str:
        rate = self.count / self.seconds if self.seconds else 0.0
        errors = f"; {self.failed} failed, first: {self.first_error}" if self.failed else ""
        return (f"{self.count:,} creates from {self.clients} concurrent clients took {self.seconds:.1f} s "
                f"({rate:,.0f}/s){errors}")


async def create_pods(session: aiohttp.ClientSession, url: str, namespace: str, nodes: list[str], count: int,
                      clients: int) -> Creates:
    result = Creates(count, clients)
    next_index = iter(range(count))
    endpoint = f"{url}/api/v1/namespaces/{namespace}/pods"

    async def client() -> None:
        for i in next_index:  # a shared iterator: each client takes the next pod
            body = pod_body(namespace, i, nodes[i % len(nodes)])
            for attempt in range(5):
                async with session.post(endpoint, data=body, headers=_JSON) as resp:
                    if resp.status == 201:
                        break
                    text = (await resp.text())[:300]
                if resp.status not in (429, 500, 503) or attempt == 4:
                    result.failed += 1
                    result.first_error = result.first_error or f"{resp.status}: {text}"
                    break
                await asyncio.sleep(0.1 * 2 ** attempt)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    result.seconds = time.perf_counter() - started
    return result
