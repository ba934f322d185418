"""`python -m bench.scheduler [--quick | --mid] [--profile DIR]`: scheduler_perf's workloads through haru's API, beside Go's figures.

Issue #11's benchmark table. Each workload gets a fresh API server child (`_apiserver_child`,
plain HTTP) and `python -m scheduler --kubeconfig K` as another child (plus `python -m
controllers` with the ResourceClaim controller for the DRA rows, as scheduler_perf runs that
controller); this process creates the objects as scheduler_perf's opcodes do (nodes without
kubelets, ResourceSlices for the DRA test driver) and watches the pods. SchedulingThroughput is
sampled per second over the measured pods only (`_throughput`, upstream's collector), and each
process's CPU over the measured phase is printed beside it; `--profile DIR` has py-spy sample the
scheduler child over each measured phase (`_profiling`). Anchors: measurements.md §2.4.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench import _api_report, _profiling, _scheduler_objects as objs
from bench._api_report import Figure, Row
from bench._nodes_side import write_kubeconfig
from bench._server_process import REPO, ServerProcess, child_env
from bench._throughput import Collector, Scheduled, Summary
from bench._report import markdown_table
from bench.nodes import Meter, Phase, source_revision


@dataclass(frozen=True)
class Sizes:
    basic: tuple[int, int, int]  # nodes, init pods, measured pods
    claims: tuple[int, int, int, int]  # nodes, devices per node, init pods, measured pods
    steady: tuple[int, int, int, float]  # nodes, devices per node, pods in flight, seconds
    preemption: tuple[int, int, int, float]  # nodes, low-priority init pods, measured pods, churn interval
    limit: float  # give up on a phase after this many seconds
    clients: int


FULL = Sizes(basic=(5_000, 1_000, 10_000), claims=(500, 10, 2_500, 2_500), steady=(500, 10, 10, 10.0),
             preemption=(5_000, 20_000, 5_000, 0.2), limit=600, clients=32)
# Small, but each measured phase must outlast the collector's first (dropped) second and give at
# least one sample on a fast machine (1,000 preemption pods once bound in under two seconds), and
# every measured pod must fit: a node holds 40 of them (4 CPUs, 100m each), 4 beside its
# low-priority pods in PreemptionAsync.
QUICK = Sizes(basic=(100, 20, 3_000), claims=(60, 10, 100, 500), steady=(20, 10, 5, 4.0),
              preemption=(600, 2_400, 2_000, 0.2), limit=90, clients=8)
# The cluster shapes (node and device counts) with fewer pods: a profile or a before/after
# check in a few minutes, where per-pod costs that grow with the cluster still show.
MID = Sizes(basic=(5_000, 200, 2_000), claims=(500, 10, 500, 1_000), steady=(500, 10, 10, 10.0),
            preemption=(5_000, 4_000, 1_000, 0.2), limit=300, clients=16)


@dataclass(frozen=True)
class Anchor:
    target: float  # the target for haru, pods/s
    go: float  # Go scheduler_perf's CI threshold (the floor), pods/s
    text: str


ANCHORS = {
    "basic": Anchor(400, 680, "Go scheduler_perf CI threshold 680 pods/s (SchedulingBasic/5000Nodes_10000Pods); "
                              "CL2 threshold 400 (measurements 2.4)"),
    "claims": Anchor(70, 40, 'Go floor 40 pods/s ("typically above 51"), 56 with QueueingHints ("typically above 70") '
                             "(SchedulingWithResourceClaimTemplate/5000pods_500nodes; measurements 2.4)"),
    "steady": Anchor(60, 60, "Go floor 60 pods/s, typically > 75 (issue #11; empty_500nodes' own floor is 64, "
                             "typically > 81; measurements 2.4)"),
    "preemption": Anchor(200, 570, "Go floor 570 pods/s (PreemptionAsync/5000Nodes; measurements 2.4)"),
}


def progress(message: str) -> None:
    print(f"[bench.scheduler {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Cluster:
    """One workload's processes and this process's connection to the API server."""

    sizes: Sizes
    work_dir: Path
    session: aiohttp.ClientSession
    apiserver: ServerProcess
    scheduler: ServerProcess | None = None
    controllers: ServerProcess | None = None
    notes: list[str] = field(default_factory=list)
    name: str = ""
    profile_dir: Path | None = None  # py-spy samples the scheduler over the measured phase

    @property
    def url(self) -> str:
        return self.apiserver.url

    def processes(self) -> dict[str, ServerProcess]:
        found = {"API server": self.apiserver}
        if self.scheduler is not None:
            found["scheduler"] = self.scheduler
        if self.controllers is not None:
            found["controllers"] = self.controllers
        return found

    def exited(self) -> str:
        """"" while the children run, else which one exited and its log's tail."""
        for proc in (self.scheduler, self.controllers):
            if proc is not None and proc.process.returncode is not None:
                tail = proc.log_path.read_text(errors="replace")[-1500:]
                return f"{proc.name} exited ({proc.process.returncode}); {proc.log_path}:\n{tail}"
        return ""


