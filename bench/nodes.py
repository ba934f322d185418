"""`python -m bench.nodes`: haru's hollow kubelets at scale, beside kwok's and kubemark's figures.

Issue #10's benchmark table. The API server runs alone as one child (`_apiserver_child`, plain
HTTP) and `python -m nodes --nodes N --gpu-model none` as another (`_nodes_side`); this process only
watches and writes (`_nodes_watch`). Three cases, in order, over the same cluster:
1. from the nodes process's exec until every Node is Ready (a watch here counts them);
2. the steady state over a window: CPU seconds of each process from /proc, the nodes process's
   RSS divided by the node count, and the Lease renewals the window saw;
3. N pods created with `spec.nodeName` spread over the nodes (bound by hand, no scheduler) until
   every one is Running. Anchors are in measurements.md §2.1 (kwok) and §2.2 (kubemark).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from bench import _api_report, _nodes_side, _profiling
from bench._api_report import Figure, Row
from bench._nodes_watch import Tally, node_ready, pod_running
from bench._report import markdown_table
from bench._server_process import REPO, ServerProcess

# measurements.md §2.1: kwok's CI benchmark on a GitHub ubuntu-latest runner, normal API path.
KWOK_NODES, KWOK_NODES_SECONDS = 5_000, 60.0
KWOK_PODS, KWOK_PODS_SECONDS, KWOK_PODS_ETCD_SECONDS = 10_000, 60.0, 20.0
# measurements.md §2.2: kubemark's cost per HollowNode (kubemark-guide.md).
KUBEMARK_CORES_PER_NODE, KUBEMARK_MB_PER_NODE = 0.09, 220.0
LEASE_INTERVAL = 10.0  # the kubelet renews its Lease every leaseDurationSeconds / 4
NAMESPACE = "bench-nodes"


@dataclass(frozen=True)
class Sizes:
    nodes: int
    pods: int
    settle: float  # seconds after the last node is Ready before the steady window opens
    window: float  # steady-state window
    ready_limit: float  # give up waiting for Nodes / Pods after this long
    create_clients: int


FULL = Sizes(nodes=5_000, pods=10_000, settle=LEASE_INTERVAL, window=3 * LEASE_INTERVAL, ready_limit=300,
             create_clients=32)
QUICK = Sizes(nodes=200, pods=500, settle=2.0, window=LEASE_INTERVAL, ready_limit=60, create_clients=16)


def progress(message: str) -> None:
    print(f"[bench.nodes {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Phase:
    """CPU each process used over one phase of the run, from /proc (utime + stime, and schedstat)."""

    name: str
    wall: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # process -> CPU seconds
    waited: dict[str, float] = field(default_factory=dict)  # process -> seconds runnable, not running

    def cores(self, process: str) -> float:
        return self.cpu.get(process, math.nan) / self.wall if self.wall else math.nan


class Meter:
    """Samples the CPU and schedstat counters of the children and of this process around a phase."""

    def __init__(self, processes: dict[str, ServerProcess]) -> None:
        self.processes = processes
        self.phases: list[Phase] = []

    def _sample(self) -> tuple[float, dict[str, float], dict[str, float]]:
        cpu = {name: p.cpu_seconds() for name, p in self.processes.items()}
        waited = {name: p.scheduler_seconds()[1] for name, p in self.processes.items()}
        cpu["bench (this process)"] = time.process_time()
        return time.perf_counter(), cpu, waited

    def begin(self, name: str) -> tuple[str, tuple[float, dict[str, float], dict[str, float]]]:
        return name, self._sample()

    def end(self, begun: tuple[str, tuple[float, dict[str, float], dict[str, float]]],
            since: float | None = None) -> Phase:
        name, (wall0, cpu0, waited0) = begun
        wall1, cpu1, waited1 = self._sample()
        phase = Phase(name, wall1 - (wall0 if since is None else since),
                      # A child started during the phase (the nodes process) counts from zero.
                      {k: cpu1[k] - cpu0.get(k, 0.0) for k in cpu1},
                      {k: waited1[k] - waited0.get(k, 0.0) for k in waited1})
        self.phases.append(phase)
        return phase


def cpu_note(phase: Phase) -> str:
    return f"CPU over the case ({phase.wall:.1f} s): " + ", ".join(
        f"{name} {seconds:.1f} s ({seconds / phase.wall:.2f} cores)" for name, seconds in phase.cpu.items())


def cpu_table(phases: list[Phase]) -> str:
    names = list(phases[0].cpu) if phases else []
    header = ["phase", "wall"] + [f"{n} CPU" for n in names] + ["waiting for a CPU (nodes / API server)"]
    lines = []
    for p in phases:
        lines.append([p.name, f"{p.wall:.1f} s"]
                     + [f"{p.cpu[n]:.1f} s = {p.cores(n):.2f} cores" for n in names]
                     + [f"{p.waited.get('nodes', 0):.1f} s / {p.waited.get('API server', 0):.1f} s"])
    return markdown_table(header, lines)


@dataclass
class Run:
    sizes: Sizes
    quick: bool
    url: str
    session: aiohttp.ClientSession
    nodes: ServerProcess | None = None
    meter: Meter | None = None
    profile_dir: Path | None = None
    gpu_model: str = "none"
    node_names: list[str] = field(default_factory=list)

    @contextlib.asynccontextmanager
    async def profiled(self, slug: str, notes: list[str]) -> AsyncIterator[None]:
        """With --profile, py-spy samples both children meanwhile; their top frames go to `notes`."""
        assert self.nodes is not None and self.meter is not None
        apiserver = self.meter.processes["API server"]
        async with _profiling.profiled(self.nodes.pid, self.profile_dir, f"{slug}-nodes") as nodes_profile, \
                _profiling.profiled(apiserver.pid, self.profile_dir, f"{slug}-apiserver") as api_profile:
            yield
        for who, profile in (("nodes", nodes_profile), ("API server", api_profile)):
            if profile is not None:
                notes += [f"py-spy {who}: {line}" for line in _profiling.top_frames(profile)]

    def label(self, n: int) -> str:
        return f"{n:,}" + (" (--quick)" if self.quick else "")


async def ready_row(run: Run, work_dir: Path, apiserver: ServerProcess) -> Row:
    n = run.sizes.nodes
    tally = Tally(run.url, "/api/v1/nodes", node_ready)
    await tally.start(run.session)
    if tally.seen:
        raise RuntimeError(f"the cluster already has {len(tally.seen)} nodes before the nodes process started")
    progress(f"starting python -m nodes --nodes {n:,}; watching Nodes until all are Ready")
    run.meter = Meter({"API server": apiserver})
    begun = run.meter.begin("start -> all Nodes Ready")
    run.nodes, started = await _nodes_side.start_nodes(run.url, n, work_dir, run.gpu_model)
    run.meter.processes["nodes"] = run.nodes
    profile_notes: list[str] = []
    try:
        exited = asyncio.ensure_future(run.nodes.process.wait())
        async with run.profiled("nodes-ready", profile_notes):
            reached = await tally.wait_for(n, run.sizes.ready_limit, unless=exited)
        if not exited.done():
            exited.cancel()
            if run.nodes.process.returncode is not None:
                raise RuntimeError(f"the nodes process exited ({run.nodes.process.returncode}); see "
                                   f"{run.nodes.log_path}:\n{run.nodes.log_path.read_text(errors='replace')[-2000:]}")
        phase = run.meter.end(begun, since=started)
    finally:
        await tally.stop()
    run.node_names = sorted(tally.names)
    seconds = (reached - started) if reached is not None else math.nan
    notes = [f"timed from the exec of `python -m nodes --nodes {n} --gpu-model {run.gpu_model}` to the watch event that "
             f"made the {n:,}th Node Ready (watch in this process, opened before the exec)",
             f"Ready after {run.sizes.ready_limit:.0f} s: {len(tally.names):,} of {n:,}" if reached is None else
             f"{n / seconds:,.0f} nodes/s; kwok's CI bar is >= {KWOK_NODES / KWOK_NODES_SECONDS:.0f} nodes/s",
             cpu_note(phase)] + profile_notes
    anchor_seconds = KWOK_NODES_SECONDS * n / KWOK_NODES
    anchor = (f"kwok CI: {KWOK_NODES:,} Ready in {KWOK_NODES_SECONDS:.0f} s (measurements 2.1)"
              + (f" = {anchor_seconds:.1f} s per {n:,}" if n != KWOK_NODES else ""))
    return Row(f"{run.label(n)} hollow nodes: start -> all Ready", [Figure("", seconds, "s", 30.0, False)],
               anchor, anchor_seconds, notes)


async def steady_rows(run: Run) -> list[Row]:
    n, sizes = run.sizes.nodes, run.sizes
    assert run.nodes is not None and run.meter is not None
    progress(f"steady state: {sizes.settle:.0f} s to settle, then a {sizes.window:.0f} s window")
    await asyncio.sleep(sizes.settle)
    leases = Tally(run.url, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lambda _: True)
    await leases.start(run.session)
    nodes_watch = Tally(run.url, "/api/v1/nodes", node_ready)
    await nodes_watch.start(run.session)
    profile_notes: list[str] = []
    try:
        begun = run.meter.begin(f"steady state, {n:,} nodes")
        async with run.profiled("steady", profile_notes):
            await asyncio.sleep(sizes.window)
        phase = run.meter.end(begun)
        memory = run.nodes.memory()
    finally:
        await leases.stop()
        await nodes_watch.stop()
    cores = phase.cores("nodes")
    per_node_kb = memory.rss * 1e3 / n
    renewals = leases.modified / phase.wall
    api_cores = phase.cores("API server")
    lease_note = (f"{leases.modified:,} Lease renewals seen in the window = {renewals:,.0f}/s (every node every "
                  f"{LEASE_INTERVAL:.0f} s would be {n / LEASE_INTERVAL:,.0f}/s); {nodes_watch.modified:,} Node "
                  f"updates; {len(nodes_watch.names):,} of {n:,} Nodes Ready at the end")
    cpu_row = Row(
        f"steady state, {run.label(n)} nodes: CPU of the nodes process",
        [Figure("", cores, "cores", 1.0, False), Figure("per node", 1e3 * cores / n, "millicores"),
         Figure("API server", api_cores, "cores")],
        f"kubemark: {KUBEMARK_CORES_PER_NODE} core per hollow node (measurements 2.2) = "
        f"{KUBEMARK_CORES_PER_NODE * n:,.0f} cores per {n:,}", KUBEMARK_CORES_PER_NODE * n,
        [lease_note, cpu_note(phase)] + profile_notes)
    rss_row = Row(
        f"steady state, {run.label(n)} nodes: RSS of the nodes process per node",
        [Figure("", per_node_kb, "KB", 50.0, False), Figure("whole process", memory.rss, "MB")],
        f"kubemark: {KUBEMARK_MB_PER_NODE:.0f} MB per hollow node (measurements 2.2)", KUBEMARK_MB_PER_NODE * 1e3,
        [f"the whole process's RSS over {n:,} nodes (the interpreter's own ~30-40 MB included): {memory.describe()}",
         f"API server beside it: {run.meter.processes['API server'].memory().describe()}"])
    return [cpu_row, rss_row]


async def pods_row(run: Run) -> Row:
    n, nodes = run.sizes.pods, run.node_names
    assert run.nodes is not None and run.meter is not None
    await _nodes_side.create_namespace(run.session, run.url, NAMESPACE)
    tally = Tally(run.url, f"/api/v1/namespaces/{NAMESPACE}/pods", pod_running)
    await tally.start(run.session)
    progress(f"creating {n:,} pods bound by hand over {len(nodes):,} nodes, {run.sizes.create_clients} clients; "
             f"watching until all are Running")
    profile_notes: list[str] = []
    try:
        begun = run.meter.begin(f"{n:,} pods: first create -> all Running")
        started = time.perf_counter()
        async with run.profiled("pods-running", profile_notes):
            creates = await _nodes_side.create_pods(run.session, run.url, NAMESPACE, nodes, n,
                                                    run.sizes.create_clients)
            progress(creates.describe())
            reached = await tally.wait_for(n - creates.failed, run.sizes.ready_limit)
        phase = run.meter.end(begun, since=started)
    finally:
        await tally.stop()
    seconds = (reached - started) if reached is not None and not creates.failed else math.nan
    notes = [f"timed from the first POST (each Pod carries spec.nodeName, {n / len(nodes):.1f} per node) to the "
             f"watch event that made the {n:,}th Running; {creates.describe()}",
             f"Running after {run.sizes.ready_limit:.0f} s: {len(tally.names):,} of {n:,}" if reached is None else
             f"{n / seconds:,.0f} pods/s; kwok's CI bar is >= {KWOK_PODS / KWOK_PODS_SECONDS:.0f} pods/s"
             if not math.isnan(seconds) else "some creates failed: no figure",
             f"{tally.modified:,} Pod updates watched ({tally.modified / n:.1f} per pod: the kubelets' status writes)",
             cpu_note(phase)] + profile_notes
    anchor_seconds = KWOK_PODS_SECONDS * n / KWOK_PODS
    anchor = (f"kwok CI: {KWOK_PODS:,} Running in {KWOK_PODS_SECONDS:.0f} s ({KWOK_PODS_ETCD_SECONDS:.0f} s writing "
              f"etcd directly; measurements 2.1)" + (f" = {anchor_seconds:.1f} s per {n:,}" if n != KWOK_PODS else ""))
    return Row(f"{run.label(n)} pods bound by hand -> all Running", [Figure("", seconds, "s", 30.0, False)],
               anchor, anchor_seconds, notes)


def source_revision() -> str:
    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "unknown (not a git checkout)"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "apiserver", "storage", "nodes", "client")
    return head + (" + uncommitted changes in apiserver/storage/nodes/client" if dirty else "")


def machine_facts(sizes: Sizes, quick: bool, gpu_model: str) -> list[str]:
    load = os.getloadavg()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"nproc: {cpus}    load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        f"python: {platform.python_implementation()} {sys.version.split()[0]}; aiohttp {aiohttp.__version__}; "
        f"haru at {source_revision()}",
        f"sizes: {sizes.nodes:,} nodes (--gpu-model {gpu_model}), {sizes.pods:,} pods, steady window {sizes.window:.0f} s"
        + (" (--quick: a smoke run, not the issue's 5,000 nodes and 10,000 pods)" if quick else ""),
        "processes: the API server alone (bench._apiserver_child, plain HTTP) and `python -m nodes` are "
        "separate children; this process watches Nodes, Leases and Pods and creates the Pods",
    ]


async def unmeasured_on_error(slug: str, measure: object) -> list[Row]:
    try:
        result = await measure  # type: ignore[misc]
    except Exception as exc:  # noqa: BLE001 - reported in the table, with the error
        progress(f"case {slug} failed: {type(exc).__name__}: {exc}")
        return [Row(f"{slug}: not measured", [Figure("", math.nan, "")], "-", None,
                    [f"{type(exc).__name__}: {str(exc)[:1500]}"])]
    return result if isinstance(result, list) else [result]


async def run(args: argparse.Namespace) -> int:
    if args.profile is not None and not _profiling.available():
        print("bench.nodes: --profile needs py-spy on PATH (pip install py-spy)", file=sys.stderr)
        return 2
    sizes = QUICK if args.quick else FULL
    if args.nodes:
        sizes = Sizes(args.nodes, args.pods or sizes.pods, sizes.settle, sizes.window, sizes.ready_limit,
                      sizes.create_clients)
    work_dir = Path(tempfile.mkdtemp(prefix="haru-nodesbench-", dir=args.dir))
    print(f"bench.nodes ({'quick' if args.quick else 'full'} run)")
    for fact in machine_facts(sizes, args.quick, args.gpu_model):
        print(fact)
    sys.stdout.flush()
    began = time.perf_counter()
    rows: list[Row] = []
    apiserver = await ServerProcess.start_apiserver(work_dir / "data")
    progress(f"API server serving {apiserver.url} (pid {apiserver.pid}) after {apiserver.ready_after:.2f} s")
    connector = aiohttp.TCPConnector(limit=0)
    ctx: Run | None = None
    try:
        async with aiohttp.ClientSession(connector=connector) as session:
            ctx = Run(sizes, args.quick, apiserver.url, session, profile_dir=args.profile, gpu_model=args.gpu_model)
            rows += await unmeasured_on_error("nodes-ready", ready_row(ctx, work_dir, apiserver))
            if ctx.node_names:
                rows += await unmeasured_on_error("steady", steady_rows(ctx))
                rows += await unmeasured_on_error("pods-running", pods_row(ctx))
    finally:
        if ctx is not None and ctx.nodes is not None:
            await ctx.nodes.stop()
        await apiserver.stop()
        if not args.keep:
            shutil.rmtree(work_dir, ignore_errors=True)
    _api_report.print_report(rows)
    if ctx is not None and ctx.meter is not None and ctx.meter.phases:
        print()
        print("CPU per process and phase (utime + stime from /proc; 'waiting' is schedstat run-queue time):")
        print(cpu_table(ctx.meter.phases))
    load = os.getloadavg()
    print(f"run took {time.perf_counter() - began:.0f} s; load average at end: {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f} (2 cores shared: a high load means noisy figures)")
    if args.keep:
        print(f"logs and data kept in {work_dir}")
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.nodes", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke run: {QUICK.nodes} nodes and {QUICK.pods} pods (about 30 s)")
    parser.add_argument("--nodes", type=int, default=0, help="override the node count (for profiling)")
    parser.add_argument("--pods", type=int, default=0, help="override the pod count (with --nodes)")
    parser.add_argument("--gpu-model", default="none",
                        help="the nodes' --gpu-model (default none, the issue's case; a model puts 8 GPUs on half)")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="sample both children with py-spy during each case; collapsed stacks go to "
                             "DIR/<case>-nodes.txt and DIR/<case>-apiserver.txt, top frames into the notes")
    parser.add_argument("--dir", type=Path, default=None, help="parent of the work dir (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs, data) afterwards")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
