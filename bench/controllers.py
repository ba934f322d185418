"""`python -m bench.controllers [--quick]`: the controllers at scale, beside envtest's and kwok's figures.

Issue #12's benchmark table. `haru up` runs as a child (HTTPS, its controllers, scheduler and
hollow nodes as its co-processes); this process creates and deletes through `client.rest` and
times, over the same cluster:
1. a namespace holding N ConfigMaps: DELETE -> the namespace is gone (envtest: never, it has no
   namespace controller);
2. a Deployment of N replicas: create -> Available=True (kwok CI: 10k pods Running in 60 s);
3. an ownership tree of N ConfigMaps (a root, owners under it, leaves under them): background DELETE
   of the root -> every object gone (envtest: no garbage collector);
4. the `haru_cluster` fixture (`cluster/embedded.py`, in this process): start -> ready, median of K.
CPU seconds of each process (API server, controllers, scheduler, nodes, this one) per case come
from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import _api_report
from bench._api_report import Figure, Row
from bench._cpu import process_cpu_seconds
from bench._report import markdown_table
from client import errors, kubeconfig
from client.resources import CONFIGMAPS, DEPLOYMENTS, NAMESPACES
from client.rest import RestClient

REPO = Path(__file__).resolve().parents[1]
ENVTEST_START_SECONDS = (10.0, 15.0)  # issue #12: envtest's control plane (etcd + kube-apiserver) start
KWOK_PODS, KWOK_PODS_SECONDS = 10_000, 60.0  # measurements.md §2.1: kwok CI, pods Running
SERVING = re.compile(r"haru is serving (\S+); kubeconfig: (\S+)")
CONCURRENCY = 32


@dataclass(frozen=True)
class Sizes:
    namespace_objects: int
    replicas: int
    nodes: int  # haru up --nodes; 4 (the default) hold 440 pods at maxPods 110
    tree: int
    fixture_starts: int
    limit: float  # give up on a case after this long


FULL = Sizes(namespace_objects=1_000, replicas=1_000, nodes=10, tree=10_000, fixture_starts=20, limit=120.0)
QUICK = Sizes(namespace_objects=100, replicas=50, nodes=4, tree=500, fixture_starts=3, limit=60.0)


def progress(message: str) -> None:
    print(f"[bench.controllers] {message}", file=sys.stderr, flush=True)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _name_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return "?"
    if b"-m" in argv:
        return argv[argv.index(b"-m") + 1].decode()
    return os.path.basename(argv[0].decode())


class Processes:
    """haru up (the API server) and its co-processes, by name, and this process."""

    def __init__(self, haru_pid: int) -> None:
        self.pids = {"API server": haru_pid}
        for child in _children(haru_pid):
            self.pids[_name_of(child)] = child
        self.pids["bench (this process)"] = os.getpid()

    def sample(self) -> dict[str, float]:
        out = {}
        for name, pid in self.pids.items():
            try:
                out[name] = process_cpu_seconds(pid)
            except OSError:
                out[name] = math.nan
        return out


@dataclass
class Phase:
    name: str
    wall: float
    cpu: dict[str, float]


class Run:
    def __init__(self, sizes: Sizes, quick: bool, rest: RestClient, processes: Processes) -> None:
        self.sizes, self.quick, self.rest, self.processes = sizes, quick, rest, processes
        self.phases: list[Phase] = []

    def label(self, n: int) -> str:
        return f"{n:,} (--quick)" if self.quick else f"{n:,}"

    async def timed(self, phase: str, work: Callable[[], Awaitable[None]]) -> float:
        before, began = self.processes.sample(), time.perf_counter()
        try:
            await asyncio.wait_for(work(), self.sizes.limit)
            seconds = time.perf_counter() - began
        except asyncio.TimeoutError:
            seconds = math.nan
        after = self.processes.sample()
        self.phases.append(Phase(phase, time.perf_counter() - began, {k: after[k] - before[k] for k in after}))
        return seconds


async def _bounded(coros: list[Awaitable[Any]]) -> None:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(coro: Awaitable[Any]) -> None:
        async with gate:
            await coro

    await asyncio.gather(*(one(c) for c in coros))


async def _gone(check: Callable[[], Awaitable[bool]], interval: float = 0.02) -> None:
    while not await check():
        await asyncio.sleep(interval)


def _cm(name: str, owners: list[dict[str, Any]] | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    if owners:
        meta["ownerReferences"] = owners
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


async def namespace_row(run: Run) -> Row:
    n, rest = run.sizes.namespace_objects, run.rest
    ns = "bench-ns-delete"
    await rest.create(NAMESPACES, {"metadata": {"name": ns}})
    progress(f"creating {n:,} ConfigMaps in namespace {ns}")
    await _bounded([rest.create(CONFIGMAPS, _cm(f"cm-{i}"), ns) for i in range(n)])

    async def namespace_gone() -> bool:
        try:
            await rest.get(NAMESPACES, ns)
        except errors.APIError as err:
            if errors.is_not_found(err):
                return True
            raise
        return False

    async def delete() -> None:
        await rest.delete(NAMESPACES, ns)
        await _gone(namespace_gone)

    seconds = await run.timed(f"namespace of {n:,}: delete -> gone", delete)
    return Row(f"namespace with {run.label(n)} objects: delete -> gone", [Figure("", seconds, "s", 3.0, False)],
               "envtest: never (no namespace controller; stays Terminating)", None,
               ["timed from the DELETE of the namespace to the GET that answered 404"])


async def deployment_row(run: Run) -> Row:
    n, rest = run.sizes.replicas, run.rest
    labels = {"app": "bench-deploy"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bench-deploy"},
                  "spec": {"replicas": n, "selector": {"matchLabels": labels},
                           "template": {"metadata": {"labels": labels},
                                        "spec": {"containers": [{"name": "c", "image": "busybox",
                                                                 "resources": {"requests": {"cpu": "1m"}}}]}}}}

    async def available() -> bool:
        got = await rest.get(DEPLOYMENTS, "bench-deploy", "default")
        status = got.get("status") or {}
        return (status.get("availableReplicas") or 0) >= n and any(
            c.get("type") == "Available" and c.get("status") == "True" for c in status.get("conditions") or [])

    async def roll_out() -> None:
        await rest.create(DEPLOYMENTS, deployment, "default")
        await _gone(available, 0.05)

    seconds = await run.timed(f"Deployment of {n:,}: create -> Available", roll_out)
    anchor_seconds = KWOK_PODS_SECONDS * n / KWOK_PODS
    return Row(f"Deployment of {run.label(n)} replicas -> Available on {run.sizes.nodes} nodes",
               [Figure("", seconds, "s", 15.0, False)],
               f"kwok CI: {KWOK_PODS:,} pods Running in {KWOK_PODS_SECONDS:.0f} s (measurements 2.1) = "
               f"{anchor_seconds:.1f} s per {n:,}", anchor_seconds,
               [f"timed from the POST of the Deployment to a GET showing availableReplicas={n} and Available=True "
                f"(ReplicaSet controller, scheduler and kubelets all in the path); haru up --nodes {run.sizes.nodes}: "
                "the default 4 nodes hold 440 pods (maxPods 110)"])


async def gc_row(run: Run) -> Row:
    n, rest = run.sizes.tree, run.rest
    ns = "bench-gc"
    await rest.create(NAMESPACES, {"metadata": {"name": ns}})
    labels = {"tree": "bench"}
    root = await rest.create(CONFIGMAPS, _cm("root", labels=labels), ns)
    middle_count = max(1, int(math.sqrt(n)))
    leaves_each = max(0, (n - 1 - middle_count) // middle_count)
    progress(f"creating an ownership tree of {1 + middle_count + middle_count * leaves_each:,} ConfigMaps")

    def ref(obj: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}

    middles: list[dict[str, Any]] = []

    async def middle(i: int) -> None:
        middles.append(await rest.create(CONFIGMAPS, _cm(f"owner-{i}", [ref(root)], labels), ns))

    await _bounded([middle(i) for i in range(middle_count)])
    await _bounded([rest.create(CONFIGMAPS, _cm(f"{m['metadata']['name']}-leaf-{j}", [ref(m)], labels), ns)
                    for m in middles for j in range(leaves_each)])
    total = 1 + len(middles) + len(middles) * leaves_each

    async def tree_gone() -> bool:
        listed = await rest.list(CONFIGMAPS, ns, label_selector="tree=bench", limit=1)
        return not listed.get("items")

    async def delete() -> None:
        await rest.delete(CONFIGMAPS, "root", ns, propagation_policy="Background")
        await _gone(tree_gone, 0.05)

    seconds = await run.timed(f"GC of a {total:,}-object tree", delete)
    return Row(f"GC of a {run.label(total)}-object ownership tree (background)", [Figure("", seconds, "s", 10.0, False)],
               "envtest: none (no garbage collector)", None,
               [f"a root, {len(middles)} owners under it, {leaves_each} leaves under each; timed from the background "
                "DELETE of the root to a LIST of the tree's label that came back empty"])


def fixture_row(run: Run, work_dir: Path) -> Row:
    from cluster.embedded import EmbeddedCluster

    k = run.sizes.fixture_starts
    seconds: list[float] = []
    progress(f"starting the haru_cluster fixture's cluster {k} times in this process")
    for i in range(k):
        began = time.perf_counter()
        cluster = EmbeddedCluster.start(str(work_dir / f"fixture-{i}"))
        seconds.append(time.perf_counter() - began)
        cluster.stop()
    median = statistics.median(seconds)
    low, high = ENVTEST_START_SECONDS
    return Row(f"haru_cluster fixture ready, median of {run.label(k)}", [Figure("", median, "s", 1.0, False)],
               f"envtest: {low:.0f}-{high:.0f} s (issue #12)", low,
               [f"each start: {', '.join(f'{s:.2f}' for s in seconds)} s; ready = API server, controllers, "
                "scheduler and 1 node in this process, the Node Ready, default/default ServiceAccount present; "
                "ratio against the low end of envtest's range"])


def cpu_table(phases: list[Phase]) -> str:
    names = list(phases[0].cpu) if phases else []
    rows = [[p.name, f"{p.wall:.2f} s", *(f"{p.cpu[n]:.2f} s ({p.cpu[n] / p.wall:.2f} cores)" if p.wall else "-"
                                          for n in names)] for p in phases]
    return markdown_table(["phase", "wall", *(f"{n} CPU" for n in names)], rows)


def start_haru(data_dir: Path, nodes: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "cluster.cli", "up", "--data-dir", str(data_dir), "--port", "0",
                                "--nodes", str(nodes), "--gpu-model", "none"],
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
    assert process.stdout is not None
    for line in process.stdout:
        match = SERVING.search(line)
        if match:
            return process, match.group(2)
    process.wait()
    raise RuntimeError(f"haru up exited ({process.returncode}) before serving")


async def wait_nodes(rest: RestClient, count: int) -> None:
    from client.resources import NODES
    while True:
        listed = await rest.list(NODES)
        ready = [n for n in listed.get("items") or [] if any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in (n.get("status") or {}).get("conditions") or [])]
        if len(ready) >= count:
            return
        await asyncio.sleep(0.1)


async def cluster_rows(sizes: Sizes, quick: bool, process: subprocess.Popen[str], path: str) -> tuple[list[Row], Run]:
    async with RestClient(kubeconfig.load(path), user_agent="bench-controllers") as rest:
        await asyncio.wait_for(wait_nodes(rest, sizes.nodes), 60)
        await asyncio.sleep(1.0)  # the co-processes' informers settle
        run = Run(sizes, quick, rest, Processes(process.pid))
        rows: list[Row] = []
        for slug, case in (("namespace", namespace_row), ("deployment", deployment_row), ("gc", gc_row)):
            try:
                rows.append(await case(run))
            except Exception as exc:  # noqa: BLE001 - reported in the table, with the error
                progress(f"case {slug} failed: {type(exc).__name__}: {exc}")
                rows.append(Row(f"{slug}: not measured", [Figure("", math.nan, "")], "-", None,
                                [f"{type(exc).__name__}: {str(exc)[:1500]}"]))
        return rows, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.controllers", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    load = os.getloadavg()
    print(f"bench.controllers ({'quick' if args.quick else 'full'} run)")
    print(f"nproc: {len(os.sched_getaffinity(0))}    load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"sizes: {sizes}" + (" (--quick: a smoke run, not the issue's sizes)" if args.quick else ""))
    sys.stdout.flush()
    work_dir = Path(tempfile.mkdtemp(prefix="haru-ctrlbench-"))
    began = time.perf_counter()
    process, path = start_haru(work_dir / "haru", sizes.nodes)
    try:
        rows, run = asyncio.run(cluster_rows(sizes, args.quick, process, path))
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    try:
        rows.append(fixture_row(run, work_dir))
    except Exception as exc:  # noqa: BLE001 - reported in the table, with the error
        rows.append(Row("fixture: not measured", [Figure("", math.nan, "")], "-", None, [f"{exc}"[:1500]]))
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    _api_report.print_report(rows)
    print()
    print("CPU per process and case (utime + stime from /proc):")
    print(cpu_table(run.phases))
    load = os.getloadavg()
    print(f"run took {time.perf_counter() - began:.0f} s; load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