async def start_child(name: str, argv: list[str], log_path: Path) -> ServerProcess:
    with open(log_path, "wb") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable, *argv, cwd=str(REPO), env=child_env(), stdin=asyncio.subprocess.DEVNULL,
            stdout=log, stderr=log, start_new_session=True)
    return ServerProcess(process, log_path, name)


def claim_controller_name() -> str | None:
    """The ResourceClaim controller's name in `python -m controllers --controllers`, if it exists here."""
    from controllers import builtin

    return next((n for n in builtin.NAMES if "claim" in n.lower()), None)


@contextlib.asynccontextmanager
async def cluster(sizes: Sizes, work_dir: Path, notes: list[str], *, claims: bool) -> AsyncIterator[Cluster]:
    """A fresh API server and the scheduler (and the claim controller) for one workload, stopped after."""
    apiserver = await ServerProcess.start_apiserver(work_dir / "data")
    progress(f"API server serving {apiserver.url} (pid {apiserver.pid})")
    kubeconfig = write_kubeconfig(work_dir / "kubeconfig", apiserver.url)
    connector = aiohttp.TCPConnector(limit=0)
    ctx: Cluster | None = None
    try:
        async with aiohttp.ClientSession(connector=connector) as session:
            ctx = Cluster(sizes, work_dir, session, apiserver, notes=notes, name=work_dir.name,
                          profile_dir=PROFILE_DIR[0])
            ctx.scheduler = await start_child("scheduler", ["-m", "scheduler", "--kubeconfig", str(kubeconfig), "--secure-port", "0"],
                                              work_dir / "scheduler.log")
            if claims:
                name = claim_controller_name()
                if name is None:
                    raise RuntimeError("python -m controllers has no ResourceClaim controller on this branch")
                ctx.controllers = await start_child(
                    "controllers", ["-m", "controllers", "--kubeconfig", str(kubeconfig), "--controllers", name],
                    work_dir / "controllers.log")
            yield ctx
    finally:
        if ctx is not None:
            for proc in (ctx.scheduler, ctx.controllers):
                if proc is not None:
                    await proc.stop()
        await apiserver.stop()


class NotAllBound(RuntimeError):
    """The phase's time ran out before every pod was bound."""


async def wait_bound(ctx: Cluster, tally: Scheduled, count: int, what: str, limit: float | None = None) -> float:
    """Seconds until `count` pods of `tally` were bound; raises if a child exits or time runs out."""
    began, limit = time.perf_counter(), ctx.sizes.limit if limit is None else limit
    while len(tally.ever) < count:
        if (why := ctx.exited()):
            raise RuntimeError(why)
        if time.perf_counter() - began > limit:
            raise NotAllBound(f"{what}: {len(tally.ever):,} of {count:,} bound after {limit:.0f} s")
        await asyncio.sleep(0.05)
    return time.perf_counter() - began


async def create_nodes(ctx: Cluster, prefix: str, count: int, devices: int = 0) -> list[str]:
    names = [f"{prefix}{i}" for i in range(count)]
    progress(f"{ctx.name}: creating {count:,} Nodes" + (" and their ResourceSlices" if devices else ""))
    created = await objs.create_all(ctx.session, ctx.url, [objs.node(n) for n in names], ctx.sizes.clients)
    patched = await objs.ensure_node_status(ctx.session, ctx.url, names, ctx.sizes.clients)
    ctx.notes.append(created.describe("Nodes") + (f"; status PATCHed on {patched:,}" if patched else ""))
    if devices:
        slices = await objs.create_all(ctx.session, ctx.url, [objs.resource_slice(n, devices) for n in names],
                                       ctx.sizes.clients)
        ctx.notes.append(slices.describe(f"ResourceSlices ({devices} devices of {objs.DRIVER} each)"))
    if created.failed:
        raise RuntimeError(created.describe("Nodes"))
    return names


