"""Fixtures for controller tests: a real API server in-process, the controllers embedded as
tasks on the same loop, and the real kubectl pointed at it.

`cluster` starts `apiserver.runner` (plain HTTP, no auth) in a temp dir and the controllers a
test module names in `CONTROLLERS` (default: all) with short rechecks, once per module (the
module's tests run on one loop and use distinct object names; `FEATURE_GATES` turns server gates on,
`SETTINGS` adds controller settings such as a fake clock, `ADMISSION_PLUGINS` turns optional plugins on), and stops both afterwards. kubectl runs as an asyncio subprocess
so the controllers keep running while it waits (`kubectl delete namespace` waits for the deletion).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from apiserver import runner
from client.kubeconfig import Config
from client.rest import RestClient
from controllers import builtin
from controllers.manager import Manager
from tests import realclients

FAST = {"namespace": {"min_recheck": 0.05, "max_recheck": 0.3}, "garbage-collector": {"rediscover_every": 2.0},
        "device-taint-eviction": {"rule_status_period": 0.5}, "job": {"backoff_base": 0.2, "backoff_cap": 1.0}}


@dataclass
class Cluster:
    url: str
    client: RestClient
    manager: Manager | None
    home: Path

    async def kubectl(self, *args: str, timeout: float = 20) -> tuple[int, str, str]:
        env = {**os.environ, "HOME": str(self.home), "KUBECONFIG": str(self.home / "kubeconfig")}
        process = await asyncio.create_subprocess_exec(
            realclients.kubectl(), *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
            raise AssertionError(f"kubectl {' '.join(args)} still running after {timeout}s")
        return process.returncode or 0, out.decode(), err.decode()


def _kubeconfig(url: str) -> str:
    return (f"apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: {url}\n"
            f"users:\n- name: t\n  user: {{}}\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: t\n"
            f"current-context: t\n")


async def start_cluster(tmp_path: Path, only: tuple[str, ...], feature_gates: str = "",
                        settings: builtin.Settings | None = None,
                        admission_plugins: frozenset[str] = frozenset()) -> tuple[runner.Running, Cluster]:
    running = await runner.start(str(tmp_path / "data"), port=0, feature_gates=feature_gates,
                                 admission_plugins=admission_plugins)
    home = tmp_path / "home"
    home.mkdir()
    (home / "kubeconfig").write_text(_kubeconfig(running.url))
    client = RestClient(Config.for_url(running.url))
    manager = await builtin.start(client, only, settings={**FAST, **(settings or {})}) if only else None
    return running, Cluster(running.url, client, manager, home)


async def stop_cluster(running: runner.Running, cluster: Cluster) -> None:
    if cluster.manager is not None:
        await cluster.manager.stop()
    await cluster.client.close()
    await running.stop()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> AsyncIterator[Cluster]:
    only = getattr(request.module, "CONTROLLERS", builtin.NAMES)
    gates = getattr(request.module, "FEATURE_GATES", "")
    settings = getattr(request.module, "SETTINGS", None)
    plugins = frozenset(getattr(request.module, "ADMISSION_PLUGINS", ()))
    running, started = await start_cluster(tmp_path_factory.mktemp("cluster"), only, gates, settings, plugins)
    try:
        yield started
    finally:
        await stop_cluster(running, started)

