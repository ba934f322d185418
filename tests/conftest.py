"""Shared fixtures: a real `haru up` process and the real clients pointed at it; an in-process server.

`haru` starts the server exactly as a user does (`python -m cluster.cli up`, HTTPS, a fresh data
dir, a random port) and yields a `Cluster` with its kubeconfig once the controllers have made the
`default` ServiceAccount (pods need it); `kubectl(...)` runs the real
kubectl v1.36.3 against it. The process is stopped by the fixture that started it. `api` runs the
same server inside the test's event loop for fast raw-HTTP tests.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import aiohttp
import msgspec
import pytest
import pytest_asyncio

from tests import realclients

# Each store (every server a test starts, `haru up` children included) reserves 1 MiB of disk
# instead of 64 MiB: a run starts a few hundred of them (storage/layout.py, RESERVE_ENV).
os.environ.setdefault("HARU_STORE_RESERVE_BYTES", str(1 << 20))

ROOT = Path(__file__).resolve().parent.parent
_SERVING = re.compile(r"haru is serving (\S+); kubeconfig: (\S+)")


@dataclass
class Cluster:
    url: str
    kubeconfig: str
    data_dir: str
    process: subprocess.Popen[str]

    def kubectl(self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "KUBECONFIG": self.kubeconfig, "HOME": self.data_dir, **(env or {})}
        result = subprocess.run([realclients.kubectl(), *args], input=input, capture_output=True, text=True,
                                timeout=timeout, env=full_env)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def token_kubeconfig(self, token: str) -> str:
        """A kubeconfig for this cluster that holds only `token`. The admin kubeconfig's client
        certificate would win over a `--token` (kube-apiserver tries x509 before bearer tokens)."""
        import hashlib

        import yaml

        doc = yaml.safe_load(Path(self.kubeconfig).read_text())
        doc["users"] = [{"name": "token-user", "user": {"token": token}}]
        for context in doc["contexts"]:
            context["context"]["user"] = "token-user"
        path = Path(self.data_dir) / f"token-{hashlib.sha256(token.encode()).hexdigest()[:12]}.kubeconfig"
        path.write_text(yaml.safe_dump(doc))
        path.chmod(0o600)
        return str(path)

    def helm(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KUBECONFIG": self.kubeconfig, "HOME": self.data_dir,
               "HELM_CACHE_HOME": os.path.join(self.data_dir, "helm-cache"),
               "HELM_CONFIG_HOME": os.path.join(self.data_dir, "helm-config"),
               "HELM_DATA_HOME": os.path.join(self.data_dir, "helm-data")}
        result = subprocess.run([realclients.helm(), *args], capture_output=True, text=True, timeout=timeout, env=env)
        if check and result.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result


def start_haru(data_dir: str, *extra: str, timeout: float = 30) -> Cluster:
    process = subprocess.Popen(
        [sys.executable, "-m", "cluster.cli", "up", "--data-dir", data_dir, "--port", "0", *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        match = _SERVING.search(line)
        if match:
            _drain(process)
            cluster = Cluster(match.group(1), match.group(2), data_dir, process)
            _wait_for_default_account(cluster, deadline + timeout)
            return cluster
    process.kill()
    _, err = process.communicate(timeout=5)
    raise AssertionError(f"haru up did not start:\n{err}")


def _wait_for_default_account(cluster: Cluster, deadline: float) -> None:
    """The controllers start after the serving line; until their first pass made `default/default`,
    the ServiceAccount admission plugin refuses pods there, as kube-apiserver does."""
    while time.monotonic() < deadline:
        if cluster.kubectl("get", "serviceaccount", "default", "-n", "default", check=False).returncode == 0:
            return
        time.sleep(0.1)
    stop_haru(cluster)
    raise AssertionError("haru up: no default/default ServiceAccount (are the controllers running?)")


def _drain(process: subprocess.Popen[str]) -> None:
    """Keep reading what `haru up` prints once it serves: a full pipe would stop the server mid-write."""
    def drain(pipe: Any) -> None:
        for _ in pipe:
            pass
        pipe.close()  # at EOF (the process ended): no unclosed-file ResourceWarning later

    for pipe in (process.stdout, process.stderr):
        threading.Thread(target=drain, args=(pipe,), daemon=True).start()


def stop_haru(cluster: Cluster) -> None:
    cluster.process.send_signal(signal.SIGTERM)
    try:
        cluster.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        cluster.process.kill()
        cluster.process.wait()


@pytest.fixture(scope="module")
def haru(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    cluster = start_haru(str(tmp_path_factory.mktemp("haru")))
    try:
        yield cluster
    finally:
        stop_haru(cluster)


@dataclass
class InProcess:
    """An API server running in the test's event loop (plain HTTP), and a session to talk to it."""

    running: Any
    session: Any

    @property
    def url(self) -> str:
        return self.running.url

    @property
    def store(self) -> Any:
        return self.running.server.store

    async def request(self, method: str, path: str, *, json: Any = None, data: bytes | str | None = None,
                      headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
        """(status, decoded JSON body or text, headers)."""
        async with self.session.request(method, self.url + path, json=json, data=data, headers=headers) as resp:
            text = await resp.read()
            try:
                body: Any = msgspec.json.decode(text)
            except msgspec.DecodeError:
                body = text.decode(errors="replace")
            return resp.status, body, resp.headers


@pytest_asyncio.fixture
async def api(tmp_path: Path) -> AsyncIterator[InProcess]:
    from apiserver import runner

    running = await runner.start(str(tmp_path / "data"), port=0)
    session = aiohttp.ClientSession()
    try:
        yield InProcess(running, session)
    finally:
        await session.close()
        await running.stop()