async def init_pods(ctx: Cluster, namespace: str, bodies: list[dict[str, Any]]) -> None:
    tally = Scheduled(ctx.url, namespace)
    await tally.start(ctx.session)
    progress(f"{ctx.name}: creating {len(bodies):,} init pods in {namespace} and waiting until all are bound")
    try:
        created = await objs.create_all(ctx.session, ctx.url, bodies, ctx.sizes.clients)
        # Upstream waits for the init pods as long as it takes; three phase limits here.
        seconds = await wait_bound(ctx, tally, len(bodies) - created.failed, f"init pods in {namespace}",
                                   3 * ctx.sizes.limit)
        ctx.notes.append(created.describe(f"init pods ({namespace})") + f"; all bound after {seconds:.1f} s")
    finally:
        await tally.stop()


@dataclass
class Measured:
    summary: Summary
    phase: Phase
    bound: int
    seconds: float


async def measure(ctx: Cluster, namespace: str, create: Callable[[Scheduled], Awaitable[int]],
                  on_bound: Callable[[dict[str, Any]], None] | None = None) -> Measured:
    """Run `create` (it returns how many bound pods end the phase) under the collector and the meter."""
    tally = Scheduled(ctx.url, namespace, on_bound)
    await tally.start(ctx.session)
    progress(f"{ctx.name}: measured phase in {namespace}")
    collector = Collector(lambda: len(tally.ever))
    meter = Meter(ctx.processes())
    begun = meter.begin(f"{ctx.name}: measured pods")
    started = time.perf_counter()
    collector.start()
    pid, profile_dir = (ctx.scheduler.pid, ctx.profile_dir) if ctx.scheduler is not None else (0, None)
    async with _profiling.profiled(pid, profile_dir, f"{ctx.name}-scheduler") as profile:
        try:
            target = await create(tally)
            try:
                await wait_bound(ctx, tally, target, f"measured pods in {namespace}")
            except NotAllBound as exc:
                # Keep the samples taken so far: a slow scheduler is a figure, not a missing one.
                ctx.notes.append(f"INCOMPLETE: {exc}; the figures cover the time until then")
        finally:
            summary = await collector.stop()
            await tally.stop()
    phase = meter.end(begun)
    if profile is not None:
        ctx.notes.extend(_profiling.top_frames(profile, 12))
    return Measured(summary, phase, len(tally.ever), time.perf_counter() - started)


def throughput_row(case: str, key: str, m: Measured, notes: list[str], created_per_second: float = 0.0) -> Row:
    anchor = ANCHORS[key]
    s = m.summary
    if created_per_second and s.average >= 0.9 * created_per_second:
        # scheduler_perf creates pods from client-go inside the test binary; here one Python
        # process POSTs them, and a scheduler that keeps up can only be measured at that rate.
        notes = notes + [f"the rate is bounded by pod creation: this process created the measured pods at "
                         f"{created_per_second:,.0f}/s"]
    figures = [Figure("", s.average, "pods/s", anchor.target), Figure("p50", s.p50, "pods/s"),
               Figure("p90", s.p90, "pods/s"), Figure("p99", s.p99, "pods/s")]
    figures += [Figure(f"{name} CPU", m.phase.cores(name), "cores") for name in m.phase.cpu if name != "bench (this process)"]
    notes = [f"SchedulingThroughput over {s.samples} one-second samples (Average, Perc50, Perc90, Perc99 as "
             f"scheduler_perf computes them); {m.bound:,} measured pods bound in {m.seconds:.1f} s"] + notes
    notes.append("CPU over the measured phase: " + ", ".join(
        f"{name} {sec:.1f} s ({sec / m.phase.wall:.2f} cores)" for name, sec in m.phase.cpu.items()))
    return Row(case, figures, anchor.text, anchor.go, notes)


def label(n: int, tag: str) -> str:
    """`tag`: "" for the issue's sizes, else the flag that shrank them ("--quick", "--mid")."""
    return f"{n:,}" + (f" ({tag})" if tag else "")


