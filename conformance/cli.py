"""`haru conformance` / `python -m conformance`: flags → runner → reports.

Runs against the current context of `--kubeconfig` (default: the first file of $KUBECONFIG, else
~/.kube/config). `--list` prints the checks and the by-area table instead of running; `--sweep`
deletes what interrupted runs left. After a run: the summary table on stdout, and on request
JUnit XML (`--junit`), sonobuoy's `e2e.log` (`--e2e-log`), or both as sonobuoy lays them out
(`--results-dir DIR`: DIR/e2e.log and DIR/junit_01.xml). SIGINT/SIGTERM stop the run; the checks
in flight still clean up. Exit code 0 when nothing failed, 1 when something did, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import sys
import time

import aiohttp

from client import kubeconfig
from conformance import e2e_log, junit, progress, registry, runner, summary

DEFAULT_PARALLEL = 4  # API-bound checks: on 2 cores, 4 at once keeps both busy without starving the cluster


def default_kubeconfig() -> str:
    for path in (os.environ.get("KUBECONFIG") or "").split(os.pathsep):
        if path and os.path.exists(path):
            return path
    return os.path.expanduser("~/.kube/config")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="haru conformance", description="Run the Kubernetes 1.36 conformance-style suite.")
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", default=None, help="the cluster to test (default: $KUBECONFIG, else ~/.kube/config)")
    p.add_argument("--context", default=None, help="kubeconfig context (default: current-context)")
    p.add_argument("--focus", default="", metavar="REGEX", help="run only checks whose name, tags or [area] match")
    p.add_argument("--skip", default="", metavar="REGEX", help="leave out checks whose name, tags or [area] match")
    p.add_argument("--parallel", type=int, default=DEFAULT_PARALLEL, metavar="N",
                   help=f"checks at once (default {DEFAULT_PARALLEL}); serial checks run alone afterwards")
    p.add_argument("--junit", default=None, metavar="FILE", help="write JUnit XML here")
    p.add_argument("--e2e-log", default=None, metavar="FILE", help="write a sonobuoy-style e2e.log here")
    p.add_argument("--results-dir", default=None, metavar="DIR",
                   help="write DIR/e2e.log and DIR/junit_01.xml, as sonobuoy's e2e plugin does")
    p.add_argument("--list", action="store_true", help="print the selected checks and their counts by area; run nothing")
    p.add_argument("--summary-markdown", action="store_true",
                   help="print only the Markdown table of checks by area and kind (the README's)")
    p.add_argument("--sweep", action="store_true",
                   help="delete namespaces and cluster objects that interrupted runs left, then exit")


def select(checks: list[registry.Check], focus: str, skip: str) -> list[registry.Check]:
    chosen = [c for c in checks if not focus or re.search(focus, f"{c.name} {c.tags} [{c.area}]")]
    return [c for c in chosen if not skip or not re.search(skip, f"{c.name} {c.tags} [{c.area}]")]


def main(argv: list[str] | None = None) -> int:
    return run(parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    every = registry.all_checks()
    try:
        checks = select(every, args.focus, args.skip)
    except re.error as err:
        print(f"haru conformance: bad regular expression: {err}", file=sys.stderr)
        return 2
    if args.summary_markdown:
        print(summary.registry_markdown(checks))
        return 0
    if args.list:
        print(summary.listing(checks))
        print()
        print(summary.registry_markdown(checks))
        return 0
    path = args.kubeconfig or default_kubeconfig()
    try:
        config = kubeconfig.load(path, args.context)
    except (OSError, KeyError, ValueError) as err:
        print(f"haru conformance: cannot use kubeconfig {path}: {err}", file=sys.stderr)
        return 2
    if args.sweep:
        try:
            for what in asyncio.run(runner.sweep(config)):
                print(f"deleted {what}")
        except (aiohttp.ClientError, OSError) as err:
            print(f"haru conformance: cannot reach the cluster at {config.server}: {err}", file=sys.stderr)
            return 2
        return 0
    try:
        return asyncio.run(_run(args, checks, len(every), config))
    except (aiohttp.ClientError, OSError) as err:
        print(f"haru conformance: cannot reach the cluster at {config.server}: {err}", file=sys.stderr)
        return 2


async def _run(args: argparse.Namespace, checks: list[registry.Check], registered: int,
               config: kubeconfig.Config) -> int:
    live = progress.Progress(len(checks), sys.stdout)
    started_wall, started = time.time(), time.monotonic()
    gates = await runner.cluster_gates(config)
    task = asyncio.ensure_future(runner.run(checks, config, parallel=args.parallel, gates=gates, listener=live))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)  # a second signal changes nothing: cleanup is under way
    try:
        results = await task
    except asyncio.CancelledError:
        live.close()
        print(f"interrupted after {live.done} of {len(checks)} checks; the checks in flight cleaned up", file=sys.stderr)
        return 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    seconds = time.monotonic() - started
    live.close()
    _print_failures(results)
    print(summary.results_table(results))
    print(f"{len(results)} checks in {seconds:.1f}s; feature gates {gates.source}")
    _write_reports(args, results, registered, seconds, started_wall, config.server)
    return 1 if any(r.outcome == runner.FAILED for r in results) else 0


def _print_failures(results: list[runner.Result]) -> None:
    for result in results:
        if result.outcome != runner.FAILED:
            continue
        print(f"\nFAILED {result.check.name}\n  {result.message}")
        for exchange in result.exchanges[-3:]:  # the whole exchanges are in the JUnit XML and e2e.log
            short = "\n".join(line if len(line) <= 600 else line[:600] + "…" for line in exchange.splitlines())
            print("  " + short.replace("\n", "\n  "))
    print()


def _write_reports(args: argparse.Namespace, results: list[runner.Result], registered: int, seconds: float,
                   started_wall: float, server: str) -> None:
    xml = junit.render(results, seconds, started=started_wall)
    log = e2e_log.render(results, registered, seconds, cluster=server)
    targets: list[tuple[str, bytes]] = []
    if args.junit:
        targets.append((args.junit, xml))
    if args.e2e_log:
        targets.append((args.e2e_log, log.encode()))
    if args.results_dir:
        targets += [(os.path.join(args.results_dir, "junit_01.xml"), xml),
                    (os.path.join(args.results_dir, "e2e.log"), log.encode())]
    for target, data in targets:
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
