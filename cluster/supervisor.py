"""Start haru's co-processes and keep them running: the controllers, the scheduler and the hollow
nodes, either as child processes or as tasks in the caller's event loop.

`start_controllers(...)` is the one call `haru up` needs: with `embedded=False` it runs
`python -m controllers --kubeconfig PATH` as a `CoProcess` (restarted with backoff if it exits
unasked, stopped with SIGTERM then SIGKILL); with `embedded=True` it runs the same controllers as
asyncio tasks over the kubeconfig, or over a URL, token and CA. Either way the caller gets an
object with `async stop()`. The controllers themselves live in `controllers/builtin.py`.
`--feature-gates` reaches the controllers too (their part of it: `controllers/features.py`), and
`--use-service-account-credentials` is on, as kubeadm sets it: each controller its own identity.
`start_scheduler(...)` does the same for `python -m scheduler` (passing `--feature-gates`,
`--config`, `--scheduler-name` and `--record-results` through; `scheduler/scheduler.py`).
`start_nodes(...)` does the same for `python -m nodes` (the kubelets live in `nodes/host.py`);
`free_port()` picks the kubelet endpoint's port before the nodes start.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import IO, Any, Protocol

from client import kubeconfig
from client.rest import RestClient
from controllers import builtin, features as controller_features
from controllers.manager import Manager
from nodes import pools

log = logging.getLogger("haru.supervisor")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Component(Protocol):
    name: str

    async def stop(self) -> None: ...

    async def health(self) -> tuple[str, str, str]:
        """(condition status, message, error) as ComponentStatus reports it (apiserver/componentstatuses.py)."""
        ...


class CoProcess:
    """One child process, restarted when it exits on its own; `stop()` ends it for good."""

    def __init__(self, name: str, argv: Sequence[str], *, env: dict[str, str] | None = None,
                 output: IO[Any] | int | None = None, backoff_initial: float = 0.5, backoff_max: float = 30.0,
                 healthy_after: float = 60.0) -> None:
        self.name = name
        self.argv = list(argv)
        # Importable from a source checkout too, not only after `pip install`.
        path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p)
        self.env = {**os.environ, "PYTHONPATH": path, **(env or {})}
        self.output = output
        self.backoff_initial, self.backoff_max, self.healthy_after = backoff_initial, backoff_max, healthy_after
        self.process: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._started = asyncio.Event()

    async def start(self) -> "CoProcess":
        self._task = asyncio.create_task(self._supervise(), name=f"supervise {self.name}")
        await self._started.wait()
        return self

    async def _spawn(self) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(*self.argv, env=self.env, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=self.output, stderr=self.output)

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        delay = self.backoff_initial
        while not self._stopping:
            self.process = await self._spawn()
            self._started.set()
            began = loop.time()
            code = await self.process.wait()
            if self._stopping:
                return
            if loop.time() - began >= self.healthy_after:
                delay = self.backoff_initial  # it ran fine for a while: this is a fresh failure
            log.warning("%s exited with %s; restarting in %.1fs", self.name, code, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.backoff_max)
            self.restarts += 1

    async def health(self) -> tuple[str, str, str]:
        # What a supervisor can see: the child is running, or it exited and waits for a restart.
        process = self.process
        if process is None:
            return "Unknown", "", f"{self.name} has not started"
        if process.returncode is None:
            return "True", "ok", ""
        return "False", "", f"{self.name} exited with code {process.returncode} (restarts: {self.restarts})"

    async def stop(self, timeout: float = 10.0) -> None:
        self._stopping = True
        if self._task is not None:
            self._task.cancel()  # no restart from here on
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        process = self.process
        if process is None or process.returncode is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except asyncio.TimeoutError:
            log.warning("%s ignored SIGTERM for %.0fs; killing it", self.name, timeout)
            process.kill()
            await process.wait()


@dataclass
class EmbeddedControllers:
    """The controllers as tasks in this process (`haru up --embedded`, test fixtures)."""

    client: RestClient
    manager: Manager
    name: str = "controllers"

    async def stop(self) -> None:
        await self.manager.stop()
        await self.client.close()

    async def health(self) -> tuple[str, str, str]:
        problems = self.manager.problems()
        return ("False", "", "; ".join(problems)) if problems else ("True", "ok", "")


def controllers_argv(kubeconfig_path: str, *, feature_gates: str = "", python: str = sys.executable,
                     verbose: bool = False, service_account_credentials: bool = True) -> list[str]:
    argv = [python, "-m", "controllers", "--kubeconfig", kubeconfig_path]
    if feature_gates:
        argv += ["--feature-gates", feature_gates]
    if service_account_credentials:
        argv.append("--use-service-account-credentials")
    return argv + ["--verbose"] if verbose else argv


async def start_controllers(kubeconfig_path: str | None = None, *, url: str | None = None,
                            token: str | None = None, ca_pem: bytes | None = None, embedded: bool = False,
                            only: tuple[str, ...] = builtin.NAMES, output: IO[Any] | int | None = None,
                            verbose: bool = False, settings: builtin.Settings | None = None,
                            feature_gates: str = "", service_account_credentials: bool = True,
                            prefetch_tokens: bool = True) -> Component:
    """Run the built-in controllers against the API server; returns something to `stop()`.

    `settings` (per controller, e.g. a shorter grace period) reach embedded controllers only;
    `feature_gates` (the controllers' part of the flag) both. Embedded, a bad gate raises ValueError.
    `service_account_credentials`: each controller writes as kube-system/<its account>, the
    kubeconfig's identity (system:kube-controller-manager) only reads and asks for their tokens;
    `prefetch_tokens` (embedded only): all of them at start rather than each when first needed.
    """
    gates = controller_features.parse(feature_gates)
    if not embedded:
        if kubeconfig_path is None:
            raise ValueError("the controllers co-process reads a kubeconfig: pass kubeconfig_path")
        argv = controllers_argv(kubeconfig_path, feature_gates=feature_gates, verbose=verbose,
                                service_account_credentials=service_account_credentials)
        argv += ["--controllers", ",".join(only)]
        return await CoProcess("controllers", argv, output=output).start()
    if kubeconfig_path is not None:
        config = kubeconfig.load(kubeconfig_path)
    elif url is not None:
        config = kubeconfig.Config.for_url(url, token, ca_pem)
    else:
        raise ValueError("pass kubeconfig_path, or url (with token and ca_pem as needed)")
    client = RestClient(config, user_agent="haru-controllers/0.1")
    try:
        manager = await builtin.start(client, only, settings=settings, features=gates,
                                      service_account_credentials=service_account_credentials,
                                      prefetch_tokens=prefetch_tokens)
    except BaseException:
        await client.close()
        raise
    return EmbeddedControllers(client, manager)


@dataclass
class EmbeddedScheduler:
    """The scheduler as tasks in this process (`haru up --embedded`, test fixtures)."""

    client: RestClient
    scheduler: Any  # scheduler.scheduler.Scheduler
    name: str = "scheduler"

    async def stop(self) -> None:
        await self.scheduler.stop()
        await self.client.close()

    async def health(self) -> tuple[str, str, str]:
        problems = self.scheduler.problems()
        return ("False", "", "; ".join(problems)) if problems else ("True", "ok", "")


def scheduler_argv(kubeconfig_path: str, *, feature_gates: str = "", config: str | None = None,
                   scheduler_name: str | None = None, record_results: bool = False, python: str = sys.executable,
                   verbose: bool = False, port: int | None = None) -> list[str]:
    argv = [python, "-m", "scheduler", "--kubeconfig", kubeconfig_path]
    # Unset: a free port, so test clusters and benches side by side never fight over 10259.
    argv += ["--secure-port", str(port or 0)]
    if feature_gates:
        argv += ["--feature-gates", feature_gates]
    if config:
        argv += ["--config", config]
    if scheduler_name:
        argv += ["--scheduler-name", scheduler_name]
    if record_results:
        argv.append("--record-results")
    return argv + ["--verbose"] if verbose else argv


async def start_scheduler(kubeconfig_path: str, *, feature_gates: str = "", config: str | None = None,
                          scheduler_name: str | None = None, record_results: bool = False, embedded: bool = False,
                          output: IO[Any] | int | None = None, verbose: bool = False,
                          port: int | None = None) -> Component:
    """Run the scheduler against the API server; returns something to `stop()`.

    Embedded, a bad gate or config file raises ValueError here, as the co-process would exit 1.
    """
    if not embedded:
        argv = scheduler_argv(kubeconfig_path, feature_gates=feature_gates, config=config,
                              scheduler_name=scheduler_name, record_results=record_results, verbose=verbose,
                              port=port)
        return await CoProcess("scheduler", argv, output=output).start()
    # Imported here: `haru up` without --embedded never loads the scheduler into the server process.
    from scheduler import default_profile
    from scheduler import features as scheduler_features
    from scheduler.__main__ import USER_AGENT, observer_for
    from scheduler.scheduler import Scheduler
    gates = scheduler_features.parse(feature_gates)
    settings = default_profile.load_config(config, gates, scheduler_name)
    client = RestClient(kubeconfig.load(kubeconfig_path), user_agent=USER_AGENT)
    try:
        observer = observer_for(client) if record_results else None
        sched = Scheduler(client, settings, gates, observer=observer)
        await sched.start()
    except BaseException:
        await client.close()
        raise
    return EmbeddedScheduler(client, sched)


def free_port(address: str = "127.0.0.1") -> int:
    """A port nothing listens on now, for the nodes' shared kubelet endpoint."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


@dataclass
class EmbeddedNodes:
    """The hollow kubelets as tasks in this process (`haru up --embedded`, test fixtures)."""

    client: RestClient
    host: Any  # nodes.host.NodesHost
    name: str = "nodes"

    async def stop(self) -> None:
        await self.host.stop()
        await self.client.close()

    async def health(self) -> tuple[str, str, str]:
        return "True", "ok", ""


def nodes_argv(kubeconfig_path: str, shape_args: Sequence[str], *, kubelet_port: int, state_dir: str,
               python: str = sys.executable, verbose: bool = False, kubelet_kubeconfig_dir: str | None = None) -> list[str]:
    argv = [python, "-m", "nodes", "--kubeconfig", kubeconfig_path, "--kubelet-port", str(kubelet_port),
            "--state-dir", state_dir, *shape_args]
    if kubelet_kubeconfig_dir:
        argv += ["--kubelet-kubeconfig-dir", kubelet_kubeconfig_dir]
    return argv + ["--verbose"] if verbose else argv


async def start_nodes(kubeconfig_path: str, *, shapes: list[pools.NodeShape], shape_args: Sequence[str],
                      kubelet_port: int, state_dir: str, grace_scale: float, embedded: bool = False,
                      output: IO[Any] | int | None = None, verbose: bool = False,
                      lease_duration: int | None = None, kubelet_kubeconfig_dir: str | None = None) -> Component:
    """Run the hollow kubelets; `shape_args` are the flags that describe `shapes` to the co-process.

    `kubelet_kubeconfig_dir`: each kubelet's own kubeconfig (`<node>.kubeconfig`, its identity).

    `lease_duration` (seconds; renewed at a quarter of it) reaches embedded kubelets only.
    """
    if not embedded:
        argv = nodes_argv(kubeconfig_path, shape_args, kubelet_port=kubelet_port, state_dir=state_dir, verbose=verbose,
                          kubelet_kubeconfig_dir=kubelet_kubeconfig_dir)
        argv += ["--grace-period-scale", str(grace_scale)]
        return await CoProcess("nodes", argv, output=output).start()
    # Imported here: `haru up` without --embedded never loads the kubelets into the server process.
    from nodes import host as nodes_host
    from nodes.__main__ import USER_AGENT, own_clients
    from nodes.kubelet.kubelet import NodeSettings
    from nodes.kubelet.pod_worker import Settings as PodSettings
    node_settings = NodeSettings(pods=PodSettings(grace_scale=grace_scale))
    if lease_duration is not None:
        node_settings = replace(node_settings, lease_duration=lease_duration)
    client = RestClient(kubeconfig.load(kubeconfig_path), user_agent=USER_AGENT)
    try:
        hosted = await nodes_host.start(client, shapes, state_dir=state_dir, port=kubelet_port,
                                        settings=node_settings,
                                        own_clients=own_clients(kubelet_kubeconfig_dir, shapes, USER_AGENT))
    except BaseException:
        await client.close()
        raise
    return EmbeddedNodes(client, hosted)