async def scheduling_basic(sizes: Sizes, work_dir: Path, tag: str, notes: list[str]) -> tuple[Row, Phase]:
    nodes, init, measured = sizes.basic
    async with cluster(sizes, work_dir, notes, claims=False) as ctx:
        for ns in ("init", "test"):
            await objs.create_one(ctx.session, ctx.url, objs.namespace(ns))
        await create_nodes(ctx, "scheduler-perf-", nodes)
        await init_pods(ctx, "init", [objs.pod(f"init-{i}", "init") for i in range(init)])

        async def create(_: Scheduled) -> int:
            made = await objs.create_all(ctx.session, ctx.url, [objs.pod(f"pod-{i}", "test") for i in range(measured)],
                                         sizes.clients)
            ctx.notes.append(made.describe("measured pods"))
            rate[0] = made.count / made.seconds if made.seconds else 0.0
            return measured - made.failed

        rate = [0.0]
        m = await measure(ctx, "test", create)
        case = f"SchedulingBasic {label(nodes, tag)} nodes, {init:,} init, {measured:,} measured pods"
        return throughput_row(case, "basic", m, ctx.notes, rate[0]), m.phase


async def _dra_objects(ctx: Cluster, nodes: int, devices: int, namespaces: tuple[str, ...]) -> None:
    for ns in namespaces:
        await objs.create_one(ctx.session, ctx.url, objs.namespace(ns))
    await create_nodes(ctx, "scheduler-perf-dra-", nodes, devices)
    await objs.create_one(ctx.session, ctx.url, objs.device_class())
    for ns in namespaces:
        await objs.create_one(ctx.session, ctx.url, objs.claim_template(ns))


async def with_claim_template(sizes: Sizes, work_dir: Path, tag: str, notes: list[str]) -> tuple[Row, Phase]:
    nodes, devices, init, measured = sizes.claims
    async with cluster(sizes, work_dir, notes, claims=True) as ctx:
        await _dra_objects(ctx, nodes, devices, ("init", "test"))
        await init_pods(ctx, "init", [objs.pod(f"init-{i}", "init", claim_template=objs.TEMPLATE) for i in range(init)])

        async def create(_: Scheduled) -> int:
            bodies = [objs.pod(f"pod-{i}", "test", claim_template=objs.TEMPLATE) for i in range(measured)]
            made = await objs.create_all(ctx.session, ctx.url, bodies, sizes.clients)
            ctx.notes.append(made.describe("measured pods"))
            rate[0] = made.count / made.seconds if made.seconds else 0.0
            return measured - made.failed

        rate = [0.0]
        m = await measure(ctx, "test", create)
        case = (f"SchedulingWithResourceClaimTemplate {label(nodes, tag)} nodes x {devices} devices, "
                f"{init:,} init, {measured:,} measured pods")
        return throughput_row(case, "claims", m, ctx.notes, rate[0]), m.phase


async def steady_state(sizes: Sizes, work_dir: Path, tag: str, notes: list[str]) -> tuple[Row, Phase]:
    nodes, devices, in_flight, seconds = sizes.steady
    async with cluster(sizes, work_dir, notes, claims=True) as ctx:
        await _dra_objects(ctx, nodes, devices, ("test",))
        counter = iter(range(10**9))
        churn: set[asyncio.Task[Any]] = set()
        deadline = [math.inf]

        async def replace(bound: dict[str, Any]) -> None:
            # As scheduler_perf's steadyState: a bound pod is deleted and a new one takes its place.
            await objs.delete_pod(ctx.session, ctx.url, "test", bound["metadata"]["name"])
            if time.perf_counter() < deadline[0]:
                await objs.create_one(ctx.session, ctx.url,
                                      objs.pod(f"pod-{next(counter)}", "test", claim_template=objs.TEMPLATE))

        def on_bound(bound: dict[str, Any]) -> None:
            task = asyncio.ensure_future(replace(bound))
            churn.add(task)
            task.add_done_callback(churn.discard)

        async def create(tally: Scheduled) -> int:
            deadline[0] = time.perf_counter() + seconds
            for _ in range(in_flight):
                await objs.create_one(ctx.session, ctx.url,
                                      objs.pod(f"pod-{next(counter)}", "test", claim_template=objs.TEMPLATE))
            while time.perf_counter() < deadline[0]:
                if (why := ctx.exited()):
                    raise RuntimeError(why)
                await asyncio.sleep(0.1)
            await asyncio.gather(*list(churn), return_exceptions=True)
            return len(tally.ever)

        m = await measure(ctx, "test", create, on_bound)
        case = (f"SteadyStateClusterResourceClaimTemplate {label(nodes, tag)} nodes x {devices} devices, "
                f"{in_flight} pods in flight for {seconds:.0f} s")
        return throughput_row(case, "steady", m, ctx.notes), m.phase


