"""`cluster/supervisor.py`: the controllers as a co-process (restarted after a crash) and
embedded as tasks, each finishing a namespace deletion against a real API server."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path

import pytest

from apiserver import runner
from client import errors
from client.kubeconfig import Config
from client.resources import CONFIGMAPS, NAMESPACES
from client.rest import RestClient
from cluster import kubeconfig as written
from cluster import supervisor
from tests.controllers.polling import eventually


async def _namespace_finishes(client: RestClient, name: str, timeout: float = 10.0) -> None:
    await client.create(NAMESPACES, {"metadata": {"name": name}})
    await client.create(CONFIGMAPS, {"metadata": {"name": "cm"}}, name)
    await client.delete(NAMESPACES, name)

    async def gone() -> bool:
        try:
            await client.get(NAMESPACES, name)
            return False
        except errors.APIError as exc:
            return errors.is_not_found(exc)

    await eventually(gone, timeout=timeout)


async def test_the_co_process_finishes_namespaces_and_is_restarted_after_a_crash(tmp_path: Path) -> None:
    running = await runner.start(str(tmp_path / "data"), port=0)
    path = str(tmp_path / "kubeconfig")
    written.write(path, running.url, "unused-over-http", None)
    client = RestClient(Config.for_url(running.url))
    controllers = await supervisor.start_controllers(path, output=subprocess.DEVNULL)
    try:
        assert isinstance(controllers, supervisor.CoProcess)
        await _namespace_finishes(client, "first")
        first = controllers.process
        assert first is not None
        first.send_signal(signal.SIGKILL)

        async def restarted() -> bool:
            return controllers.restarts == 1 and controllers.process is not first

        await eventually(restarted, timeout=5)
        await _namespace_finishes(client, "second")
    finally:
        await controllers.stop()
        await client.close()
        await running.stop()
    assert controllers.process is not None and controllers.process.returncode == 0, "SIGTERM ends it cleanly"


async def test_embedded_controllers_run_as_tasks_from_a_url(tmp_path: Path) -> None:
    running = await runner.start(str(tmp_path / "data"), port=0)
    client = RestClient(Config.for_url(running.url))
    controllers = await supervisor.start_controllers(url=running.url, embedded=True)
    try:
        assert isinstance(controllers, supervisor.EmbeddedControllers)
        await _namespace_finishes(client, "inside")
    finally:
        await controllers.stop()
        await client.close()
        await running.stop()
    assert all(t.done() for t in asyncio.all_tasks() if t.get_name().startswith("informer"))


async def test_the_co_process_needs_a_kubeconfig() -> None:
    with pytest.raises(ValueError):
        await supervisor.start_controllers(url="http://127.0.0.1:1")
