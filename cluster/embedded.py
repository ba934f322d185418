"""A whole haru cluster in this process, on its own thread: what the `haru_cluster` fixture runs.

`EmbeddedCluster.start(data_dir, Options(...))` starts, on a private event loop in a daemon
thread, the API server (HTTPS on 127.0.0.1, a random port), the controllers, the scheduler and the
hollow nodes (the embedded starts of `supervisor.py`), writes a kubeconfig, loads the CRDs of
`Options.crd_dirs` and returns once the cluster is *ready*: every Node is Ready and the `default`
ServiceAccount of the `default` namespace exists (so a pod created at once is admitted). No
co-process is the admin (`identities.py`): the scheduler authenticates as system:kube-scheduler,
the controllers as system:kube-controller-manager and each of them then as its own ServiceAccount
(`Options.service_account_credentials`, on as kubeadm sets it), each kubelet as
system:node:<name> and the nodes host's shared reads as haru:nodes-host. Its own thread keeps the
cluster serving while the caller blocks in a synchronous client. `stop()` ends everything it
started. Called by `cluster/pytest_plugin.py` and `bench/controllers.py`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, TypeVar

import yaml
from aiohttp import web

from admission import assembly
from apiserver import runner
from apiserver.authentication import options as authn_options, signing_key
from client import errors as client_errors
from client import event_loop
from client import kubeconfig as client_kubeconfig
from client.resources import SERVICEACCOUNTS, Resource
from client.rest import RestClient
from cluster import admin_binding, certs, identities, kubeconfig, summary, supervisor
from controllers import builtin
from nodes import flags as node_flags
from nodes import pools
from controllers import features as controller_features
from scheduler import features as scheduler_features

T = TypeVar("T")
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
                namespaced=False)
READY_TIMEOUT = 30.0


@dataclass(frozen=True)
class Options:
    """The cluster's shape: hollow nodes (CPU-only unless `gpus_per_node`), gates, CRDs to load first."""

    nodes: int = 1
    gpus_per_node: int = 0
    gpu_model: str = "h100"
    pods_per_node: int = 110
    feature_gates: str = ""
    crd_dirs: tuple[str, ...] = ()
    grace_scale: float = node_flags.DEFAULT_GRACE_SCALE
    controllers: tuple[str, ...] = builtin.NAMES
    controller_settings: dict[str, dict[str, Any]] = field(default_factory=dict)  # e.g. a shorter grace period
    lease_duration: int = 40  # the kubelets' Lease, renewed at a quarter of it
    priority_and_fairness: bool = True  # kube-apiserver's --enable-priority-and-fairness
    service_account_credentials: bool = True  # kube-controller-manager's --use-service-account-credentials

    def shapes(self) -> list[pools.NodeShape]:
        model = self.gpu_model if self.gpus_per_node else "none"
        chosen = pools.default_pools(self.nodes, self.gpus_per_node, model)
        return pools.expand([_with_pods(p, self.pods_per_node) for p in chosen])


def _with_pods(pool: pools.Pool, pods: int) -> pools.Pool:
    return replace(pool, pods=pods)