async def preemption_async(sizes: Sizes, work_dir: Path, tag: str, notes: list[str]) -> tuple[Row, Phase]:
    nodes, init, measured, interval = sizes.preemption
    async with cluster(sizes, work_dir, notes, claims=False) as ctx:
        for ns in ("init", "churn", "test"):
            await objs.create_one(ctx.session, ctx.url, objs.namespace(ns))
        for name, value in (("low-priority", 0), ("high-priority", 10)):
            await objs.create_one(ctx.session, ctx.url, objs.priority_class(name, value))
        await create_nodes(ctx, "scheduler-perf-", nodes)
        # 4 low-priority pods per node hold 3.6 of its 4 CPUs; victims go at once (no kubelet to wait for).
        await init_pods(ctx, "init", [objs.pod(f"low-{i}", "init", cpu="900m", priority_class="low-priority",
                                               priority=0, grace=0) for i in range(init)])
        churned = [0]

        async def churn() -> None:
            # scheduler_perf's churn opcode: a high-priority pod (3 CPU: it must preempt) every 200 ms.
            while True:
                await objs.create_one(ctx.session, ctx.url, objs.pod(
                    f"high-{churned[0]}", "churn", cpu="3", priority_class="high-priority", priority=10, grace=0))
                churned[0] += 1
                await asyncio.sleep(interval)

        async def create(_: Scheduled) -> int:
            made = await objs.create_all(ctx.session, ctx.url, [objs.pod(f"pod-{i}", "test") for i in range(measured)],
                                         sizes.clients)
            ctx.notes.append(made.describe("measured pods"))
            rate[0] = made.count / made.seconds if made.seconds else 0.0
            return measured - made.failed

        rate = [0.0]
        churning = asyncio.ensure_future(churn())
        try:
            m = await measure(ctx, "test", create)
        finally:
            churning.cancel()
            await asyncio.gather(churning, return_exceptions=True)
        ctx.notes.append(f"{churned[0]:,} high-priority preemptor pods created during the measured phase")
        case = f"PreemptionAsync {label(nodes, tag)} nodes, {init:,} low-priority init, {measured:,} measured pods"
        return throughput_row(case, "preemption", m, ctx.notes, rate[0]), m.phase


def cpu_table(phases: list[Phase]) -> str:
    names = list(dict.fromkeys(name for p in phases for name in p.cpu))
    header = ["phase", "wall"] + [f"{n} CPU" for n in names] + ["waiting for a CPU (per process)"]
    lines = []
    for p in phases:
        lines.append([p.name, f"{p.wall:.1f} s"]
                     + [f"{p.cpu[n]:.1f} s = {p.cores(n):.2f} cores" if n in p.cpu else "-" for n in names]
                     + [", ".join(f"{n} {w:.1f} s" for n, w in p.waited.items())])
    return markdown_table(header, lines)


WORKLOADS: list[tuple[str, Callable[[Sizes, Path, str, list[str]], Awaitable[tuple[Row, Phase]]]]] = [
    ("SchedulingBasic", scheduling_basic),
    ("SchedulingWithResourceClaimTemplate", with_claim_template),
    ("SteadyStateClusterResourceClaimTemplate", steady_state),
    ("PreemptionAsync", preemption_async),
]


_SIZE_NOTES = {"--quick": " (--quick: a smoke run, not the issue's sizes)",
               "--mid": " (--mid: the issue's cluster shapes, fewer pods)"}


