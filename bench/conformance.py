"""Issue #15's row: the whole conformance suite against `haru up`, beside a sonobuoy run.

Starts `haru up` as a child (HTTPS, its controllers, scheduler and 4 hollow nodes), waits for the
nodes, runs every registered check through `conformance.runner` (`--parallel N`, the CLI's
default), and prints wall time, checks per second and the outcome counts beside the anchor: the
published run time of upstream's conformance suite through sonobuoy's certified-conformance mode,
about 1-2 hours on a real cluster (issue #15; /work/shared/reference/measurements.md has no figure
of its own). The two suites differ in size and in what they exercise (upstream's also pulls
images and runs real containers), so the ratio compares the answer's wait, not work per check.
Then the CPU each process of `haru up` and this one spent during the run. `--quick` runs a sample.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._report import markdown_table
from bench.controllers import Processes, start_haru, wait_nodes
from client import kubeconfig
from client.rest import RestClient
from conformance import cli, registry, runner

ANCHOR_SECONDS = (3600.0, 7200.0)  # sonobuoy --mode certified-conformance, as issue #15 quotes it
QUICK_FOCUS = r"\[sig-apps\] (ReplicaSet|DisruptionController)"
NODES = 4


def progress(message: str) -> None:
    print(f"[bench.conformance] {message}", file=sys.stderr, flush=True)


async def _run(path: str, checks: list[registry.Check], parallel: int, haru_pid: int
               ) -> tuple[list[runner.Result], float, dict[str, float]]:
    config = kubeconfig.load(path)
    async with RestClient(config, user_agent="bench-conformance") as rest:
        await asyncio.wait_for(wait_nodes(rest, NODES), 60)
    processes = Processes(haru_pid)  # now that the co-processes run
    before, began = processes.sample(), time.perf_counter()
    results = await runner.run(checks, config, parallel=parallel)
    wall = time.perf_counter() - began
    after = processes.sample()
    return results, wall, {name: after[name] - before[name] for name in after}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.conformance", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only the checks matching {QUICK_FOCUS}: a smoke run")
    parser.add_argument("--parallel", type=int, default=cli.DEFAULT_PARALLEL, help="checks at once")
    args = parser.parse_args(argv)
    checks = registry.all_checks()
    if args.quick:
        checks = cli.select(checks, QUICK_FOCUS, "")
    load = os.getloadavg()
    print(f"bench.conformance ({'quick' if args.quick else 'full'} run): {len(checks)} checks, --parallel {args.parallel}")
    print(f"nproc: {len(os.sched_getaffinity(0))}    load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    sys.stdout.flush()
    work_dir = Path(tempfile.mkdtemp(prefix="haru-confbench-"))
    progress("starting haru up")
    process, path = start_haru(work_dir / "haru", NODES)
    try:
        progress(f"running {len(checks)} checks")
        results, wall, cpu = asyncio.run(_run(path, checks, args.parallel, process.pid))
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(work_dir, ignore_errors=True)
    counts = {o: sum(r.outcome == o for r in results) for o in (runner.PASSED, runner.FAILED, runner.SKIPPED)}
    low, high = ANCHOR_SECONDS
    label = "the whole suite" + (" (--quick sample)" if args.quick else "")
    print()
    print(markdown_table(["case", "haru", "anchor: sonobuoy certified-conformance", "ratio (anchor / haru)"], [
        [f"{label}: wall time", f"{wall:.1f} s", f"{low / 60:.0f}-{high / 60:.0f} min", f"{low / wall:.0f}-{high / wall:.0f}x"],
        [f"{label}: checks per second", f"{len(results) / wall:.2f}", "-", "-"],
        [f"{label}: outcomes", f"{counts[runner.PASSED]} passed, {counts[runner.FAILED]} failed, "
                               f"{counts[runner.SKIPPED]} skipped", "-", "-"]]))
    print()
    print("CPU per process during the run (utime + stime from /proc):")
    print(markdown_table(["process", "CPU", "cores"],
                         [[name, f"{seconds:.2f} s", f"{seconds / wall:.2f}"] for name, seconds in cpu.items()]))
    for result in results:
        if result.outcome == runner.FAILED:
            print(f"FAILED {result.check.name}: {result.message}")
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