@dataclass
class EmbeddedCluster:
    data_dir: str
    kubeconfig: str
    url: str
    token: str
    ca_pem: bytes
    node_names: list[str]
    _loop: asyncio.AbstractEventLoop
    _thread: threading.Thread
    _parts: list[Any] = field(default_factory=list)  # what stop() ends, last started first

    @classmethod
    def start(cls, data_dir: str, options: Options = Options()) -> "EmbeddedCluster":
        loop = (event_loop.loop_factory() or asyncio.new_event_loop)()
        thread = threading.Thread(target=loop.run_forever, name="haru-embedded", daemon=True)
        thread.start()
        parts: list[Any] = []
        future = asyncio.run_coroutine_threadsafe(_start(data_dir, options, parts), loop)
        try:
            url, path, token, ca_pem, names = future.result()
        except BaseException:
            asyncio.run_coroutine_threadsafe(_stop(parts), loop).result()
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
            raise
        return cls(data_dir, path, url, token, ca_pem, names, loop, thread, parts)

    def run(self, work: Callable[[RestClient], Awaitable[T]], timeout: float | None = None) -> T:
        """Run `work(client)` on the cluster's loop with a haru RestClient (for benches and helpers)."""
        async def call() -> T:
            async with RestClient(client_kubeconfig.load(self.kubeconfig), user_agent="haru-embedded") as rest:
                return await work(rest)
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(call(), self._loop)
        return future.result(timeout)

    def stop(self) -> None:
        if self._loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(_stop(self._parts), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


async def _start(data_dir: str, options: Options, parts: list[Any]) -> tuple[str, str, str, bytes, list[str]]:
    data_dir = os.path.abspath(data_dir)
    shapes = options.shapes()
    token = runner.new_token()
    pki = certs.ensure(data_dir)
    # The co-processes' own identities (identities.py): bearer tokens, their socket being plain HTTP.
    components = [(identities.SCHEDULER, ""), (identities.CONTROLLERS, ""), (identities.NODES_HOST, "")]
    tokens_path, tokens = identities.token_file(data_dir, components + [("node", s.name) for s in shapes])
    key_path = os.path.join(data_dir, "pki", "sa.key")
    signing = (asyncio.ensure_future(asyncio.to_thread(_service_account_key, key_path))
               if options.service_account_credentials else None)
    authentication = authn_options.Options(admin_token=token, service_account_key_file=key_path,
                                           token_auth_file=tokens_path)
    # The optional admission plugins run, as under `haru up` (a pod's ServiceAccount must exist).
    # No up-front disk reserve: it speeds up the durable commits of a long-lived store, but its 64
    # one-page transactions cost ~1 s of fdatasync here, more than a test cluster's whole life saves.
    running = await runner.start(data_dir, port=0, ssl_context=pki.ssl_context(), admin_token=token,
                                 feature_gates=options.feature_gates, admission_plugins=frozenset(assembly.OPTIONAL),
                                 priority_and_fairness=options.priority_and_fairness, store_reserve_bytes=0,
                                 authentication=authentication)
    parts.append(running)
    if signing is not None:
        await signing  # before anything asks for a token: the server reads the file on first use
    ca_pem = pki.ca_pem()
    path = os.path.join(data_dir, "kubeconfig")
    kubeconfig.write(path, running.url, token, ca_pem, pki.admin_certificate())
    # The co-processes here are tasks of this process: they reach the same application over a
    # plain-HTTP socket on loopback (same handlers, each with its own token). Over TLS their ~200
    # connections (one per watch) cost 0.6-1.9 s of handshakes on a busy 2-core machine against
    # 0.2-0.7 s in all. The admin's token there (`components.kubeconfig`) is this module's own.
    inner = web.TCPSite(running.runner, "127.0.0.1", 0, reuse_address=True)
    await inner.start()
    inner_port = inner._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    inner_url = f"http://127.0.0.1:{inner_port}"
    inner_path = os.path.join(data_dir, "components.kubeconfig")
    kubeconfig.write(inner_path, inner_url, token, None)
    paths = {component: identities.write_token_kubeconfig(data_dir, inner_url, component, tokens[(component, "")])
             for component, _ in components}
    for shape in shapes:
        identities.write_token_kubeconfig(data_dir, inner_url, "node", tokens[("node", shape.name)], shape.name)
    # Their kubeconfig has no CA (plain HTTP): the root CA publisher is told the cluster's.
    settings = {"root-ca-certificate-publisher": {"ca_pem": ca_pem}, **options.controller_settings}
    starts = [supervisor.start_controllers(paths[identities.CONTROLLERS], embedded=True, only=options.controllers,
                                          settings=settings,
                                          feature_gates=controller_features.select(options.feature_gates),
                                          service_account_credentials=options.service_account_credentials,
                                          # Each token when its controller first acts: all twenty at
                                          # start cost ~80 ms of this process's CPU, a quarter of a start.
                                          prefetch_tokens=False),
              supervisor.start_scheduler(paths[identities.SCHEDULER],
                                         feature_gates=scheduler_features.select(options.feature_gates),
                                         embedded=True)]
    if shapes:
        starts.append(_start_nodes(inner_path, paths[identities.NODES_HOST], data_dir, shapes, options))
    # The three are independent API clients: start them side by side, keep whichever started.
    started = await asyncio.gather(*starts, return_exceptions=True)
    parts.extend(s for s in started if not isinstance(s, BaseException))
    for outcome in started:
        if isinstance(outcome, BaseException):
            raise outcome
    async with RestClient(client_kubeconfig.load(inner_path), user_agent="haru-embedded") as rest:
        await admin_binding.ensure(rest)  # the admin kubeconfig's group, bound as kubeadm binds it
        await _load_crds(rest, options.crd_dirs)
        not_ready = await summary.wait_nodes_ready(rest, [s.name for s in shapes], timeout=READY_TIMEOUT)
        if not_ready:
            raise RuntimeError(f"nodes not Ready after {READY_TIMEOUT:.0f}s: {', '.join(not_ready)}")
        if "serviceaccount" in options.controllers:
            await _wait_default_service_account(rest)
    return running.url, path, token, ca_pem, [s.name for s in shapes]


# The controllers' tokens need the service-account key, which the server makes only when first
# asked: RSA, 0.05-0.3 s of CPU. The first embedded cluster of a process makes it on a thread while
# its server starts (the C code releases the GIL), and the next ones are given the same key, as a
# test session starts many clusters: a token still names its ServiceAccount's uid, so one
# cluster's tokens are refused by another. A data dir that has a key keeps it.
_KEY_LOCK = threading.Lock()
_shared_key: dict[str, bytes] = {}  # ".key" and ".pub" -> PEM


def _service_account_key(path: str) -> None:
    base = os.path.splitext(path)[0]
    with _KEY_LOCK:
        if os.path.exists(path):
            return
        if not _shared_key:
            signing_key.SigningKey(path).kid  # made and written, sa.pub beside it
            for suffix in (".key", ".pub"):
                with open(base + suffix, "rb") as f:
                    _shared_key[suffix] = f.read()
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        for suffix in (".pub", ".key"):
            partial = base + suffix + ".partial"
            with open(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
                f.write(_shared_key[suffix])
            os.replace(partial, base + suffix)


async def _start_nodes(admin_path: str, host_path: str, data_dir: str, shapes: list[pools.NodeShape],
                       options: Options) -> supervisor.Component:
    """The hollow nodes, once their host's role exists (granted with the admin's kubeconfig)."""
    async with RestClient(client_kubeconfig.load(admin_path), user_agent="haru-embedded") as rest:
        await identities.grant_nodes_host(rest)
    return await supervisor.start_nodes(host_path, shapes=shapes, shape_args=(), kubelet_port=0,
                                        state_dir=os.path.join(data_dir, "nodes"), grace_scale=options.grace_scale,
                                        embedded=True, lease_duration=options.lease_duration,
                                        kubelet_kubeconfig_dir=os.path.join(data_dir, "kubelets"))


async def _stop(parts: list[Any]) -> None:
    while parts:
        part = parts.pop()
        try:
            await part.stop()
        except Exception:  # noqa: BLE001 - stop the rest even when one part fails to
            pass
    # What a part left behind (a pod worker's deadline timer) must not outlive the cluster.
    leftovers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in leftovers:
        task.cancel()
    if leftovers:
        await asyncio.wait(leftovers, timeout=5)


def crd_documents(directory: str) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions in a directory's .yaml/.yml/.json files, as envtest's CRDDirectoryPaths."""
    found: list[dict[str, Any]] = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith((".yaml", ".yml", ".json")):
            continue
        with open(os.path.join(directory, name)) as f:
            for document in yaml.safe_load_all(f):
                if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition":
                    found.append(document)
    return found


async def _load_crds(rest: RestClient, directories: tuple[str, ...]) -> None:
    names = []
    for directory in directories:
        for document in crd_documents(directory):
            await rest.create(CRDS, document)
            names.append(document["metadata"]["name"])
    for name in names:  # served once Established, as envtest waits
        while True:
            crd = await rest.get(CRDS, name)
            conditions = (crd.get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
                break
            await asyncio.sleep(0.01)


async def _wait_default_service_account(rest: RestClient) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + READY_TIMEOUT
    while True:
        try:
            await rest.get(SERVICEACCOUNTS, "default", "default")
            return
        except client_errors.APIError as err:
            if not client_errors.is_not_found(err) or loop.time() > deadline:
                raise
        await asyncio.sleep(0.01)