def machine_facts(sizes: Sizes, tag: str) -> list[str]:
    load = os.getloadavg()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"nproc: {cpus}    load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        f"python: {platform.python_implementation()} {sys.version.split()[0]}; aiohttp {aiohttp.__version__}; "
        f"haru at {source_revision()}",
        f"sizes: SchedulingBasic {sizes.basic}, claims {sizes.claims}, steady {sizes.steady}, preemption "
        f"{sizes.preemption}" + _SIZE_NOTES.get(tag, ""),
        "processes per workload: a fresh API server (bench._apiserver_child), `python -m scheduler`, and for the DRA "
        "rows `python -m controllers` (ResourceClaim controller); this process creates objects and watches pods",
    ]


# `--profile DIR`, for the clusters `run` starts (the workloads' signature stays the same).
PROFILE_DIR: list[Path | None] = [None]


async def run(args: argparse.Namespace) -> int:
    sizes = QUICK if args.quick else MID if args.mid else FULL
    if args.preemption_size:
        sizes = dataclasses.replace(sizes, preemption=(*args.preemption_size, sizes.preemption[3]))
    if args.profile is not None and not _profiling.available():
        raise SystemExit("--profile needs py-spy on PATH (pip install py-spy)")
    PROFILE_DIR[0] = args.profile
    work_root = Path(tempfile.mkdtemp(prefix="haru-schedbench-", dir=args.dir))
    tag = "--quick" if args.quick else "--mid" if args.mid else ""
    print(f"bench.scheduler ({tag[2:] or 'full'} run)")
    for fact in machine_facts(sizes, tag):
        print(fact)
    sys.stdout.flush()
    began = time.perf_counter()
    rows: list[Row] = []
    phases: list[Phase] = []
    chosen = [w for w in WORKLOADS if not args.only or w[0] in args.only]
    try:
        for name, workload in chosen:
            progress(f"{name}: starting")
            work_dir = work_root / name
            work_dir.mkdir(parents=True)
            notes: list[str] = []  # what the workload did before it failed, if it does
            try:
                row, phase = await workload(sizes, work_dir, tag, notes)
                rows.append(row)
                phases.append(phase)
            except Exception as exc:  # noqa: BLE001 - reported in the table, with the error
                progress(f"{name} failed: {type(exc).__name__}: {exc}")
                rows.append(Row(f"{name}: not measured", [Figure("", math.nan, "pods/s", ANCHORS[_key(name)].target)],
                                ANCHORS[_key(name)].text, ANCHORS[_key(name)].go,
                                [f"{type(exc).__name__}: {str(exc)[:1500]}"] + notes))
    finally:
        if not args.keep:
            shutil.rmtree(work_root, ignore_errors=True)
    _api_report.print_report(rows)
    if phases:
        print()
        print("CPU per process over each measured phase (utime + stime from /proc; 'waiting' is schedstat run-queue time):")
        print(cpu_table(phases))
    load = os.getloadavg()
    print(f"run took {time.perf_counter() - began:.0f} s; load average at end: {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f} (2 cores shared: a high load means noisy figures)")
    if args.keep:
        print(f"logs and data kept in {work_root}")
    return 0


def _key(name: str) -> str:
    return {"SchedulingBasic": "basic", "SchedulingWithResourceClaimTemplate": "claims",
            "SteadyStateClusterResourceClaimTemplate": "steady", "PreemptionAsync": "preemption"}[name]


def _preemption_size(text: str) -> tuple[int, int, int]:
    parts = [int(part) for part in text.split(",")]
    if len(parts) != 3 or min(parts) <= 0:
        raise argparse.ArgumentTypeError("expected three positive counts: nodes,init pods,measured pods")
    return parts[0], parts[1], parts[2]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.scheduler", description=__doc__.splitlines()[0])
    sizing = parser.add_mutually_exclusive_group()
    sizing.add_argument("--quick", action="store_true", help="smoke run: tiny sizes of every workload")
    sizing.add_argument("--mid", action="store_true", help="the full cluster shapes with fewer pods")
    parser.add_argument("--profile", type=Path, default=None,
                        help="py-spy the scheduler over each measured phase, raw stacks into this dir")
    parser.add_argument("--only", action="append", default=[], choices=[w[0] for w in WORKLOADS],
                        help="run only this workload (repeatable)")
    parser.add_argument("--preemption-size", type=_preemption_size, default=None, metavar="NODES,INIT,MEASURED",
                        help="PreemptionAsync at another size (a mid-size run while profiling; the issue's is "
                             "5000,20000,5000)")
    parser.add_argument("--dir", type=Path, default=None, help="parent of the work dir (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs, data) afterwards")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
