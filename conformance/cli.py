"""`haru conformance` / `python -m conformance`: flags → runner → report.

The first version: `--kubeconfig`, `--focus`, `--skip`; prints one line per check and a count.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys

from client import kubeconfig
from conformance import registry, runner


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="haru conformance", description="Run the 1.36 conformance-style suite.")
    p.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config"))
    p.add_argument("--context", default=None)
    p.add_argument("--focus", default="", help="run only checks whose name matches this regex")
    p.add_argument("--skip", default="", help="leave out checks whose name matches this regex")
    return p


def select(checks: list[registry.Check], focus: str, skip: str) -> list[registry.Check]:
    chosen = [c for c in checks if not focus or re.search(focus, f"{c.name} {c.tags} [{c.area}]")]
    return [c for c in chosen if not skip or not re.search(skip, f"{c.name} {c.tags} [{c.area}]")]


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    config = kubeconfig.load(args.kubeconfig, args.context)
    checks = select(registry.all_checks(), args.focus, args.skip)
    results = asyncio.run(runner.run(checks, config))
    for result in results:
        print(f"{result.outcome:8} {result.seconds:6.2f}s  {result.check.name}")
        if result.outcome == runner.FAILED:
            print(f"         {result.message}")
            for exchange in result.exchanges[-3:]:
                print("         " + exchange.replace("\n", "\n         "))
    failed = sum(r.outcome == runner.FAILED for r in results)
    print(f"{len(results)} checks: {len(results) - failed} passed or skipped, {failed} failed")
    return 1 if failed else 0
